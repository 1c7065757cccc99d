package programfiles

import (
	"io/fs"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// cudnnDirs are the builtin pack's cuDNN globs (builtin/packs/nvidia.toml); the host test in this
// package checks the pack itself.
var cudnnDirs = []string{"NVIDIA/CUDNN/v9.*/bin/*/{triple}", "NVIDIA/CUDNN/v9.*/bin/*", "NVIDIA/CUDNN/v9.*/bin"}

func cudnn() abi.Descriptor {
	return abi.Descriptor{
		Name:                    "cudnn",
		LinuxSonames:            []string{"libcudnn.so.9"},
		WindowsDLLs:             []string{"cudnn64_9.dll"},
		ProgramFilesDirsWindows: cudnnDirs,
	}
}

var (
	win64    = abi.Platform{OS: "windows", Arch: "amd64"}
	winArm64 = abi.Platform{OS: "windows", Arch: "arm64"}
	linux64  = abi.Platform{OS: "linux", Arch: "amd64", Libc: "glibc"}
)

func TestSearch(t *testing.T) {
	dll := &fstest.MapFile{Data: []byte("MZ")}
	dir := &fstest.MapFile{Mode: fs.ModeDir | 0o755}
	pf := map[string]string{"ProgramW6432": "/pf"}
	tests := []struct {
		name     string
		env      map[string]string
		platform abi.Platform
		lib      func(*abi.Descriptor) // changes to cudnn()
		kind     abi.Kind
		files    fstest.MapFS
		want     []string // candidate paths, in order
		tried    []string // each is "path: reason substring" some attempt matches
		noTried  bool     // the response records nothing at all
	}{
		{
			name: "v9.10 before v9.9",
			env:  pf,
			files: fstest.MapFS{
				"pf/NVIDIA/CUDNN/v9.9/bin/12.8/cudnn64_9.dll":      dll,
				"pf/NVIDIA/CUDNN/v9.10/bin/12.9/x64/cudnn64_9.dll": dll,
			},
			want: []string{"/pf/NVIDIA/CUDNN/v9.10/bin/12.9/x64/cudnn64_9.dll", "/pf/NVIDIA/CUDNN/v9.9/bin/12.8/cudnn64_9.dll"},
		},
		{
			name: "every layout of a version before an older version; newest CUDA first",
			env:  pf,
			files: fstest.MapFS{
				"pf/NVIDIA/CUDNN/v9.1/bin/12.4/x64/cudnn64_9.dll": dll,
				"pf/NVIDIA/CUDNN/v9.2/bin/cudnn64_9.dll":          dll,
				"pf/NVIDIA/CUDNN/v9.2/bin/11.8/cudnn64_9.dll":     dll,
				"pf/NVIDIA/CUDNN/v9.2/bin/12.10/cudnn64_9.dll":    dll,
				"pf/NVIDIA/CUDNN/v9.2/bin/12.9/x64/cudnn64_9.dll": dll,
			},
			want: []string{
				"/pf/NVIDIA/CUDNN/v9.2/bin/12.10/cudnn64_9.dll",
				"/pf/NVIDIA/CUDNN/v9.2/bin/12.9/x64/cudnn64_9.dll",
				"/pf/NVIDIA/CUDNN/v9.2/bin/11.8/cudnn64_9.dll",
				"/pf/NVIDIA/CUDNN/v9.2/bin/cudnn64_9.dll",
				"/pf/NVIDIA/CUDNN/v9.1/bin/12.4/x64/cudnn64_9.dll",
			},
			tried: []string{"/pf/NVIDIA/CUDNN/v9.2/bin/12.10/x64: no such directory", "/pf/NVIDIA/CUDNN/v9.2/bin/12.9: none of cudnn64_9.dll"},
		},
		{
			name:     "arm64 searches the arm64 directories, and the layouts without an architecture",
			env:      pf,
			platform: winArm64,
			files: fstest.MapFS{
				"pf/NVIDIA/CUDNN/v9.22/bin/13.2/x64/cudnn64_9.dll":   dll,
				"pf/NVIDIA/CUDNN/v9.22/bin/13.2/arm64/cudnn64_9.dll": dll,
				"pf/NVIDIA/CUDNN/v9.7/bin/12.8/cudnn64_9.dll":        dll,
			},
			want: []string{"/pf/NVIDIA/CUDNN/v9.22/bin/13.2/arm64/cudnn64_9.dll", "/pf/NVIDIA/CUDNN/v9.7/bin/12.8/cudnn64_9.dll"},
		},
		{
			name: "x64 searches the x64 directories",
			env:  pf,
			files: fstest.MapFS{
				"pf/NVIDIA/CUDNN/v9.22/bin/13.2/x64/cudnn64_9.dll":   dll,
				"pf/NVIDIA/CUDNN/v9.22/bin/13.2/arm64/cudnn64_9.dll": dll,
			},
			want: []string{"/pf/NVIDIA/CUDNN/v9.22/bin/13.2/x64/cudnn64_9.dll"},
		},
		{
			name:  "names match case-insensitively on a Windows target",
			env:   pf,
			files: fstest.MapFS{"pf/Nvidia/cuDNN/V9.10/BIN/12.9/X64/CUDNN64_9.DLL": dll, "pf/Nvidia/cuDNN/v9.9/Bin/12.8/cudnn64_9.dll": dll},
			want:  []string{"/pf/Nvidia/cuDNN/V9.10/BIN/12.9/X64/CUDNN64_9.DLL", "/pf/Nvidia/cuDNN/v9.9/Bin/12.8/cudnn64_9.dll"},
		},
		{
			name:  "ProgramFiles when ProgramW6432 is unset",
			env:   map[string]string{"ProgramFiles": "/pf86"},
			files: fstest.MapFS{"pf86/NVIDIA/CUDNN/v9.1/bin/12.4/cudnn64_9.dll": dll},
			want:  []string{"/pf86/NVIDIA/CUDNN/v9.1/bin/12.4/cudnn64_9.dll"},
			tried: []string{"$ProgramW6432: not set"},
		},
		{
			name:  "ProgramW6432 hides ProgramFiles",
			env:   map[string]string{"ProgramW6432": "/pf", "ProgramFiles": "/pf86"},
			files: fstest.MapFS{"pf86/NVIDIA/CUDNN/v9.1/bin/12.4/cudnn64_9.dll": dll, "pf/NVIDIA/CUDNN": dir},
			tried: []string{"/pf/NVIDIA/CUDNN/v9.*: no directory matches"},
		},
		{
			name:  "neither variable set",
			files: fstest.MapFS{"pf/NVIDIA/CUDNN/v9.1/bin/12.4/cudnn64_9.dll": dll},
			tried: []string{"$ProgramW6432: not set", "$ProgramFiles: not set"},
		},
		{
			name:  "a relative ProgramW6432 is refused, not resolved against the working directory",
			env:   map[string]string{"ProgramW6432": "pf", "ProgramFiles": "/pf"},
			files: fstest.MapFS{"pf/NVIDIA/CUDNN/v9.1/bin/12.4/cudnn64_9.dll": dll},
			tried: []string{"pf: $ProgramW6432 is a relative path: refused"},
		},
		{
			name:     "not searched for a Linux target",
			env:      pf,
			platform: linux64,
			files:    fstest.MapFS{"pf/NVIDIA/CUDNN/v9.1/bin/12.4/libcudnn.so.9": dll},
			noTried:  true,
		},
		{
			name:    "a library that declares no globs",
			env:     pf,
			lib:     func(l *abi.Descriptor) { l.ProgramFilesDirsWindows = nil },
			files:   fstest.MapFS{"pf/NVIDIA/CUDNN/v9.1/bin/12.4/cudnn64_9.dll": dll},
			noTried: true,
		},
		{
			name: "odd version names: a number before text, a release before its pre-release",
			env:  pf,
			lib:  func(l *abi.Descriptor) { l.ProgramFilesDirsWindows = []string{"Vendor/Product/v*"} },
			files: fstest.MapFS{
				"pf/Vendor/Product/vfoo/cudnn64_9.dll":     dll,
				"pf/Vendor/Product/v9.x-rc/cudnn64_9.dll":  dll,
				"pf/Vendor/Product/v10/cudnn64_9.dll":      dll,
				"pf/Vendor/Product/v9.9/cudnn64_9.dll":     dll,
				"pf/Vendor/Product/v9.9-rc1/cudnn64_9.dll": dll,
				"pf/Vendor/Product/v9.10/cudnn64_9.dll":    dll,
				"pf/Vendor/Product/v9.11":                  dll, // a file, not a directory
			},
			want: []string{
				"/pf/Vendor/Product/v10/cudnn64_9.dll",
				"/pf/Vendor/Product/v9.10/cudnn64_9.dll",
				"/pf/Vendor/Product/v9.9/cudnn64_9.dll",
				"/pf/Vendor/Product/v9.9-rc1/cudnn64_9.dll",
				"/pf/Vendor/Product/v9.x-rc/cudnn64_9.dll",
				"/pf/Vendor/Product/vfoo/cudnn64_9.dll",
			},
		},
		{
			name: "globs that are not clean relative paths are refused; the rest are walked",
			env:  pf,
			lib: func(l *abi.Descriptor) {
				l.ProgramFilesDirsWindows = []string{"/abs/bin", `NVIDIA\CUDNN`, "../up", "NVIDIA/./CUDNN", "NVIDIA/CUDNN/v[9", "", "NVIDIA/CUDNN/v9.*/bin"}
			},
			files: fstest.MapFS{"pf/NVIDIA/CUDNN/v9.1/bin/cudnn64_9.dll": dll},
			want:  []string{"/pf/NVIDIA/CUDNN/v9.1/bin/cudnn64_9.dll"},
			tried: []string{
				"/abs/bin: refused: an absolute path",
				`NVIDIA\CUDNN: refused: has a backslash`,
				"../up: refused: not a clean relative path",
				"NVIDIA/./CUDNN: refused: not a clean relative path",
				"NVIDIA/CUDNN/v[9: refused: a malformed pattern",
				": refused: empty",
			},
		},
		{
			name: "a directory reached by two globs is searched once",
			env:  pf,
			lib: func(l *abi.Descriptor) {
				l.ProgramFilesDirsWindows = []string{"NVIDIA/CUDNN/v9.1/bin", "NVIDIA/CUDNN/v9.*/bin"}
			},
			files: fstest.MapFS{"pf/NVIDIA/CUDNN/v9.1/bin/cudnn64_9.dll": dll},
			want:  []string{"/pf/NVIDIA/CUDNN/v9.1/bin/cudnn64_9.dll"},
		},
		{
			name: "a header set's directory",
			env:  pf,
			kind: abi.KindHeaderDir,
			lib: func(l *abi.Descriptor) {
				*l = abi.Descriptor{Name: "cudnn", WindowsFiles: []string{"cudnn.h"}, ProgramFilesDirsWindows: []string{"NVIDIA/CUDNN/v9.*/include/*", "NVIDIA/CUDNN/v9.*/include"}}
			},
			files: fstest.MapFS{"pf/NVIDIA/CUDNN/v9.1/include/12.4/cudnn.h": dll, "pf/NVIDIA/CUDNN/v9.1/include/11.8/cudnn.h": dll},
			want:  []string{"/pf/NVIDIA/CUDNN/v9.1/include/12.4", "/pf/NVIDIA/CUDNN/v9.1/include/11.8"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib := cudnn()
			if tt.lib != nil {
				tt.lib(&lib)
			}
			plat := tt.platform
			if plat.OS == "" {
				plat = win64
			}
			kind := tt.kind
			if kind == "" {
				kind = abi.KindDynamicLib
			}
			env := abi.Env{FS: tt.files, Getenv: func(k string) string { return tt.env[k] }}
			resp := Search(env, &abi.Request{ABI: abi.Version, Step: "programfiles", Kind: kind, Platform: plat, Library: lib})
			var got []string
			for _, c := range resp.Candidates {
				got = append(got, c.Path)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("candidates\n  %s\nwant\n  %s\ntried %+v", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "), resp.Tried)
			}
			var tried []string
			for _, a := range resp.Tried {
				tried = append(tried, a.Path+": "+a.Reason)
			}
			for _, want := range tt.tried {
				path, reason, _ := strings.Cut(want, ": ")
				if !slices.ContainsFunc(resp.Tried, func(a abi.Attempt) bool {
					return a.Path == path && strings.Contains(a.Reason, reason)
				}) {
					t.Errorf("no attempt %q in\n  %s", want, strings.Join(tried, "\n  "))
				}
			}
			if tt.noTried && len(resp.Tried) > 0 {
				t.Errorf("tried %v, want nothing", tried)
			}
			if resp.Error != "" {
				t.Errorf("error %q", resp.Error)
			}
		})
	}
}

func TestNewestFirst(t *testing.T) {
	tests := []struct {
		name string
		want []string // in order
	}{
		{"minor versions by value", []string{"v10", "v9.10", "v9.9", "v9.1", "v9.0"}},
		{"odd names", []string{"v10", "v9.10", "v9.9", "v9.9-rc1", "v9.x-rc", "vfoo"}},
		{"a further dotted number first, a qualifier after", []string{"v9.10.1", "v9.10", "v9.10-rc2", "v9.10-rc1", "v9.10b"}},
		{"CUDA directories, then names without a number where one is", []string{"13.0", "12.10", "12.9", "12.8", "x64"}},
		{"case does not decide the version", []string{"V9.10", "v9.9", "V9.2"}},
		{"text alphabetically", []string{"arm64", "x64"}},
		{"leading zeros and case: a fixed order", []string{"V9.1", "v9.01", "v9.1"}},
		{"huge numbers", []string{"v123456789012345678901234567890", "v99999999999999999999"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(1))
			for range 20 {
				got := slices.Clone(tt.want)
				r.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
				slices.SortFunc(got, NewestFirst)
				if !slices.Equal(got, tt.want) {
					t.Fatalf("sorted %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// FuzzNewestFirst checks that NewestFirst is a total order: antisymmetric, zero only for equal
// names, and transitive.
func FuzzNewestFirst(f *testing.F) {
	for _, s := range [][3]string{{"v9.10", "v9.9", "v10"}, {"v9.x-rc", "vfoo", "v9"}, {"12.8", "x64", "12.8.1"}, {"v9.1-rc", "v9.1", "V9.01"}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		sign := func(x int) int { return min(max(x, -1), 1) }
		for _, p := range [][2]string{{a, b}, {b, c}, {a, c}} {
			x, y := p[0], p[1]
			if sign(NewestFirst(x, y)) != -sign(NewestFirst(y, x)) {
				t.Fatalf("not antisymmetric: %q vs %q: %d, %d", x, y, NewestFirst(x, y), NewestFirst(y, x))
			}
			if (NewestFirst(x, y) == 0) != (x == y) {
				t.Fatalf("%q vs %q: %d", x, y, NewestFirst(x, y))
			}
		}
		for _, p := range [][3]string{{a, b, c}, {a, c, b}, {b, a, c}, {b, c, a}, {c, a, b}, {c, b, a}} {
			if NewestFirst(p[0], p[1]) < 0 && NewestFirst(p[1], p[2]) < 0 && NewestFirst(p[0], p[2]) >= 0 {
				t.Fatalf("not transitive: %q", p)
			}
		}
	})
}
