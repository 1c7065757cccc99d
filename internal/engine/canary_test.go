package engine

import (
	"debug/elf"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakeelf"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func TestFind_canary(t *testing.T) {
	tests := []struct {
		name   string
		canary string // the cudart LD_LIBRARY_PATH leads to, relative to the toolkit root
		elf32  bool   // the canary is a 32-bit library
		lib    string
		target string // where lib is, relative to the toolkit root
		why    string // "" = lib is found at target; else some attempt says this
	}{
		{name: "system toolkit with targets/x86_64-linux", canary: "targets/x86_64-linux/lib/libcudart.so.13",
			lib: "nvvm", target: "nvvm/lib64/libnvvm.so.4"},
		{name: "cupti under extras/CUPTI next to lib64", canary: "lib64/libcudart.so.12",
			lib: "cupti", target: "extras/CUPTI/lib64/libcupti.so.12"},
		{name: "a canary that is only a stub", canary: "lib64/stubs/libcudart.so.13",
			lib: "nvvm", target: "nvvm/lib64/libnvvm.so.4",
			why: `the loader would not find "cudart" (libcudart.so.13: not found, or only a stubs/ library`},
		{name: "a canary in no toolkit layout has no root", canary: "share/cuda/libcudart.so.13",
			lib: "nvvm", target: "nvvm/lib64/libnvvm.so.4",
			why: "/share/cuda/libcudart.so.13 is not in a toolkit layout (lib64, lib, targets/<triple>/lib, bin): no root to derive"},
		{name: "a 32-bit canary is skipped as the loader skips it", canary: "lib64/libcudart.so.13", elf32: true,
			lib: "nvvm", target: "nvvm/lib64/libnvvm.so.4",
			why: `the loader would not find "cudart"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cuda := t.TempDir()
			canary := fakeelf.Header(elf.ELFCLASS32, elf.EM_386, elf.ET_DYN)
			if !tt.elf32 {
				canary = elfLib(t, filepath.Base(tt.canary))
			}
			filetree.Put(t, cuda, tt.canary, canary)
			filetree.Put(t, cuda, tt.target, elfLib(t, filepath.Base(tt.target)))
			f := newFinder(t, testEnv{"LD_LIBRARY_PATH": filepath.Join(cuda, filepath.Dir(tt.canary))}, "")
			lib, err := f.Find(bg, tt.lib)
			if tt.why != "" {
				if err == nil {
					t.Fatalf("found %+v", lib)
				}
				ex := f.Explain(bg, DynamicLib, tt.lib)
				var all []string
				for _, st := range ex.Steps {
					all = append(all, st.Log...)
					for _, a := range st.Tried {
						all = append(all, a.Reason)
					}
				}
				if !strings.Contains(strings.Join(all, "\n"), tt.why) {
					t.Fatalf("explain lacks %q:\n%s", tt.why, dump(ex))
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, dump(f.Explain(bg, DynamicLib, tt.lib)))
			}
			if lib.Path != cuda+"/"+tt.target || lib.FoundVia != "system-ctk-root" || lib.Step != "canary" {
				t.Fatalf("got %+v, want %s via system-ctk-root", lib, tt.target)
			}
		})
	}
}

// TestFind_canaryNotGranted: the host works the canary's root out and grants it: without the canary
// roots' grant the step has no toolkit to search, and says so; the step itself asks the loader
// nothing (system_resolve is no capability of it).
func TestFind_canaryNotGranted(t *testing.T) {
	cuda := t.TempDir()
	filetree.Put(t, cuda, "lib64/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	filetree.Put(t, cuda, "nvvm/lib64/libnvvm.so.4", elfLib(t, "libnvvm.so.4"))
	f := newFinder(t, testEnv{"LD_LIBRARY_PATH": cuda + "/lib64"}, "[plugin.canary]\ncapabilities = []\n")
	if lib, err := f.Find(bg, "nvvm"); err != nil || lib.Step != "canary" {
		t.Fatalf("without system_resolve: %+v, %v; want it found by the canary step", lib, err)
	}
	for _, tt := range []struct{ name, config, why string }{
		{"no read grant", "[plugin.canary]\nread = []\n", "no canary root granted (cudart)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFinder(t, testEnv{"LD_LIBRARY_PATH": cuda + "/lib64"}, tt.config)
			if lib, err := f.Find(bg, "nvvm"); err == nil {
				t.Fatalf("found %+v", lib)
			}
			if d := dump(f.Explain(bg, DynamicLib, "nvvm")); !strings.Contains(d, tt.why) {
				t.Fatalf("explain lacks %q:\n%s", tt.why, d)
			}
		})
	}
}
