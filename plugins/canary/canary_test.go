package canary

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pathfinder-dev/pathfinder/abi"
)

func TestSearch(t *testing.T) {
	elf := &fstest.MapFile{Data: []byte("\x7fELF")}
	nvvm := abi.Descriptor{Name: "nvvm", LinuxSonames: []string{"libnvvm.so.4", "libnvvm.so"}, AnchorRelDirsLinux: []string{"nvvm/lib64"}, CanaryAnchors: []string{"cudart"}}
	tests := []struct {
		name  string
		roots []abi.Root // what the host granted
		files fstest.MapFS
		want  string
		tried string
	}{
		{"system toolkit", []abi.Root{{Path: "/usr/local/cuda-12.8", Role: abi.RoleCanaryRoot}},
			fstest.MapFS{"usr/local/cuda-12.8/nvvm/lib64/libnvvm.so.4": elf}, "/usr/local/cuda-12.8/nvvm/lib64/libnvvm.so.4", ""},
		{"the canary roots only, in order", []abi.Root{{Path: "/site", Role: abi.RoleSitePackages}, {Path: "/a", Role: abi.RoleCanaryRoot}, {Path: "/b", Role: abi.RoleCanaryRoot}},
			fstest.MapFS{"site/nvvm/lib64/libnvvm.so.4": elf, "b/nvvm/lib64/libnvvm.so": elf}, "/b/nvvm/lib64/libnvvm.so", "/a/nvvm/lib64: no such directory"},
		{"no canary root granted", []abi.Root{{Path: "/site", Role: abi.RoleSitePackages}}, nil, "", ": no canary root granted (cudart)"},
		{"root without nvvm", []abi.Root{{Path: "/opt/cuda", Role: abi.RoleCanaryRoot}}, fstest.MapFS{"opt/cuda/lib64/libcudart.so.12": elf}, "", "/opt/cuda/nvvm/lib64: no such directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := abi.Env{FS: tt.files}
			if env.FS == nil {
				env.FS = fstest.MapFS{}
			}
			resp := Search(env, &abi.Request{Platform: abi.Platform{OS: "linux", Arch: "amd64"}, Library: nvvm, Roots: tt.roots})
			got := ""
			if len(resp.Candidates) > 0 {
				got = resp.Candidates[0].Path
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q (tried %+v)", got, tt.want, resp.Tried)
			}
			var tried []string
			for _, a := range resp.Tried {
				tried = append(tried, a.Path+": "+a.Reason)
			}
			if !strings.Contains(strings.Join(tried, "\n"), tt.tried) {
				t.Fatalf("tried %v lacks %q", tried, tt.tried)
			}
		})
	}
}

func TestSearch_noCanary(t *testing.T) {
	resp := Search(abi.Env{FS: fstest.MapFS{}}, &abi.Request{Roots: []abi.Root{{Path: "/cuda", Role: abi.RoleCanaryRoot}}})
	if len(resp.Tried) != 1 || resp.Tried[0].Reason != "the descriptor names no canary library" || len(resp.Candidates) > 0 {
		t.Fatalf("%+v", resp)
	}
}
