package main

import (
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pathfinder-dev/pathfinder/abi"
)

var (
	linux  = abi.Platform{OS: "linux", Arch: "amd64", Libc: "glibc"}
	cudart = abi.Descriptor{
		Name:               "cudart",
		LinuxSonames:       []string{"libcudart.so.13", "libcudart.so.12"},
		AnchorRelDirsLinux: []string{"lib64", "lib"},
	}
	elf = &fstest.MapFile{Data: []byte("\x7fELF")}
)

func TestSearch(t *testing.T) {
	tests := []struct {
		name    string
		files   fstest.MapFS
		options map[string]string
		env     map[string]string
		lib     abi.Descriptor
		want    []string // candidate paths, in order
		tried   string   // some attempt's path and reason contain it
		err     string
	}{
		{
			name: "newest version first, in natural order",
			files: fstest.MapFS{
				"opt/apps/cuda/12.9/lib64/libcudart.so.12":  elf,
				"opt/apps/cuda/12.10/lib64/libcudart.so.12": elf,
				"opt/apps/cuda/9.2/lib64/libcudart.so.12":   elf,
				"opt/apps/cuda/13.0/lib/libcudart.so.13":    elf,
			},
			lib: cudart,
			want: []string{
				"/opt/apps/cuda/13.0/lib/libcudart.so.13",
				"/opt/apps/cuda/12.10/lib64/libcudart.so.12",
				"/opt/apps/cuda/12.9/lib64/libcudart.so.12",
				"/opt/apps/cuda/9.2/lib64/libcudart.so.12",
			},
		},
		{
			name:    "the root option moves the tree",
			files:   fstest.MapFS{"site/cuda/12.8/lib64/libcudart.so.12": elf, "opt/apps/cuda/13.0/lib64/libcudart.so.13": elf},
			options: map[string]string{"root": "/site/cuda"},
			lib:     cudart,
			want:    []string{"/site/cuda/12.8/lib64/libcudart.so.12"},
		},
		{
			name:  "OPTAPPS_ROOT when there is no option",
			files: fstest.MapFS{"env/cuda/12.8/lib64/libcudart.so.12": elf},
			env:   map[string]string{"OPTAPPS_ROOT": "/env/cuda"},
			lib:   cudart,
			want:  []string{"/env/cuda/12.8/lib64/libcudart.so.12"},
		},
		{
			name:  "entries that are not versions are skipped and said so",
			files: fstest.MapFS{"opt/apps/cuda/latest/lib64/libcudart.so.13": elf, "opt/apps/cuda/12.8": elf},
			lib:   cudart,
			tried: "/opt/apps/cuda/latest: not a version directory",
		},
		{
			name:  "a version that is a file is not a toolkit",
			files: fstest.MapFS{"opt/apps/cuda/12.8": elf},
			lib:   cudart,
			tried: "/opt/apps/cuda/12.8: not a directory",
		},
		{
			name:  "a missing root is an attempt, not an error",
			files: fstest.MapFS{},
			lib:   cudart,
			tried: "/opt/apps/cuda: no such directory",
		},
		{
			name:  "a driver library has no toolkit directories",
			files: fstest.MapFS{"opt/apps/cuda/12.8/lib64/libcuda.so.1": elf},
			lib:   abi.Descriptor{Name: "cuda", LinuxSonames: []string{"libcuda.so.1"}},
			tried: "cuda declares no toolkit directories",
		},
		{
			name:    "a relative root is refused",
			files:   fstest.MapFS{"cuda/12.8/lib64/libcudart.so.12": elf},
			options: map[string]string{"root": "cuda"},
			lib:     cudart,
			err:     `root "cuda" is not an absolute path`,
		},
		{
			name:  "header sets use the toolkit's include directories",
			files: fstest.MapFS{"opt/apps/cuda/12.8/include/cuda_runtime.h": elf},
			lib:   abi.Descriptor{Name: "cudart", LinuxFiles: []string{"cuda_runtime.h"}, AnchorRelDirsLinux: []string{"include"}},
			want:  []string{"/opt/apps/cuda/12.8/include"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind := abi.KindDynamicLib
			if len(tt.lib.LinuxFiles) > 0 {
				kind = abi.KindHeaderDir
			}
			env := abi.Env{FS: tt.files, Getenv: func(k string) string { return tt.env[k] }}
			resp := search(env, &abi.Request{ABI: abi.Version, Kind: kind, Platform: linux, Library: tt.lib, Options: tt.options})
			var got []string
			for _, c := range resp.Candidates {
				got = append(got, c.Path)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("candidates\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if resp.Error != tt.err {
				t.Errorf("error %q, want %q", resp.Error, tt.err)
			}
			if tt.tried != "" {
				var tried []string
				for _, a := range resp.Tried {
					tried = append(tried, a.Path+": "+a.Reason)
				}
				if !strings.Contains(strings.Join(tried, "\n"), tt.tried) {
					t.Errorf("tried\n%s\nlacks %q", strings.Join(tried, "\n"), tt.tried)
				}
			}
		})
	}
}

func TestVersionLess(t *testing.T) {
	names := []string{"12.10", "9.2", "13.0.1", "12.9", "13.0", "12.4-update1", "12.4", "11.8"}
	sort.Slice(names, func(i, j int) bool { return versionLess(names[i], names[j]) })
	want := "9.2 11.8 12.4 12.4-update1 12.9 12.10 13.0 13.0.1"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("sorted %s, want %s", got, want)
	}
	if versionLess("12.8", "12.8") || versionLess("12.08", "12.8") && versionLess("12.8", "12.08") {
		t.Fatal("versionLess is not a strict order")
	}
}

// The registered plugin is the step name the docs and the config use.
func TestPlugin(t *testing.T) {
	if plugin.Name != "optapps" || plugin.Search == nil || len(plugin.Env) != 1 {
		t.Fatalf("plugin %+v", plugin)
	}
}
