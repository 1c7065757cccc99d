package conda

import (
	"testing"
	"testing/fstest"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/plugins/internal/steptest"
)

func TestSearch(t *testing.T) {
	elf := &fstest.MapFile{Data: []byte("\x7fELF")}
	nvrtc := abi.Descriptor{Name: "nvrtc", LinuxSonames: []string{"libnvrtc.so.13"}, WindowsDLLs: []string{"nvrtc64_130_0.dll"},
		AnchorRelDirsLinux: []string{"lib64", "lib"}, AnchorRelDirsWindows: []string{"bin/x64", "bin"}}
	// nvvm is in the prefix's nvvm/lib64 (nvvm/bin), where conda's cuda-nvvm puts it: the prefix is
	// searched like a toolkit root, with the descriptor's anchor directories.
	nvvm := abi.Descriptor{Name: "nvvm", LinuxSonames: []string{"libnvvm.so.4"}, WindowsDLLs: []string{"nvvm64_40_0.dll"},
		AnchorRelDirsLinux: []string{"nvvm/lib64"}, AnchorRelDirsWindows: []string{"nvvm/bin"}}
	files := fstest.MapFS{"env/lib/libnvrtc.so.13": elf, "env/Library/bin/nvrtc64_130_0.dll": elf,
		"x64/Library/bin/x64/nvrtc64_130_0.dll": elf, "x64/Library/bin/nvrtc64_130_0.dll": elf,
		"env/nvvm/lib64/libnvvm.so.4": elf, "env/lib/libnvvm.so.4": elf, "env/Library/nvvm/bin/nvvm64_40_0.dll": elf}
	for _, tt := range []struct {
		name, prefix, os, want string
		lib                    abi.Descriptor
	}{
		{"linux lib", "/env", "linux", "/env/lib/libnvrtc.so.13", nvrtc},
		{"windows Library/bin", "/env", "windows", "/env/Library/bin/nvrtc64_130_0.dll", nvrtc},
		{"windows Library/bin/x64 first", "/x64", "windows", "/x64/Library/bin/x64/nvrtc64_130_0.dll", nvrtc},
		{"linux nvvm/lib64, not lib", "/env", "linux", "/env/nvvm/lib64/libnvvm.so.4", nvvm},
		{"windows Library/nvvm/bin", "/env", "windows", "/env/Library/nvvm/bin/nvvm64_40_0.dll", nvvm},
		{"unset", "", "linux", "", nvrtc},
		{"relative", "env", "linux", "", nvrtc},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := abi.Env{FS: files, Getenv: func(k string) string {
				if k == "CONDA_PREFIX" {
					return tt.prefix
				}
				return ""
			}}
			resp := Search(env, &abi.Request{Platform: abi.Platform{OS: tt.os}, Library: tt.lib})
			got := ""
			if len(resp.Candidates) > 0 {
				got = resp.Candidates[0].Path
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q (tried %+v)", got, tt.want, resp.Tried)
			}
		})
	}
}

// TestSearch_windowsArch: $CONDA_PREFIX/Library with the builtin pack's Windows layouts, in the Go
// reference and in the C the builtin module ships: a dynamic library in Library/bin/x64 or
// Library/bin/arm64, then Library/bin; cudadevrt in Library/lib/x64 then Library/lib on x64,
// Library/lib/arm64 only on arm64.
func TestSearch_windowsArch(t *testing.T) {
	prefix := steptest.Tree(t, "Library/bin/x64/cudart64_13.dll", "Library/bin/arm64/cudart64_13.dll", "Library/bin/cudart64_12.dll",
		"Library/lib/x64/cudadevrt.lib", "Library/lib/arm64/cudadevrt.lib", "Library/lib/cudadevrt.lib")
	x64, arm64 := abi.Platform{OS: "windows", Arch: "amd64"}, abi.Platform{OS: "windows", Arch: "arm64"}
	tests := []struct {
		name string
		kind abi.Kind
		lib  string
		plat abi.Platform
		want []string
	}{
		{"cudart x64", abi.KindDynamicLib, "cudart", x64, []string{"/Library/bin/x64/cudart64_13.dll", "/Library/bin/cudart64_12.dll"}},
		{"cudart arm64", abi.KindDynamicLib, "cudart", arm64, []string{"/Library/bin/arm64/cudart64_13.dll", "/Library/bin/cudart64_12.dll"}},
		{"cudadevrt x64", abi.KindStaticLib, "cudadevrt", x64, []string{"/Library/lib/x64/cudadevrt.lib", "/Library/lib/cudadevrt.lib"}},
		{"cudadevrt arm64", abi.KindStaticLib, "cudadevrt", arm64, []string{"/Library/lib/arm64/cudadevrt.lib"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &abi.Request{Kind: tt.kind, Platform: tt.plat, Library: steptest.PackLibrary(t, tt.kind, tt.lib)}
			steptest.WantBoth(t, Plugin, prefix, map[string]string{"CONDA_PREFIX": prefix}, req, tt.want)
		})
	}
}
