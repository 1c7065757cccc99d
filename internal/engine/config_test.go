package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func TestConfig_layers(t *testing.T) {
	home := t.TempDir()
	sys := t.TempDir()
	filetree.Put(t, sys, "pathfinder.toml", []byte("[search]\norder = [\"conda\", \"system\"]\n[plugin.conda]\ntimeout = \"1s\"\n"))
	filetree.Put(t, home, ".config/pathfinder/pathfinder.toml", []byte("[plugin.conda]\nmemory = \"32MiB\"\n"))
	envFile := filetree.Put(t, t.TempDir(), "env.toml", []byte("[library.cudart]\norder = [\"envroots\"]\n"))
	last := filetree.Put(t, t.TempDir(), "last.toml", []byte("[plugin.conda]\ntimeout = \"3s\"\n"))
	opts := Options{
		SystemConfigDir: sys,
		ConfigFile:      last,
		LookupEnv:       testEnv{"HOME": home, "PATHFINDER_CONFIG": envFile}.lookup,
	}
	f := newFinderOpts(t, opts)
	files := f.ConfigFiles()
	want := []string{"builtin:pathfinder.toml", filepath.Join(sys, "pathfinder.toml"), filepath.Join(home, ".config/pathfinder/pathfinder.toml"), envFile, last}
	if strings.Join(files, "\n") != strings.Join(want, "\n") {
		t.Fatalf("layers %v, want %v", files, want)
	}
	conda := f.cfg.Plugins["conda"]
	if conda.Timeout != 3*time.Second || conda.Memory != 32<<20 || conda.Source.String() != "builtin:conda" {
		t.Fatalf("conda = %+v: each layer should override only what it sets", conda)
	}
	if o := strings.Join(f.Order("cudart"), ","); o != "envroots" {
		t.Fatalf("cudart order %s", o)
	}
	if o := strings.Join(f.Order("nvrtc"), ","); o != "conda,system" {
		t.Fatalf("default order %s", o)
	}
	if o := strings.Join(f.Order("nvml"), ","); o != "already-loaded,system" {
		t.Fatalf("nvml order %s", o)
	}
}

func TestConfig_Errors(t *testing.T) {
	tests := []struct {
		name, config, want string
	}{
		{"unknown key", "[search]\nordr = []\n", `:2:1: unknown key "search.ordr"`},
		{"unknown plugin key", "[plugin.wheels]\nsource = \"builtin:wheels\"\n  colour = \"x\"\n", `:3:3: unknown key "plugin.wheels.colour"`},
		{"syntax", "[search\n", "p.toml:1:8: expected '.' or ']' to end table name"},
		{"unknown step", "[search]\norder = [\"wheels\", \"whels\"]\n", `search.order names unknown step "whels"`},
		{"step twice", "[search]\norder = [\"wheels\", \"wheels\"]\n", `names step "wheels" twice`},
		{"unknown library", "[library.cudartt]\norder = [\"wheels\"]\n", `[library.cudartt] names an unknown library (did you mean "cudart"`},
		{"plugin without source", "[plugin.mine]\nread = [\"/opt\"]\n", `plugin "mine" has no source`},
		{"no such builtin", "[plugin.mine]\nsource = \"builtin:nope\"\n", `no builtin step "nope"`},
		{"bad memory", "[plugin.wheels]\nmemory = \"lots\"\n", `plugin.wheels.memory: "lots" is not a size`},
		{"bad timeout", "[plugin.wheels]\ntimeout = \"-1s\"\n", `"-1s" is not a positive duration`},
		{"bad sha256", "[plugin.wheels]\nsha256 = \"abc\"\n", `sha256 "abc" is not 64 hex digits`},
		{"a host step's label", "[plugin.wheels]\nfound_via = \"system-search\"\n", `p.toml:2:1: plugin.wheels.found_via: "system-search" is the label of the host's own step, never a plugin's`},
		{"an empty label", "[plugin.conda]\nfound_via = \" \"\n", `plugin.conda.found_via: " " is not a label`},
		{"a label with an escape", "[plugin.conda]\nfound_via = \"a\\u001b[2J\"\n", `plugin.conda.found_via: "a\x1b[2J" is not a label`},
		{"relative site dir", "[search]\nsite_packages = [\"venv/lib\"]\n", `"venv/lib" is a relative path`},
		{"a mistyped step", "[search]\norder = [\"cnda\", \"system\"]\n", `p.toml:2:1: search.order names unknown step "cnda" (did you mean "conda"?) (known: already-loaded, canary, conda,`},
		{"a mistyped grant", "[plugin.wheels]\nread = [\"@site-package\"]\n", `p.toml:2:1: plugin.wheels.read: unknown grant "@site-package" (did you mean "@site-packages"?) (known: @site-packages, @install-root-env-vars, @canary-roots)`},
		{"a read token in env", "[plugin.envroots]\nenv = [\"CUDA_PATH\", \"@install-root-env-var\"]\n", `p.toml:2:1: plugin.envroots.env: unknown grant "@install-root-env-var" (did you mean "@install-root-env-vars"?)`},
		{"a string for an array", "[search]\norder = \"wheels\"\n", `p.toml:2:1: search.order: expected an array, found a string`},
		{"a number for a string", "[plugin.wheels]\n\n  timeout = 5\n", `p.toml:3:3: plugin.wheels.timeout: expected a string, found an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filetree.Put(t, t.TempDir(), "p.toml", []byte(tt.config))
			_, err := New(Options{ConfigFile: path, SystemConfigDir: t.TempDir(), LookupEnv: testEnv{}.lookup})
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) || strings.HasPrefix(err.Error(), "pathfinder: ") {
				t.Fatalf("New: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestCacheDir is where the caches go, or why they are off. Of the cache dir only its own last
// components are made (.cache/pathfinder in $HOME, pathfinder in $XDG_CACHE_HOME, the named dir
// itself), and a missing $XDG_CACHE_HOME, as the XDG Base Directory specification says: a HOME that
// does not exist (Debian's nobody: /nonexistent) turns the cache off, says why, and is never made,
// not even by a search. Before, a missing XDG_CACHE_HOME turned the cache off.
func TestCacheDir(t *testing.T) {
	home, xdg, top := t.TempDir(), t.TempDir(), t.TempDir()
	file := filetree.Put(t, top, "file", []byte("not a directory"))
	missing := filepath.Join(top, "nonexistent")
	tests := []struct {
		name     string
		env      testEnv
		config   string
		want     string // the cache dir; "" when off
		off      string // in why it is off
		disabled bool
		made     []string // below top: directories made, mode 0700
	}{
		{name: "XDG default", env: testEnv{"HOME": home}, want: filepath.Join(home, ".cache/pathfinder")},
		{name: "XDG_CACHE_HOME", env: testEnv{"HOME": home, "XDG_CACHE_HOME": xdg}, want: filepath.Join(xdg, "pathfinder")},
		{name: "env override", env: testEnv{"HOME": home, "PATHFINDER_CACHE_DIR": filepath.Join(top, "pf")}, want: filepath.Join(top, "pf")},
		{name: "config dir", env: testEnv{"HOME": home}, config: "[cache]\ndir = \"" + filepath.Join(top, "cfg") + "\"\n", want: filepath.Join(top, "cfg")},
		{name: "off by env", env: testEnv{"HOME": home, "PATHFINDER_NO_CACHE": "1"}, off: "PATHFINDER_NO_CACHE=1", disabled: true},
		{name: "off by config", env: testEnv{"HOME": home}, config: "[cache]\nenabled = false\n", off: "[cache] enabled = false", disabled: true},
		{name: "relative is refused", env: testEnv{"HOME": home, "PATHFINDER_CACHE_DIR": "cache"},
			off: `$PATHFINDER_CACHE_DIR "cache" is a relative path`},
		{name: "relative in the config is refused", env: testEnv{"HOME": home}, config: "[cache]\ndir = \"cache\"\n",
			off: `[cache] dir "cache" is a relative path`},
		{name: "HOME that does not exist", env: testEnv{"HOME": missing},
			off: filepath.Join(missing, ".cache/pathfinder") + " (from $HOME): " + missing + " does not exist"},
		// The XDG Base Directory specification: made, mode 0700, with what is missing above it.
		{name: "XDG_CACHE_HOME that does not exist", env: testEnv{"HOME": home, "XDG_CACHE_HOME": filepath.Join(top, "made/cache")},
			want: filepath.Join(top, "made/cache/pathfinder"), made: []string{"made", "made/cache", "made/cache/pathfinder"}},
		{name: "XDG_CACHE_HOME inside a HOME that does not exist", env: testEnv{"HOME": missing, "XDG_CACHE_HOME": filepath.Join(missing, ".cache")},
			off: filepath.Join(missing, ".cache/pathfinder") + " (from $XDG_CACHE_HOME): " + filepath.Join(missing, ".cache") + " does not exist"},
		{name: "PATHFINDER_CACHE_DIR below a directory that does not exist", env: testEnv{"PATHFINDER_CACHE_DIR": filepath.Join(missing, "cache")},
			off: missing + " does not exist"},
		{name: "HOME a file", env: testEnv{"HOME": file}, off: filepath.Join(file, ".cache/pathfinder") + " (from $HOME): not a directory"},
		{name: "a file where the cache dir should be", env: testEnv{"PATHFINDER_CACHE_DIR": file}, off: file + " (from $PATHFINDER_CACHE_DIR): not a directory"},
		{name: "neither HOME nor XDG_CACHE_HOME", env: testEnv{}, off: "neither $XDG_CACHE_HOME nor $HOME is an absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := tt.env["PATHFINDER_CACHE_DIR"]; !ok {
				tt.env["PATHFINDER_CACHE_DIR"] = "" // not the tests' shared cache: the default
			}
			f := newFinder(t, tt.env, tt.config)
			got := f.Cache()
			if got.Dir != tt.want || !strings.Contains(got.Off, tt.off) || got.Disabled != tt.disabled || (got.Dir == "") == (got.Off == "") {
				t.Fatalf("Cache() = %+v, want dir %q, off with %q, disabled %v", got, tt.want, tt.off, tt.disabled)
			}
			if (f.resultKey(DynamicLib, "cudart") == "") != (tt.want == "") || (f.cacheDir == "") != (tt.want == "") {
				t.Fatalf("result cache on: %v, compilation cache %q; want the cache dir %q", f.resultKey(DynamicLib, "cudart") != "", f.cacheDir, tt.want)
			}
			f.Find(bg, "cudart") // a search writes what the cache keeps, when it is on
			if _, err := os.Stat(missing); !os.IsNotExist(err) {
				t.Fatalf("%s was made: %v", missing, err)
			}
			for _, d := range tt.made {
				if fi, err := os.Stat(filepath.Join(top, d)); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
					t.Fatalf("%s: %v, %v; want a directory made mode 0700", d, fi, err)
				}
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
	filetree.Put(t, site, "nvidia/cu13/lib/libcupti.so.13", elfLib(t, "libcupti.so.13"))
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
	module := filetree.PutMode(t, dir, "site.wasm", []byte("\x00asm\x01\x00\x00\x00"), 0o644)
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
			file := filetree.Put(t, dir, "p.toml", []byte(tt.config))
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

// TestConfig_foundVia: the built-in configuration labels what conda finds "conda"; a layer that sets
// found_via = "" gives the step its grant's label back, the variable's name.
func TestConfig_foundVia(t *testing.T) {
	prefix := t.TempDir()
	want := filetree.Put(t, prefix, "lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	for config, label := range map[string]string{
		"[search]\norder = [\"conda\"]\n":                                     "conda",
		"[search]\norder = [\"conda\"]\n\n[plugin.conda]\nfound_via = \"\"\n": "CONDA_PREFIX",
	} {
		lib, err := newFinder(t, testEnv{"CONDA_PREFIX": prefix}, config).Find(bg, "cudart")
		if err != nil || lib.Path != want || lib.FoundVia != label {
			t.Errorf("%q: %+v, %v; want %s found via %s", config, lib, err, want, label)
		}
	}
}
