package host

import (
	"errors"
	"github.com/pathfinder-dev/pathfinder/host/internal/config"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestConfig_layers(t *testing.T) {
	home := t.TempDir()
	sys := t.TempDir()
	put(t, sys, "pathfinder.toml", []byte("[search]\norder = [\"conda\", \"system\"]\n[plugin.conda]\ntimeout = \"1s\"\n"))
	put(t, home, ".config/pathfinder/pathfinder.toml", []byte("[plugin.conda]\nmemory = \"32MiB\"\n"))
	envFile := put(t, t.TempDir(), "env.toml", []byte("[library.cudart]\norder = [\"envroots\"]\n"))
	last := put(t, t.TempDir(), "last.toml", []byte("[plugin.conda]\ntimeout = \"3s\"\n"))
	opts := Options{
		SystemConfigDir: sys,
		ConfigFile:      last,
		LookupEnv:       testEnv{"HOME": home, "PATHFINDER_CONFIG": envFile}.lookup,
	}
	f, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := f.info().ConfigFiles()
	want := []string{"builtin:pathfinder.toml", filepath.Join(sys, "pathfinder.toml"), filepath.Join(home, ".config/pathfinder/pathfinder.toml"), envFile, last}
	if strings.Join(files, "\n") != strings.Join(want, "\n") {
		t.Fatalf("layers %v, want %v", files, want)
	}
	conda := f.cfg.Plugins["conda"]
	if conda.Timeout != 3*time.Second || conda.Memory != 32<<20 || conda.Source.String() != "builtin:conda" {
		t.Fatalf("conda = %+v: each layer should override only what it sets", conda)
	}
	if o := strings.Join(f.info().Order("cudart"), ","); o != "envroots" {
		t.Fatalf("cudart order %s", o)
	}
	if o := strings.Join(f.info().Order("nvrtc"), ","); o != "conda,system" {
		t.Fatalf("default order %s", o)
	}
	if o := strings.Join(f.info().Order("nvml"), ","); o != "already-loaded,system" {
		t.Fatalf("nvml order %s", o)
	}
}

func TestConfig_Errors(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"unknown key", "[search]\nordr = []\n", `:2:1: unknown key "search.ordr"`},
		{"unknown plugin key", "[plugin.wheels]\nsource = \"builtin:wheels\"\n  colour = \"x\"\n", `:3:3: unknown key "plugin.wheels.colour"`},
		{"syntax", "[search\n", "p.toml:2:8: expected '.' or ']' to end table name"},
		{"unknown step", "[search]\norder = [\"wheels\", \"whels\"]\n", `search.order names unknown step "whels"`},
		{"step twice", "[search]\norder = [\"wheels\", \"wheels\"]\n", `names step "wheels" twice`},
		{"unknown library", "[library.cudartt]\norder = [\"wheels\"]\n", `[library.cudartt] names an unknown library (did you mean "cudart"`},
		{"plugin without source", "[plugin.mine]\nread = [\"/opt\"]\n", `plugin "mine" has no source`},
		{"no such builtin", "[plugin.mine]\nsource = \"builtin:nope\"\n", `no builtin step "nope"`},
		{"bad memory", "[plugin.wheels]\nmemory = \"lots\"\n", `plugin.wheels.memory: "lots" is not a size`},
		{"bad timeout", "[plugin.wheels]\ntimeout = \"-1s\"\n", `"-1s" is not a positive duration`},
		{"bad sha256", "[plugin.wheels]\nsha256 = \"abc\"\n", `sha256 "abc" is not 64 hex digits`},
		{"relative site dir", "[search]\nsite_packages = [\"venv/lib\"]\n", `"venv/lib" is a relative path`},
		{"a mistyped step", "[search]\norder = [\"cnda\", \"system\"]\n", `p.toml:2:1: search.order names unknown step "cnda" (did you mean "conda"?) (known: already-loaded, canary, conda,`},
		{"a mistyped grant", "[plugin.wheels]\nread = [\"@site-package\"]\n", `p.toml:2:1: plugin.wheels.read: unknown grant "@site-package" (did you mean "@site-packages"?) (known: @site-packages, @install-root-env-vars, @canary-roots)`},
		{"a read token in env", "[plugin.envroots]\nenv = [\"CUDA_PATH\", \"@install-root-env-var\"]\n", `p.toml:2:1: plugin.envroots.env: unknown grant "@install-root-env-var" (did you mean "@install-root-env-vars"?)`},
		{"a string for an array", "[search]\norder = \"wheels\"\n", `p.toml:2:1: search.order: expected an array, found a string`},
		{"a number for a string", "[plugin.wheels]\n\n  timeout = 5\n", `p.toml:3:3: plugin.wheels.timeout: expected a string, found an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := put(t, t.TempDir(), "p.toml", []byte(tt.config))
			_, err := New(Options{ConfigFile: path, SystemConfigDir: t.TempDir(), LookupEnv: testEnv{}.lookup})
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) || strings.HasPrefix(err.Error(), "pathfinder: ") {
				t.Fatalf("New: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestCompilationCacheDir(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name   string
		env    testEnv
		config string
		want   string
	}{
		{"XDG default", testEnv{"HOME": home}, "", filepath.Join(home, ".cache/pathfinder")},
		{"XDG_CACHE_HOME", testEnv{"HOME": home, "XDG_CACHE_HOME": "/xdg"}, "", "/xdg/pathfinder"},
		{"env override", testEnv{"HOME": home, "PATHFINDER_CACHE_DIR": "/pf"}, "", "/pf"},
		{"config dir", testEnv{"HOME": home}, "[cache]\ndir = \"/cfg\"\n", "/cfg"},
		{"off by env", testEnv{"HOME": home, "PATHFINDER_NO_CACHE": "1"}, "", ""},
		{"off by config", testEnv{"HOME": home}, "[cache]\nenabled = false\n", ""},
		{"relative is refused", testEnv{"HOME": home, "PATHFINDER_CACHE_DIR": "cache"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{LookupEnv: tt.env.lookup, SystemConfigDir: t.TempDir()}
			if tt.config != "" {
				opts.ConfigFile = put(t, t.TempDir(), "p.toml", []byte(tt.config))
			}
			f, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			got := f.info().CacheDir()
			if tt.want == "" && got != "" || tt.want != "" && filepath.Dir(got) != tt.want {
				t.Fatalf("CacheDir() = %q, want under %q", got, tt.want)
			}
		})
	}
}

// TestFind_cacheOff finds through the sandbox with no disk cache at all.
func TestFind_cacheOff(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the builtin module without a cache")
	}
	site := t.TempDir()
	put(t, site, "nvidia/cu13/lib/libcupti.so.13", elfLib(t, "libcupti.so.13"))
	dir := t.TempDir()
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_NO_CACHE": "1", "PATHFINDER_CACHE_DIR": dir, "PATHFINDER_TEST_OWN_ENGINE": "1"}, "")
	if _, err := f.Find(bg, "cupti"); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("cache dir written with the cache off: %v", entries)
	}
}

// The host's own steps are the ones the config knows besides plugins.
func TestStepNames(t *testing.T) {
	if StepAlreadyLoaded != config.StepAlreadyLoaded || StepSystem != config.StepSystem {
		t.Fatalf("host's steps %q, %q; the config's %q, %q", StepAlreadyLoaded, StepSystem, config.StepAlreadyLoaded, config.StepSystem)
	}
}

// TestConfigError_fields: a config error says, for errors.As, the file, line, column and key; a
// plugin's, which plugin and what was being done with it.
func TestConfigError_fields(t *testing.T) {
	dir := t.TempDir()
	module := put(t, dir, "site.wasm", []byte("\x00asm\x01\x00\x00\x00"))
	os.Chmod(module, 0o644)
	tests := []struct {
		name, config       string
		line, col          int
		key, plugin, op    string
		wantPrefixOfReason string
	}{
		{"a mistyped grant", "[plugin.wheels]\nread = [\"@site-package\"]\n", 2, 1, "plugin.wheels.read", "", "", "plugin.wheels.read: unknown grant"},
		{"a type", "[search]\n order = 3\n", 2, 2, "search.order", "", "", "search.order: expected an array"},
		{"a pin", "[plugin.site]\nsource = \"site.wasm\"\nsha256 = \"" + strings.Repeat("0", 64) + "\"\n", 3, 1, "plugin.site.sha256", "site", "pin", module + " has sha256"},
		{"a missing file", "[plugin.site]\nsource = \"nothing.wasm\"\n", 2, 1, "plugin.site.source", "site", "read", filepath.Join(dir, "nothing.wasm") + ": no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := put(t, dir, "p.toml", []byte(tt.config))
			_, err := New(Options{ConfigFile: file, SystemConfigDir: t.TempDir(), LookupEnv: testEnv{}.lookup})
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.File != file || ce.Line != tt.line || ce.Col != tt.col || ce.Key != tt.key {
				t.Fatalf("New: %v (%+v); want a ConfigError at %s:%d:%d for %s", err, ce, file, tt.line, tt.col, tt.key)
			}
			reason := ce.Err
			var pe *PluginError
			if tt.plugin != "" {
				if !errors.As(err, &pe) || pe.Plugin != tt.plugin || pe.Op != tt.op {
					t.Fatalf("New: %v (%+v); want a PluginError of %q in %q", err, pe, tt.plugin, tt.op)
				}
				reason = pe.Err
			}
			if !strings.HasPrefix(reason.Error(), tt.wantPrefixOfReason) {
				t.Fatalf("reason %q, want it to start %q", reason, tt.wantPrefixOfReason)
			}
		})
	}
}
