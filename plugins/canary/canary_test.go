package canary

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pathfinder-dev/pathfinder/abi"
)

func TestSearch(t *testing.T) {
	elf := &fstest.MapFile{Data: []byte("\x7fELF")}
	nvvm := abi.Descriptor{Name: "nvvm", LinuxSonames: []string{"libnvvm.so.4", "libnvvm.so"}, AnchorRelDirsLinux: []string{"nvvm/lib64"}, CanaryAnchors: []string{"cudart"}}
	tests := []struct {
		name     string
		resolved string // where the loader finds cudart; "" = it does not
		files    fstest.MapFS
		want     string
		tried    string
	}{
		{"system toolkit", "/usr/local/cuda-12.8/lib64/libcudart.so.12",
			fstest.MapFS{"usr/local/cuda-12.8/nvvm/lib64/libnvvm.so.4": elf}, "/usr/local/cuda-12.8/nvvm/lib64/libnvvm.so.4", ""},
		{"targets layout", "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13",
			fstest.MapFS{"usr/local/cuda-13.0/nvvm/lib64/libnvvm.so": elf}, "/usr/local/cuda-13.0/nvvm/lib64/libnvvm.so", ""},
		{"not found by the loader", "", nil, "", "canary: the loader would not find it"},
		{"not a toolkit layout", "/usr/lib/x86_64-linux-gnu/libcudart.so.12", nil, "", "is not in a toolkit layout"},
		{"root without nvvm", "/opt/cuda/lib64/libcudart.so.12", fstest.MapFS{"opt/cuda/lib64/libcudart.so.12": elf}, "", "/opt/cuda/nvvm/lib64: no such directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := abi.Env{FS: tt.files, SystemResolve: func(name string) (string, error) {
				if name != "cudart" {
					t.Fatalf("resolved %q", name)
				}
				if tt.resolved == "" {
					return "", errors.New("the loader would not find it")
				}
				return tt.resolved, nil
			}}
			if env.FS == nil {
				env.FS = fstest.MapFS{}
			}
			resp := Search(env, &abi.Request{Platform: abi.Platform{OS: "linux", Arch: "amd64"}, Library: nvvm})
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

func TestSearch_notGranted(t *testing.T) {
	resp := Search(abi.Env{FS: fstest.MapFS{}}, &abi.Request{Library: abi.Descriptor{CanaryAnchors: []string{"cudart"}}})
	if len(resp.Tried) != 1 || !strings.Contains(resp.Tried[0].Reason, "not granted") {
		t.Fatalf("%+v", resp.Tried)
	}
}
