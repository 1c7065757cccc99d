package wheels

import (
	"testing"
	"testing/fstest"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/plugins/internal/steptest"
)

func TestSearch(t *testing.T) {
	cudart := abi.Descriptor{
		Name:                "cudart",
		LinuxSonames:        []string{"libcudart.so.13", "libcudart.so.12"},
		WindowsDLLs:         []string{"cudart64_13.dll", "cudart64_12.dll"},
		SitePackagesLinux:   []string{"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"},
		SitePackagesWindows: []string{"nvidia/cu13/bin/x86_64", "nvidia/cuda_runtime/bin"},
	}
	elf := &fstest.MapFile{Data: []byte("\x7fELF")}
	tests := []struct {
		name  string
		files fstest.MapFS
		sites []string
		plat  abi.Platform
		want  []string
	}{
		{
			name:  "sub-directories outer, site dirs inner",
			files: fstest.MapFS{"a/nvidia/cuda_runtime/lib/libcudart.so.12": elf, "b/nvidia/cu13/lib/libcudart.so.13": elf},
			sites: []string{"/a", "/b"},
			plat:  abi.Platform{OS: "linux", Arch: "amd64"},
			want:  []string{"/b/nvidia/cu13/lib/libcudart.so.13", "/a/nvidia/cuda_runtime/lib/libcudart.so.12"},
		},
		{
			name:  "newest name first within a directory",
			files: fstest.MapFS{"a/nvidia/cu13/lib/libcudart.so.12": elf, "a/nvidia/cu13/lib/libcudart.so.13": elf},
			sites: []string{"/a"},
			plat:  abi.Platform{OS: "linux", Arch: "amd64"},
			want:  []string{"/a/nvidia/cu13/lib/libcudart.so.13", "/a/nvidia/cu13/lib/libcudart.so.12"},
		},
		{
			name:  "windows layout",
			files: fstest.MapFS{"a/nvidia/cu13/bin/x86_64/cudart64_13.dll": elf},
			sites: []string{"/a"},
			plat:  abi.Platform{OS: "windows", Arch: "amd64"},
			want:  []string{"/a/nvidia/cu13/bin/x86_64/cudart64_13.dll"},
		},
		{
			name:  "undeclared names are not matched",
			files: fstest.MapFS{"a/nvidia/cu13/lib/libcudart.so": elf, "a/nvidia/cu13/lib/libcudart.so.13.0.1": elf},
			sites: []string{"/a"},
			plat:  abi.Platform{OS: "linux", Arch: "amd64"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &abi.Request{ABI: abi.Version, Step: "wheels", Kind: abi.KindDynamicLib, Platform: tt.plat, Library: cudart}
			for _, s := range tt.sites {
				req.Roots = append(req.Roots, abi.Root{Path: s, Role: abi.RoleSitePackages})
			}
			resp := Search(abi.Env{FS: tt.files}, req)
			if len(resp.Candidates) != len(tt.want) {
				t.Fatalf("candidates %+v, want %v", resp.Candidates, tt.want)
			}
			for i, c := range resp.Candidates {
				if c.Path != tt.want[i] {
					t.Errorf("candidate %d = %+v, want %s", i, c, tt.want[i])
				}
			}
		})
	}
}

func TestSearch_noSites(t *testing.T) {
	resp := Search(abi.Env{FS: fstest.MapFS{}}, &abi.Request{Library: abi.Descriptor{LinuxSonames: []string{"libx.so.1"}}})
	if len(resp.Candidates) != 0 || len(resp.Tried) != 1 || resp.Tried[0].Reason != "no site-packages directory found" {
		t.Fatalf("got %+v", resp)
	}
}

// TestSearch_windowsArch: the builtin pack's Windows wheel layouts, in the Go reference and in the C
// the builtin module ships. CUDA 13 wheels keep nvidia/cu13/bin/x86_64 and nvidia/cu13/bin/arm64
// apart; CUDA 12 component wheels (nvidia/cuda_runtime/bin) are x64 only.
func TestSearch_windowsArch(t *testing.T) {
	site := steptest.Tree(t,
		"nvidia/cu13/bin/x86_64/cudart64_13.dll", "nvidia/cu13/bin/arm64/cudart64_13.dll", "nvidia/cuda_runtime/bin/cudart64_12.dll",
		"nvidia/cu13/bin/cudss64_0.dll", "nvidia/cu13/bin/cudss64_1.dll", "nvidia/cu13/lib/libcudss.so.0", "nvidia/cu13/lib/libcudss.so.1",
		"nvidia/cu13/lib/x64/cudadevrt.lib", "nvidia/cu13/lib/arm64/cudadevrt.lib", "nvidia/cuda_runtime/lib/x64/cudadevrt.lib",
		"nvidia/cu13/bin/arm64/cudla.dll")
	x64, arm64, linux := abi.Platform{OS: "windows", Arch: "amd64"}, abi.Platform{OS: "windows", Arch: "arm64"}, abi.Platform{OS: "linux", Arch: "amd64"}
	tests := []struct {
		name string
		kind abi.Kind
		lib  string
		plat abi.Platform
		want []string
	}{
		{"cudart x64: cu13 x86_64, then the CUDA 12 wheel", abi.KindDynamicLib, "cudart", x64,
			[]string{"/nvidia/cu13/bin/x86_64/cudart64_13.dll", "/nvidia/cuda_runtime/bin/cudart64_12.dll"}},
		{"cudart arm64: cu13 arm64 only", abi.KindDynamicLib, "cudart", arm64, []string{"/nvidia/cu13/bin/arm64/cudart64_13.dll"}},
		{"cudss 1.0 before 0 on Windows", abi.KindDynamicLib, "cudss", arm64, []string{"/nvidia/cu13/bin/cudss64_1.dll", "/nvidia/cu13/bin/cudss64_0.dll"}},
		{"cudss 1.0 before 0 on Linux", abi.KindDynamicLib, "cudss", linux, []string{"/nvidia/cu13/lib/libcudss.so.1", "/nvidia/cu13/lib/libcudss.so.0"}},
		{"cudadevrt x64", abi.KindStaticLib, "cudadevrt", x64, []string{"/nvidia/cu13/lib/x64/cudadevrt.lib", "/nvidia/cuda_runtime/lib/x64/cudadevrt.lib"}},
		{"cudadevrt arm64", abi.KindStaticLib, "cudadevrt", arm64, []string{"/nvidia/cu13/lib/arm64/cudadevrt.lib"}},
		{"cudla: no Windows wheel ships it", abi.KindDynamicLib, "cudla", arm64, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &abi.Request{Kind: tt.kind, Platform: tt.plat, Library: steptest.PackLibrary(t, tt.kind, tt.lib),
				Roots: []abi.Root{{Path: site, Role: abi.RoleSitePackages}}}
			steptest.WantBoth(t, Plugin, site, nil, req, tt.want)
		})
	}
}
