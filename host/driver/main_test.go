package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain needs nothing for the libcuda probe's child: this package's initialisation serves it
// before TestMain runs, as it does before any program's main.
func TestMain(m *testing.M) {
	// A race-enabled child sleeps a second before exiting (GORACE atexit_sleep_ms) to catch late
	// reports; the children this binary starts have none to catch.
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	var err error
	if stubDir, err = os.MkdirTemp("", "pathfinder-driver-stubs-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(stubDir)
	os.Exit(code)
}

// stubDir holds the shared libraries the tests build with gcc, for the whole run.
var stubDir string

// fileMethods are the methods that only read files under Root: hermetic on any machine.
var fileMethods = []string{methodOverride, methodSetup, methodIoctl, methodSysfs, methodProcfs, methodUserSpace, methodPCI}

// fakeRoot builds a machine under t.TempDir(). Keys are absolute paths; a value of "dir" makes a
// folder, "link:<target>" a symlink, anything else a file with that content.
func fakeRoot(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for path, content := range files {
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case content == "dir":
			err = os.MkdirAll(full, 0o755)
		case strings.HasPrefix(content, "link:"):
			err = os.Symlink(strings.TrimPrefix(content, "link:"), full)
		default:
			err = os.WriteFile(full, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// sample reads a file from testdata.
func sample(t testing.TB, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// samples lists a testdata folder's files, so a test fails when a sample has no expectation.
func samples(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("testdata", dir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// env is a LookupEnv over a map: only what the test sets exists, so the host's environment (a real
// PATHFINDER_DRIVER_VERSION, CUDA_VISIBLE_DEVICES, PATH) never leaks into a result.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// liveFiles adds to files what a machine whose driver's own code may run has: the nvidia and
// nvidia_uvm modules loaded and their device nodes present (as plain files: nothing opens them but
// the ioctl method, which then fails as on any copy of /dev).
func liveFiles(files map[string]string) map[string]string {
	out := map[string]string{
		"/sys/module/nvidia/version": "550.54.14\n", "/sys/module/nvidia_uvm": "dir",
		"/dev/nvidiactl": "", "/dev/nvidia0": "", "/dev/nvidia-uvm": "", "/dev/nvidia-uvm-tools": "",
	}
	for k, v := range files {
		out[k] = v
	}
	return out
}

// probe runs Probe with hermetic defaults: only vars as environment, nothing on PATH.
func probe(t testing.TB, root string, methods []string, vars map[string]string) *Report {
	t.Helper()
	return Probe(context.Background(), Options{
		Root:      root,
		Methods:   methods,
		LookupEnv: env(vars),
		LookPath:  func(string) (string, error) { return "", os.ErrNotExist },
	})
}

// outcome returns the named method's outcome, failing the test when it did not run.
func outcome(t testing.TB, r *Report, name string) MethodOutcome {
	t.Helper()
	for _, m := range r.Methods {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("method %q not in report: %+v", name, r.Methods)
	return MethodOutcome{}
}

func wantOutcome(t testing.TB, r *Report, name string, want Outcome, detailHas ...string) {
	t.Helper()
	m := outcome(t, r, name)
	if m.Outcome != want {
		t.Errorf("%s: outcome %s (%s), want %s", name, m.Outcome, m.Detail, want)
	}
	for _, s := range detailHas {
		if !strings.Contains(m.Detail, s) {
			t.Errorf("%s: detail %q lacks %q", name, m.Detail, s)
		}
	}
}

func hasNote(r *Report, sub string) bool {
	for _, n := range r.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}
