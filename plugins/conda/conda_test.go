package conda

import (
	"testing"
	"testing/fstest"

	"github.com/pathfinder-dev/pathfinder/abi"
)

func TestSearch(t *testing.T) {
	elf := &fstest.MapFile{Data: []byte("\x7fELF")}
	lib := abi.Library{Name: "nvrtc", LinuxSonames: []string{"libnvrtc.so.13"}, WindowsDLLs: []string{"nvrtc64_130_0.dll"}}
	files := fstest.MapFS{"env/lib/libnvrtc.so.13": elf, "env/Library/bin/nvrtc64_130_0.dll": elf}
	for _, tt := range []struct {
		name, prefix, os, want string
	}{
		{"linux lib", "/env", "linux", "/env/lib/libnvrtc.so.13"},
		{"windows Library/bin", "/env", "windows", "/env/Library/bin/nvrtc64_130_0.dll"},
		{"unset", "", "linux", ""},
		{"relative", "env", "linux", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := abi.Env{FS: files, Getenv: func(k string) string {
				if k == "CONDA_PREFIX" {
					return tt.prefix
				}
				return ""
			}}
			resp := Search(env, &abi.Request{Platform: abi.Platform{OS: tt.os}, Library: lib})
			got := ""
			if len(resp.Candidates) > 0 {
				got = resp.Candidates[0].Path
				if resp.Candidates[0].FoundVia != "conda" {
					t.Errorf("found_via %q", resp.Candidates[0].FoundVia)
				}
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q (tried %+v)", got, tt.want, resp.Tried)
			}
		})
	}
}
