package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// TestFind_canaryDlopenProbe: with [system] resolve = "dlopen" the canary's toolkit is where the
// loader itself, in a child process, finds cudart; where the model disagrees, explain says so.
func TestFind_canaryDlopenProbe(t *testing.T) {
	const dlopen = "[system]\nresolve = \"dlopen\"\n"
	toolkit := func(t *testing.T) string {
		cuda := t.TempDir()
		filetree.Put(t, cuda, "lib64/libcudart.so.13", elfLib(t, "libcudart.so.13"))
		filetree.Put(t, cuda, "nvvm/lib64/libnvvm.so.4", elfLib(t, "libnvvm.so.4"))
		return cuda
	}
	t.Run("agrees with the model", func(t *testing.T) {
		cuda := toolkit(t)
		f := newFinder(t, testEnv{"LD_LIBRARY_PATH": cuda + "/lib64"}, dlopen)
		lib, err := f.Find(bg, "nvvm")
		if err != nil || lib.Path != cuda+"/nvvm/lib64/libnvvm.so.4" || lib.FoundVia != "system-ctk-root" {
			t.Fatalf("got %+v, %v\n%s", lib, err, dump(f.Explain(bg, DynamicLib, "nvvm")))
		}
		if d := dump(f.Explain(bg, DynamicLib, "nvvm")); strings.Contains(d, "the loader model") {
			t.Fatalf("a disagreement where there is none:\n%s", d)
		}
	})
	t.Run("a preloaded cudart: dlopen knows, the model cannot", func(t *testing.T) {
		model, preloaded := toolkit(t), toolkit(t)
		env := testEnv{"LD_LIBRARY_PATH": model + "/lib64", "PATHFINDER_CACHE_DIR": t.TempDir()}
		// One config file for both Finders, so that they share result-cache keys.
		opts := Options{LookupEnv: env.lookup, SystemConfigDir: t.TempDir(), ConfigFile: filetree.Put(t, t.TempDir(), "pathfinder.toml", []byte(dlopen))}
		t.Run("preloaded", func(t *testing.T) {
			// glibc hands out the already loaded library for its soname, wherever LD_LIBRARY_PATH points.
			t.Setenv("LD_PRELOAD", preloaded+"/lib64/libcudart.so.13")
			f := newFinderOpts(t, opts)
			lib, err := f.Find(bg, "nvvm")
			if err != nil || lib.Path != preloaded+"/nvvm/lib64/libnvvm.so.4" {
				t.Fatalf("got %+v, %v, want the preloaded toolkit's nvvm\n%s", lib, err, dump(f.Explain(bg, DynamicLib, "nvvm")))
			}
			want := "dlopen found " + preloaded + "/lib64/libcudart.so.13 for cudart; the loader model says " + model + "/lib64/libcudart.so.13"
			if d := dump(f.Explain(bg, DynamicLib, "nvvm")); !strings.Contains(d, want) {
				t.Fatalf("explain lacks %q:\n%s", want, d)
			}
		})
		// LD_PRELOAD is nothing an observation re-checks: the answer above was not kept.
		f := newFinderOpts(t, opts)
		if lib, err := f.Find(bg, "nvvm"); err != nil || lib.Path != model+"/nvvm/lib64/libnvvm.so.4" {
			t.Fatalf("without LD_PRELOAD: got %+v, %v, want the model toolkit's nvvm\n%s", lib, err, dump(f.Explain(bg, DynamicLib, "nvvm")))
		}
	})
	t.Run("not found by dlopen", func(t *testing.T) {
		f := newFinder(t, testEnv{"LD_LIBRARY_PATH": t.TempDir()}, dlopen)
		if lib, err := f.Find(bg, "nvvm"); err == nil {
			t.Fatalf("found %+v", lib)
		}
		if d := dump(f.Explain(bg, DynamicLib, "nvvm")); !strings.Contains(d, `dlopen would not load "cudart" (dlopen libcudart.so.13:`) {
			t.Fatalf("explain lacks the child's dlopen errors:\n%s", d)
		}
	})
	t.Run("a canary whose constructor hangs", func(t *testing.T) {
		slow := filepath.Join(t.TempDir(), "slow.c")
		os.WriteFile(slow, []byte("#include <unistd.h>\n__attribute__((constructor)) static void hang(void) { sleep(30); }\n"), 0o644)
		cuda := t.TempDir()
		filetree.Put(t, cuda, "lib64/libcudart.so.13", elfLib(t, "libcudart.so.13", slow))
		filetree.Put(t, cuda, "nvvm/lib64/libnvvm.so.4", elfLib(t, "libnvvm.so.4"))
		f := newFinder(t, testEnv{"LD_LIBRARY_PATH": cuda + "/lib64"}, dlopen+"dlopen_timeout = \"300ms\"\n")
		if lib, err := f.Find(bg, "nvvm"); err == nil {
			t.Fatalf("found %+v", lib)
		}
		if d := dump(f.Explain(bg, DynamicLib, "nvvm")); !strings.Contains(d, "dlopen probe: the child did not answer within 300ms") {
			t.Fatalf("explain lacks the timeout:\n%s", d)
		}
	})
}

func TestConfig_systemResolve(t *testing.T) {
	for _, tt := range []struct{ config, want string }{
		{"[system]\nresolve = \"ldd\"\n", `pathfinder.toml:2:1: system.resolve: "ldd" is not "model" or "dlopen"`},
		{"[system]\ndlopen_timeout = \"soon\"\n", `pathfinder.toml:2:1: system.dlopen_timeout: "soon" is not a positive duration`},
	} {
		_, err := New(Options{LookupEnv: testEnv{}.lookup, SystemConfigDir: t.TempDir(), ConfigFile: filetree.Put(t, t.TempDir(), "pathfinder.toml", []byte(tt.config))})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.config, err, tt.want)
		}
	}
}

// TestConfig_builtinLayerShared: the built-in layer is applied once per process; what one Engine's
// layers change never shows in the next Engine's configuration.
func TestConfig_builtinLayerShared(t *testing.T) {
	edited := newFinder(t, testEnv{}, "[search]\norder = [\"wheels\"]\n[plugin.wheels]\ntimeout = \"9s\"\nread = [\"/opt\"]\n[system]\nresolve = \"dlopen\"\n")
	plain := newFinder(t, testEnv{}, "")
	get := func(f *Engine, key string) inspect.Setting {
		for _, s := range f.Settings() {
			if s.Key == key {
				return s
			}
		}
		return inspect.Setting{}
	}
	for key, want := range map[string]string{
		"search.order": `["wheels"]`, "plugin.wheels.timeout": `"9s"`, "plugin.wheels.read": `["/opt"]`, "system.resolve": `"dlopen"`,
	} {
		if got := get(edited, key).TOML(); got != want {
			t.Errorf("edited %s = %s, want %s", key, got, want)
		}
		if got := get(plain, key); got.TOML() == want || !strings.HasPrefix(got.Origin, "builtin:") {
			t.Errorf("plain Engine's %s = %s from %s: the other Engine's layer leaked", key, got.TOML(), got.Origin)
		}
	}
	if w := plain.cfg.Plugins["wheels"]; w.Timeout != 5*time.Second || slices.Contains(w.Read, config.Grant{Kind: config.GrantDir, Name: "/opt"}) || slices.Equal(plain.cfg.Order, []string{"wheels"}) {
		t.Errorf("the other Engine's layer changed this one's wheels step: %+v, order %v", w, plain.cfg.Order)
	}
	if !edited.cfg.ResolveDlopen || plain.cfg.ResolveDlopen {
		t.Error("system.resolve leaked between Finders")
	}
	base := config.Defaults()
	if err := base.Apply("builtin:pathfinder.toml", builtin.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	if string(plain.cfg.Hash()) == string(edited.cfg.Hash()) || string(plain.cfg.Hash()) != string(base.Hash()) {
		t.Error("the config hash does not follow the layers")
	}
}
