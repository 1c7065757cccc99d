package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakepe"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
)

// The helpers the command's tests share: the environment a test runs the command in, the
// binaries built once, real shared objects, golden files and captured machines.

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// testEnv is the environment a test runs the command in: this process's, with the variables the
// test sets over it. A test sets them here, never on the process (t.Setenv), so tests run in parallel.
type testEnv struct{ vars map[string]string }

// Setenv sets key for the command; an empty value is set, not unset, as with t.Setenv.
func (e *testEnv) Setenv(key, value string) { e.vars[key] = value }

func (e *testEnv) LookupEnv(key string) (string, bool) {
	if v, ok := e.vars[key]; ok {
		return v, true
	}
	return os.LookupEnv(key)
}

// Environ is the environment for a child process, with extra ("KEY=value") over it.
func (e *testEnv) Environ(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !e.has(k) {
			env = append(env, kv)
		}
	}
	for k, v := range e.vars {
		env = append(env, k+"="+v)
	}
	return append(env, extra...)
}

func (e *testEnv) has(key string) bool { _, ok := e.vars[key]; return ok }

// clone is a copy of e for a subtest to set its own variables on.
func (e *testEnv) clone() *testEnv { return &testEnv{vars: maps.Clone(e.vars)} }

// run runs the command in this environment.
func (e *testEnv) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = doMain(context.Background(), environment{Args: args, LookupEnv: e.LookupEnv, Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), code
}

// command is name with args, to run in this environment.
func (e *testEnv) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = e.Environ()
	return cmd
}

// lookPath finds file in this environment's PATH, as exec.LookPath does in the process's.
func (e *testEnv) lookPath(file string) (string, error) {
	path, _ := e.LookupEnv("PATH")
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", file, exec.ErrNotFound)
}

// goCaches are the go command's build and module caches, which stay where they are when isolate
// moves HOME: a build in a test must not start from nothing.
var goCaches = sync.OnceValue(func() map[string]string {
	caches := map[string]string{}
	for _, k := range []string{"GOCACHE", "GOMODCACHE"} {
		if v, err := exec.Command(goTool, "env", k).Output(); goToolErr == nil && err == nil && os.Getenv(k) == "" {
			caches[k] = strings.TrimSpace(string(v))
		}
	}
	return caches
})

// isolate gives the command an environment with nothing from the machine that would change answers.
func isolate(t *testing.T) *testEnv {
	t.Helper()
	home := t.TempDir()
	e := &testEnv{vars: maps.Clone(goCaches())}
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"),
		"PATHFINDER_CACHE_DIR":     filepath.Join(os.TempDir(), "pathfinder-test-cache"),
		"PATHFINDER_SITE_PACKAGES": "", "PATHFINDER_CONFIG": "", "VIRTUAL_ENV": "", "CONDA_PREFIX": "",
		"CUDA_HOME": "", "CUDA_PATH": "", "CUDNN_PATH": "", "NCCL_HOME": "", "LD_LIBRARY_PATH": "",
		"PATH": "/usr/bin:/bin",
		// The compatibility check would hold answers to this machine's driver: off, unless a test
		// about it turns it on and pins the driver it means.
		"PATHFINDER_COMPATIBILITY": "off", "PATHFINDER_CUDA": "", "PATHFINDER_DRIVER_COMPATIBILITY": "",
	} {
		e.Setenv(k, v)
	}
	return e
}

// gccLib builds a real shared object with the given soname at path.
func gccLib(t *testing.T, path, soname string, deps ...string) {
	t.Helper()
	elfso.Build(t, path, soname, "int marker(void) { return 1; }\n", deps...)
}

// jsonLines decodes out as JSON Lines: every line one whole JSON object.
func jsonLines[T any](t *testing.T, out string) []T {
	t.Helper()
	var all []T
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var v T
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &v) != nil {
			t.Fatalf("not one JSON object per line: %q in\n%s", line, out)
		}
		all = append(all, v)
	}
	return all
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// built is what a go build made once for the whole test binary: a build takes seconds even with a
// warm cache.
type built[T any] struct {
	once sync.Once
	v    T
	err  error
}

// buildOnce returns what build makes for key in m, building it on the first call only.
func buildOnce[T any](t *testing.T, m *sync.Map, key string, build func() (T, error)) T {
	t.Helper()
	if goToolErr != nil {
		t.Skip("go not on PATH")
	}
	v, _ := m.LoadOrStore(key, &built[T]{})
	b := v.(*built[T])
	b.once.Do(func() { b.v, b.err = build() })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.v
}

// binaries are the pathfinder binaries the tests built, one per set of build tags; TestMain removes
// them.
var binaries sync.Map // build tags -> *built[string], the binary's path

// noCgoBinary builds pathfinder with CGO_ENABLED=0, once per test binary.
func noCgoBinary(t *testing.T) string { return builtBinary(t, "") }

// staticBinary builds the fully static pathfinder (-tags pathfinder_static), as noCgoBinary does.
func staticBinary(t *testing.T) string { return builtBinary(t, "pathfinder_static") }

func builtBinary(t *testing.T, tags string) string {
	t.Helper()
	return buildOnce(t, &binaries, tags, func() (string, error) {
		dir, err := os.MkdirTemp("", "pathfinder-bin-")
		if err != nil {
			return "", err
		}
		path := filepath.Join(dir, "pathfinder")
		cmd := exec.Command(goTool, "build", "-tags", tags, "-o", path, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return path, fmt.Errorf("go build -tags %q: %v\n%s", tags, err, out)
		}
		return path, nil
	})
}

// runBin runs the binary bin in this environment with extra ("KEY=value") over it.
func (e *testEnv) runBin(t *testing.T, bin string, extra []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = e.Environ(extra...)
	return runCommand(t, cmd)
}

// putPE writes a PE DLL for machine at rel under dir, or an archive for a .lib, and returns its path.
func putPE(t *testing.T, dir, rel string, machine uint16) string {
	t.Helper()
	data := fakepe.File(machine, true)
	if strings.HasSuffix(rel, ".lib") {
		data = []byte("!<arch>\n")
	}
	return filetree.PutMode(t, dir, rel, data, 0o644)
}

// readme is README.md as words separated by single spaces, without the backquotes of code.
func readme(t *testing.T) string {
	t.Helper()
	return strings.Join(strings.Fields(strings.ReplaceAll(repoFile(t, "README.md"), "`", "")), " ")
}

// repoFile is the text of the repository's file at rel, a path from its root.
func repoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// document is one a newcomer reads: the README, docs/, and each folder's README.
type document struct{ path, text string }

// docs are the documents a newcomer reads, each read.
func docs(t *testing.T) []document {
	t.Helper()
	files := []string{"../../README.md", "../../ARCHITECTURE.md"}
	for _, pattern := range []string{"../../docs/*.md", "../../*/README.md", "../../*/*/README.md", "../../testdata/*/README.md"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	var out []document
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, document{f, string(data)})
	}
	return out
}

// goSource is the module's Go, every file joined: its test files, or the others.
func goSource(tests bool) string {
	var src strings.Builder
	filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && strings.HasSuffix(p, "_test.go") == tests {
			b, _ := os.ReadFile(p)
			src.Write(b)
		}
		return nil
	})
	return src.String()
}

// pluginCacheDir is the compilation cache of the tests that compile a site plugin, one per test
// binary: a busy machine may compile a Go plugin over its step's timeout, and the refusal,
// remembered in the cache, must end with the run rather than fail every later one.
var pluginCacheDir = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "pathfinder-plugin-cache-") })

// usePluginCache points the command at the test binary's own plugin cache.
func (e *testEnv) usePluginCache(t *testing.T) {
	t.Helper()
	dir, err := pluginCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	e.Setenv("PATHFINDER_CACHE_DIR", dir)
}

// write writes data at path, creating directories, with mode 0644 (a plugin must not be writable by
// others, whatever the umask).
func write(t *testing.T, path string, data []byte) string {
	t.Helper()
	return filetree.PutMode(t, filepath.Dir(path), filepath.Base(path), data, 0o644)
}

// runChild runs pathfinder with args in a child process, in this environment.
func (e *testEnv) runChild(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestExtensibility_helperProcess$")
	cmd.Env = e.Environ("PATHFINDER_TEST_CHILD_ARGS=" + strings.Join(args, "\x1f"))
	return runCommand(t, cmd)
}

// runCommand runs cmd and returns what it printed and its exit status.
func runCommand(t *testing.T, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

// squeezeSpaces turns every run of spaces into one.
func squeezeSpaces(s string) string {
	for strings.Contains(s, "  ") {
		s = strings.ReplaceAll(s, "  ", " ")
	}
	return s
}

// machine builds a captured machine under a temporary root: files by absolute path ("dir" makes a
// folder, filetree.Write), and the libcuda and libnvidia-ml of Debian's real driver packages where
// suite is set.
func machine(t *testing.T, suite string, files map[string]string) string {
	t.Helper()
	root := filetree.New(t, files)
	if suite != "" {
		if runtime.GOARCH != "amd64" {
			t.Skip("the unpacked Debian packages are amd64's")
		}
		libdir := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
		for _, pkg := range []string{"libcuda1", "libnvidia-ml1"} {
			p := realnv.Get(t, suite+"/"+pkg)
			version := strings.SplitN(p.Version, "-", 2)[0]
			soname := map[string]string{"libcuda1": "libcuda.so.1", "libnvidia-ml1": "libnvidia-ml.so.1"}[pkg]
			file := strings.TrimSuffix(soname, "1") + version
			realnv.Place(t, p.Path("usr/lib/x86_64-linux-gnu/nvidia/current/"+file), filepath.Join(libdir, file))
			filetree.Symlink(t, file, filepath.Join(libdir, soname))
		}
	}
	return root
}

// kernelModule is what a loaded nvidia module of version v shows in /sys and /proc.
func kernelModule(v string, ctl bool) map[string]string {
	m := map[string]string{
		"/sys/module/nvidia/version":  v + "\n",
		"/proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  " + v + "  Release Build  (dvs-builder@U22-I3-AE18-23-3)  Wed Jun 18 00:00:00 UTC 2025\n",
	}
	if ctl {
		m["/dev/nvidiactl"] = ""
	}
	return m
}
