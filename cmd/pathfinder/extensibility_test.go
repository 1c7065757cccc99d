package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// goTool is the process's own go command, whatever PATH isolate() gives the command under test;
// goEnv keeps the go command's build and module caches where they were before isolate() moved HOME
// (a cold build cache costs a minute).
var (
	goTool, goToolErr = exec.LookPath("go")
	goEnv             = []string{"HOME=" + os.Getenv("HOME"), "GOFLAGS=", "GOWORK=off", "GOPROXY=off"}
)

// wasmBuilds are the Go plugins the tests built, one per package directory.
var wasmBuilds sync.Map // package dir -> *built[[]byte], the module's bytes

// buildWasm builds the plugin in dir (a Go package) and returns the module's bytes. -trimpath and no
// symbols make the bytes the same from run to run, so wazero's compilation cache serves later runs.
func buildWasm(t *testing.T, dir string) []byte {
	t.Helper()
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return buildOnce(t, &wasmBuilds, dir, func() ([]byte, error) {
		out, err := os.MkdirTemp("", "pathfinder-wasm-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(out)
		cmd := exec.Command(goTool, "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(out, "plugin.wasm"), ".")
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), goEnv...), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%v in %s: %v\n%s", cmd.Args, dir, err, msg)
		}
		return os.ReadFile(filepath.Join(out, "plugin.wasm"))
	})
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestExtensibility_helperProcess is not a test of its own: the end-to-end tests run the command in a
// child process through it (os/exec's helper-process pattern) when it loads libraries, so that what
// it loads does not stay loaded in this process, where later tests would find it "already loaded".
func TestExtensibility_helperProcess(t *testing.T) {
	t.Parallel()
	args := os.Getenv("PATHFINDER_TEST_CHILD_ARGS")
	if args == "" {
		t.Skip("run by the end-to-end tests, as a child process")
	}
	os.Exit(doMain(context.Background(), environment{Args: strings.Split(args, "\x1f"), LookupEnv: os.LookupEnv, Stdout: os.Stdout, Stderr: os.Stderr}))
}

// optappsSite is a site with toolkits under opt/apps/cuda that only the optapps plugin knows, a
// wheel with another cudart, and a config in etc/ that pins the plugin by a path relative to it.
type optappsSite struct {
	base, root, site, config, wasm, sum string
}

func newOptappsSite(t *testing.T, e *testEnv) *optappsSite {
	t.Helper()
	e.usePluginCache(t)
	code := buildWasm(t, "../../examples/plugins/optapps")
	s := &optappsSite{base: t.TempDir(), sum: sha256Hex(code)}
	s.root = filepath.Join(s.base, "opt/apps/cuda")
	gccLib(t, filepath.Join(s.root, "12.8/lib64/libcudart.so.12"), "libcudart.so.12")
	gccLib(t, filepath.Join(s.root, "13.0/lib64/libcudart.so.13"), "libcudart.so.13")
	gccLib(t, filepath.Join(s.root, "13.0/lib64/libnvrtc.so.13"), "libnvrtc.so.13")
	filetree.Symlink(t, "13.0", filepath.Join(s.root, "latest"))
	s.site = filepath.Join(s.base, "site-packages")
	gccLib(t, filepath.Join(s.site, "nvidia/cu13/lib/libcudart.so.13"), "libcudart.so.13")
	e.Setenv("PATHFINDER_SITE_PACKAGES", s.site)
	s.wasm = write(t, filepath.Join(s.base, "etc/plugins/optapps.wasm"), code)
	s.config = filepath.Join(s.base, "etc/pathfinder.toml")
	s.writeConfig(t, "")
	return s
}

// chdirAway moves the test to a working directory that holds a plugin of the same relative name as
// the config's: it must never be the one used.
func chdirAway(t *testing.T) {
	cwd := t.TempDir()
	write(t, filepath.Join(cwd, "plugins/optapps.wasm"), []byte("not this one"))
	t.Chdir(cwd)
}

// writeConfig writes the site's config: optapps pinned, granted its root and its variable, first for
// cudart only. Each line of edits, "key = value", replaces the line that sets key, or is added to the
// plugin's table after source; a line starting with "+" is added even when key is set.
func (s *optappsSite) writeConfig(t *testing.T, edits string) {
	t.Helper()
	lines := []string{
		"[plugin.optapps]",
		`source = "plugins/optapps.wasm"`,
		fmt.Sprintf("sha256 = %q", s.sum),
		`env = ["OPTAPPS_ROOT"]`,
		fmt.Sprintf("read = [%q]", s.root),
		`timeout = "10m"`, // its first compile is part of its step, and takes many seconds under -race
		"",
		"[plugin.optapps.options]",
		fmt.Sprintf("root = %q", s.root),
		"",
		"[library.cudart]",
		`order = ["optapps", "wheels", "conda", "already-loaded", "system", "envroots"]`,
	}
	for _, e := range strings.Split(edits, "\n") {
		add := strings.HasPrefix(e, "+")
		e = strings.TrimPrefix(e, "+")
		key, _, ok := strings.Cut(e, " = ")
		if !ok {
			continue
		}
		replaced := false
		for i, l := range lines {
			if !add && !replaced && strings.HasPrefix(l, key+" = ") {
				lines[i], replaced = e, true
			}
		}
		if !replaced {
			lines = append(lines[:2], append([]string{e}, lines[2:]...)...)
		}
	}
	write(t, s.config, []byte(strings.Join(lines, "\n")+"\n"))
}

// A site plugin in a temp dir, pinned, ordered before wheels for cudart only, finds a toolkit the
// builtin steps cannot; find, explain, load, plugins and config check all see it.
func TestSitePlugin_endToEnd(t *testing.T) {
	// Not parallel: chdirAway changes the process's working directory.
	e := isolate(t)
	s := newOptappsSite(t, e)
	newest := filepath.Join(s.root, "13.0/lib64/libcudart.so.13")
	t.Run("from another working directory", func(t *testing.T) {
		chdirAway(t)

		// cudart through optapps; nvrtc, which only the site has, is found by no builtin step (the
		// reordering is for cudart only).
		out, errOut, code := e.run(t, "find", "cudart", "nvrtc", "--config", s.config, "--json")
		lines := strings.Split(out, "\n")
		var lib, nvrtc struct {
			Path     string
			FoundVia string `json:"found_via"`
			Step     string
			Error    string
		}
		if len(lines) != 3 || json.Unmarshal([]byte(lines[0]), &lib) != nil || json.Unmarshal([]byte(lines[1]), &nvrtc) != nil || code != exitNotFound {
			t.Fatalf("find cudart nvrtc: exit %d: %s %s", code, out, errOut)
		}
		if lib.Path != newest || lib.FoundVia != "optapps" || lib.Step != "optapps" || nvrtc.Error != "not-found" {
			t.Fatalf("find cudart = %+v, nvrtc = %+v; want %s from the optapps step, and nvrtc not found", lib, nvrtc, newest)
		}
		// Without the site's config, the wheel's cudart.
		if out, _, _ := e.run(t, "find", "cudart"); out != filepath.Join(s.site, "nvidia/cu13/lib/libcudart.so.13")+"\n" {
			t.Fatalf("find cudart without the config: %q", out)
		}
		out, _, _ = e.run(t, "explain", "cudart", "--config", s.config)
		for _, want := range []string{
			"steps: optapps → wheels → conda → already-loaded → system → envroots",
			"1. optapps",
			"✓ " + newest + "  (found via optapps)",
			s.root + "/latest  not a version directory",
			"2 toolkits under " + s.root + ": 13.0, 12.8",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("explain lacks %q:\n%s", want, out)
			}
		}
		// Loaded in a child process: the real dlopen of the plugin's candidate.
		out, errOut, code = e.runChild(t, "load", "cudart", "--config", s.config, "--json")
		if code != exitOK || !strings.Contains(out, `"path":"`+newest+`","found_via":"optapps","step":"optapps"`) {
			t.Fatalf("load cudart: exit %d %s %s", code, out, errOut)
		}
	})
	out, errOut, code := e.run(t, "plugins", "--config", s.config)
	if code != exitOK {
		t.Fatalf("plugins: exit %d %s", code, errOut)
	}
	golden(t, "plugins.txt", squeezeSpaces(strings.NewReplacer(s.base, "$TMP", s.sum, "$OPTAPPS_SHA256", sha256Hex(builtin.StepsModule()), "$BUILTIN_SHA256").Replace(out)))
	if out, errOut, code := e.run(t, "config", "check", s.config); code != exitOK || out != s.config+": ok\n" {
		t.Fatalf("config check: exit %d %q %q", code, out, errOut)
	}
}

// Bad site plugins and configs: a clear error with file:line:col and what was expected, exit 2, and
// nothing half-applied (no command runs with part of a config).
func TestSitePlugin_Errors(t *testing.T) {
	// Not parallel: chdirAway changes the process's working directory; its cases, one after another,
	// rewrite the one config.
	e := isolate(t)
	s := newOptappsSite(t, e)
	chdirAway(t)
	tests := []struct {
		name   string
		edits  string
		setup  func(t *testing.T)
		args   []string // default: find cudart --config s.config
		stderr []string
	}{
		{name: "a pin that does not match",
			edits:  fmt.Sprintf("sha256 = %q", strings.Repeat("ab", 32)),
			stderr: []string{"$TMP/etc/pathfinder.toml:3:1: plugin \"optapps\": $TMP/etc/plugins/optapps.wasm has sha256 $SUM, not the pinned abab", "(named in library.cudart.order)"}},
		{name: "a pin that is not a sha256",
			edits:  `sha256 = "0e64a7b8"`,
			stderr: []string{`$TMP/etc/pathfinder.toml:3:1: plugin "optapps": sha256 "0e64a7b8" is not 64 hex digits`}},
		{name: "a missing plugin file, resolved against the config's directory, not the working directory",
			edits:  `source = "plugins/gone.wasm"`,
			stderr: []string{`$TMP/etc/pathfinder.toml:2:1: plugin "optapps": $TMP/etc/plugins/gone.wasm: no such file or directory`}},
		{name: "a plugin file others can write",
			setup:  func(t *testing.T) { os.Chmod(s.wasm, 0o666) },
			stderr: []string{"$TMP/etc/plugins/optapps.wasm is writable by others than its owner (mode 0666): refused", "allow_writable = true"}},
		{name: "an order naming a plugin that is not defined",
			edits:  `order = ["optapp", "wheels"]`,
			stderr: []string{`$TMP/etc/pathfinder.toml:12:1: library.cudart.order names unknown step "optapp"`}},
		{name: "an unknown key",
			edits:  `colour = "blue"`,
			stderr: []string{`$TMP/etc/pathfinder.toml:3:1: unknown key "plugin.optapps.colour"`}},
		{name: "malformed TOML",
			edits:  `env = ["OPTAPPS_ROOT"`,
			stderr: []string{"$TMP/etc/pathfinder.toml:5:"}},
		{name: "a duplicate key",
			edits:  `timeout = "1s"` + "\n" + `+timeout = "2s"`,
			stderr: []string{"$TMP/etc/pathfinder.toml:", "timeout"}},
		{name: "a plugin asking for env it is not granted",
			edits:  `env = []`,
			args:   []string{"plugins", "--config", "$CONFIG"},
			stderr: nil}, // checked below: plugins prints the problem on stdout and exits 2
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.writeConfig(t, tt.edits)
			os.Chmod(s.wasm, 0o644)
			if tt.setup != nil {
				tt.setup(t)
			}
			args := tt.args
			if args == nil {
				args = []string{"find", "cudart", "--config", "$CONFIG"}
			}
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], "$CONFIG", s.config)
			}
			out, errOut, code := e.run(t, args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d: %s %s", code, exitUsage, out, errOut)
			}
			for _, w := range tt.stderr {
				w = strings.NewReplacer("$TMP", s.base, "$SUM", s.sum).Replace(w)
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
			if tt.stderr == nil && !strings.Contains(out, `problem       asks for env OPTAPPS_ROOT (its describe export), which [plugin.optapps] env does not grant`) {
				t.Errorf("plugins output lacks the problem:\n%s", out)
			}
			// config check says the same of the file alone.
			if _, checkErr, code := e.run(t, "config", "check", s.config); code != exitUsage || !strings.HasPrefix(checkErr, "pathfinder: ") {
				t.Errorf("config check: exit %d %q", code, checkErr)
			}
		})
	}
	// Allowed in so many words, a writable plugin runs.
	s.writeConfig(t, "allow_writable = true")
	os.Chmod(s.wasm, 0o666)
	if out, errOut, code := e.run(t, "find", "cudart", "--config", s.config); code != exitOK || !strings.HasPrefix(out, s.root) {
		t.Fatalf("allow_writable: exit %d %q %q", code, out, errOut)
	}
}

// A vendor's pack in a venv's share/pathfinder/packs.d adds a library that find resolves and load
// loads after its dependency, cublas, from the builtin pack.
func TestPacks_endToEnd(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	venv := t.TempDir()
	site := filepath.Join(venv, "lib/python3.12/site-packages")
	lt := filepath.Join(site, "nvidia/cu13/lib/libcublasLt.so.13")
	cublas := filepath.Join(site, "nvidia/cu13/lib/libcublas.so.13")
	acme := filepath.Join(site, "acme_fft/lib/libacmefft.so.2")
	gccLib(t, lt, "libcublasLt.so.13")
	gccLib(t, cublas, "libcublas.so.13", "-Wl,--no-as-needed", lt)
	// acmefft needs libcublas.so.13 by soname: only a process that loaded cublas first can load it.
	gccLib(t, acme, "libacmefft.so.2", "-Wl,--no-as-needed", cublas)
	pack := write(t, filepath.Join(venv, "share/pathfinder/packs.d/acme.toml"), []byte(`[[library]]
name = "acmefft"
packaged_with = "other"
linux_sonames = ["libacmefft.so.2"]
site_packages_linux = ["acme_fft/lib"]
dependencies = ["cublas"]
`))
	e.Setenv("VIRTUAL_ENV", venv)
	// The compatibility check as a user has it, on a driver that runs CUDA 13.
	e.Setenv("PATHFINDER_COMPATIBILITY", "strict")
	e.Setenv("PATHFINDER_DRIVER_VERSION", "580.65.06")

	out, errOut, code := e.run(t, "find", "acmefft")
	if code != exitOK || out != acme+"\n" {
		t.Fatalf("find acmefft: exit %d %q %q", code, out, errOut)
	}
	out, errOut, code = e.runChild(t, "load", "acmefft", "cublas", "--json")
	// cuBLAS's file name says CUDA 13 and no minor: a 13.0 driver runs it by minor-version
	// compatibility. acmefft says nothing of its CUDA: taken with a note, as no dated one runs.
	cuda13 := `"cuda":"13","version_from":"catalog","compat":"minor-version","notes":["CUDA 13 runs by minor-version compatibility (driver 580.65.06 runs CUDA 13.0 natively): PTX from a newer CUDA 13 minor cannot be JIT-compiled by this driver"]`
	cublasLine := fmt.Sprintf(`{"name":"cublas","kind":"dynamic-lib","path":%q,"found_via":"site-packages","step":"wheels",%s,"already_loaded":false,"dependencies":[{"name":"cublasLt","kind":"dynamic-lib","path":%q,"found_via":"site-packages","step":"wheels",%s,"already_loaded":false}]}`, cublas, cuda13, lt, cuda13)
	want := fmt.Sprintf(`{"name":"acmefft","kind":"dynamic-lib","path":%q,"found_via":"site-packages","step":"wheels","notes":["taken although no source says which CUDA it belongs to: no dated candidate runs"],"already_loaded":false,"dependencies":[%s]}
%s
`, acme, cublasLine, cublasLine)
	if code != exitOK || out != want {
		t.Fatalf("load acmefft cublas: exit %d\n%s%s\nwant\n%s", code, out, errOut, want)
	}
	// docs/packs.md shows these lines, for a venv at /venv.
	_, sample, _ := strings.Cut(repoFile(t, "docs/packs.md"), "$ PATHFINDER_DRIVER_VERSION=580.65.06 pathfinder load acmefft cublas --json")
	_, sample, _ = strings.Cut(sample, "\n")
	if got := strings.ReplaceAll(out, venv, "/venv"); !strings.HasPrefix(sample, got) {
		t.Errorf("docs/packs.md's load --json sample differs from what load prints:\n%s\nwant\n%s", sample, got)
	}
	out, _, code = e.run(t, "packs")
	if code != exitOK {
		t.Fatalf("packs: exit %d", code)
	}
	// Column widths depend on the temporary paths, so spaces are squeezed before the comparison.
	golden(t, "packs.txt", squeezeSpaces(strings.NewReplacer(venv, "$VENV", e.vars["HOME"], "$HOME").Replace(out)))
	if out, _, _ := e.run(t, "list", "--names"); !strings.Contains(out, "\nacmefft\n") {
		t.Errorf("list --names lacks acmefft")
	}

	// Without the dependency, the library cannot be loaded: the loader says why.
	write(t, pack, []byte("[[library]]\nname = \"acmefft\"\npackaged_with = \"other\"\nlinux_sonames = [\"libacmefft.so.2\"]\nsite_packages_linux = [\"acme_fft/lib\"]\n"))
	if out, _, code := e.runChild(t, "load", "acmefft", "--json"); code != exitNotFound || !strings.Contains(out, `"error":"load-failed"`) || !strings.Contains(out, "libcublas.so.13") {
		t.Fatalf("load without the dependency: exit %d %s", code, out)
	}
	// Redefining a builtin library without replaces = true is an error that names both packs.
	write(t, pack, []byte("[[library]]\nname = \"cublas\"\npackaged_with = \"other\"\nlinux_sonames = [\"libcublas.so.13\"]\n"))
	_, errOut, code = e.run(t, "find", "cublas")
	if code != exitUsage || !strings.Contains(errOut, `library "cublas" is defined by both builtin:nvidia.toml:`) || !strings.Contains(errOut, pack+":1") {
		t.Fatalf("shadowing cublas: exit %d %q", code, errOut)
	}
}

func TestConfig_effective(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	dir := t.TempDir()
	user := filepath.Join(e.vars["XDG_CONFIG_HOME"], "pathfinder/pathfinder.toml")
	write(t, user, []byte("[plugin.conda]\ntimeout = \"2s\"\n\n[packs]\ndirs = [\"packs\"]\n"))
	os.MkdirAll(filepath.Join(filepath.Dir(user), "packs"), 0o755)
	config := write(t, filepath.Join(dir, "site.toml"), []byte("[search]\norder = [\"conda\", \"wheels\", \"system\"]\n\n[library.cudart]\norder = [\"wheels\"]\n"))
	out, errOut, code := e.run(t, "config", "--config", config)
	if code != exitOK {
		t.Fatalf("config: exit %d %s", code, errOut)
	}
	golden(t, "config.txt", squeezeSpaces(strings.NewReplacer(dir, "$DIR", e.vars["HOME"], "$HOME", os.TempDir(), "$TMPDIR").Replace(out)))
	out, _, _ = e.run(t, "config", "--config", config, "--json")
	settings := jsonLines[struct{ Key, Origin string }](t, out)
	if len(settings) < 20 {
		t.Fatalf("config --json: %d settings", len(settings))
	}
	for _, s := range settings {
		if s.Key == "plugin.conda.timeout" && s.Origin != user+":2:1" {
			t.Errorf("plugin.conda.timeout comes from %s, want %s:2:1", s.Origin, user)
		}
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"config", "check", config}, exitOK, config + ": ok"},
		{[]string{"config", "check"}, exitUsage, "config: check takes one file"},
		{[]string{"config", "check", filepath.Join(dir, "nope.toml")}, exitUsage, "no such file"},
		{[]string{"config", "show"}, exitUsage, "config: takes no arguments, or check FILE"},
	} {
		out, errOut, code := e.run(t, tt.args...)
		if code != tt.code || !strings.Contains(out+errOut, tt.want) {
			t.Errorf("%v: exit %d %q %q; want %d and %q", tt.args, code, out, errOut, tt.code, tt.want)
		}
	}
}

// pathfinder plugin new makes a plugin that passes its own test, builds for wasip1 and finds a
// library under pathfinder.
func TestPluginNew(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go test and go build on the new plugin")
	}
	e := isolate(t)
	e.usePluginCache(t)
	dir := filepath.Join(t.TempDir(), "mine")
	out, errOut, code := e.run(t, "plugin", "new", "mine", dir)
	checkout, _ := filepath.Abs("../..")
	if code != exitOK || !strings.Contains(out, "go.mod replaces github.com/pathfinder-dev/pathfinder with the checkout at "+checkout) {
		t.Fatalf("plugin new: exit %d %s %s", code, out, errOut)
	}
	for _, f := range []string{"go.mod", "main.go", "native.go", "search.go", "search_test.go", "README.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if goToolErr != nil {
		t.Skip("go not on PATH")
	}
	// Its own test, natively, offline: the go.mod needs nothing from the network.
	cmd := exec.Command(goTool, "test", "./...")
	cmd.Dir = dir
	cmd.Env = e.Environ(goEnv...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test in the new plugin: %v\n%s", err, b)
	}
	code2 := buildWasm(t, dir)
	// And it runs under pathfinder, first for cudart, with its root option.
	root := t.TempDir()
	gccLib(t, filepath.Join(root, "lib64/libcudart.so.13"), "libcudart.so.13")
	wasm := write(t, filepath.Join(dir, "mine.wasm"), code2)
	config := write(t, filepath.Join(t.TempDir(), "p.toml"), []byte(fmt.Sprintf(
		"[plugin.mine]\nsource = %q\nsha256 = %q\nread = [%q]\ntimeout = \"10m\"\n[plugin.mine.options]\nroot = %q\n[library.cudart]\norder = [\"mine\", \"wheels\"]\n",
		wasm, sha256Hex(code2), root, root)))
	out, errOut, code = e.run(t, "find", "cudart", "--config", config, "--json")
	if code != exitOK || !strings.Contains(out, `"found_via":"mine","step":"mine"`) {
		t.Fatalf("find with the new plugin: exit %d %s %s", code, out, errOut)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"plugin", "new", "Mine"}, `"Mine" is not a step name`},
		{[]string{"plugin", "new", "system"}, `"system" is not a step name`},
		{[]string{"plugin", "new", "wheels"}, `"wheels" is the name of a builtin step: a site plugin needs its own name`},
		{[]string{"plugin", "new", "mine", dir}, "exists and is not empty; nothing was written"},
		{[]string{"plugin", "new"}, "usage: pathfinder plugin new NAME [DIR]"},
		{[]string{"plugin", "old", "x"}, "usage: pathfinder plugin new NAME [DIR]"},
		{[]string{"plugin", "new", "x", t.TempDir(), "--pathfinder", t.TempDir()}, "go.mod"},
	} {
		if _, errOut, code := e.run(t, tt.args...); code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d %q, want %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestPluginNew_outsideACheckout: the installed command (go install ./cmd/pathfinder), run in an
// empty directory far from any checkout, writes a plugin whose own test passes offline: its go.mod
// replaces the unpublished module with the checkout the command was built from.
func TestPluginNew_outsideACheckout(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs go test on the new plugin")
	}
	bin := noCgoBinary(t)
	e := isolate(t)
	empty := t.TempDir()
	cmd := e.command(bin, "plugin", "new", "mine")
	cmd.Dir = empty
	out, errOut, code := runCommand(t, cmd)
	checkout, _ := filepath.Abs("../..")
	if code != exitOK || !strings.Contains(out, "go.mod replaces github.com/pathfinder-dev/pathfinder with the checkout at "+checkout) {
		t.Fatalf("plugin new mine in %s: exit %d %s %s", empty, code, out, errOut)
	}
	if goToolErr != nil {
		t.Skip("go not on PATH")
	}
	test := exec.Command(goTool, "test", "./...")
	test.Dir = filepath.Join(empty, "mine")
	test.Env = e.Environ(goEnv...)
	if b, err := test.CombinedOutput(); err != nil {
		t.Fatalf("go test in the new plugin: %v\n%s", err, b)
	}
	docs, _ := os.ReadFile("../../docs/plugins.md")
	if want := "pathfinder plugin new mine # a new search plugin that builds and passes its own test, in any directory: its go.mod points at the checkout pathfinder was built from (or --pathfinder DIR)"; !strings.Contains(squeezeSpaces(readme(t)), want) {
		t.Errorf("README lacks %q", want)
	}
	if want := "cd ~/src && pathfinder plugin new mine"; !strings.Contains(string(docs), want) {
		t.Errorf("docs/plugins.md lacks %q", want)
	}
}
