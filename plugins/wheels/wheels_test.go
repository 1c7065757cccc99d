package wheels

import (
	"testing"
	"testing/fstest"

	"github.com/pathfinder-dev/pathfinder/abi"
)

func TestSearch(t *testing.T) {
	cudart := abi.Library{
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
				if c.Path != tt.want[i] || c.FoundVia != "site-packages" {
					t.Errorf("candidate %d = %+v, want %s via site-packages", i, c, tt.want[i])
				}
			}
		})
	}
}

func TestSearch_noSites(t *testing.T) {
	resp := Search(abi.Env{FS: fstest.MapFS{}}, &abi.Request{Library: abi.Library{LinuxSonames: []string{"libx.so.1"}}})
	if len(resp.Candidates) != 0 || len(resp.Tried) != 1 || resp.Tried[0].Reason != "no site-packages directory found" {
		t.Fatalf("got %+v", resp)
	}
}
