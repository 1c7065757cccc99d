package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// isolate gives the command an environment with nothing from the machine that would change answers.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	// The go command's caches stay where they are: a build in a test must not start from nothing.
	for _, k := range []string{"GOCACHE", "GOMODCACHE"} {
		if v, err := exec.Command("go", "env", k).Output(); err == nil && os.Getenv(k) == "" {
			t.Setenv(k, strings.TrimSpace(string(v)))
		}
	}
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
		t.Setenv(k, v)
	}
	return home
}

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = doMain(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// gccLib builds a real shared object with the given soname at path, linked with deps.
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

func TestFind_json(t *testing.T) {
	isolate(t)
	site := t.TempDir()
	gccLib(t, filepath.Join(site, "nvidia/cu13/lib/libcudart.so.13"), "libcudart.so.13")
	t.Setenv("PATHFINDER_SITE_PACKAGES", site)
	// Flags after the names, two names, one unknown: one JSON line each, exit 1.
	out, _, code := run(t, "find", "cudart", "cudartt", "--json")
	if code != exitNotFound {
		t.Fatalf("exit %d, want %d", code, exitNotFound)
	}
	golden(t, "find.json", strings.ReplaceAll(out, site, "$SITE"))

	out, errOut, code := run(t, "find", "--json", "cudart")
	var line map[string]any
	if err := json.Unmarshal([]byte(out), &line); err != nil || code != exitOK {
		t.Fatalf("find --json cudart: exit %d, %v: %s %s", code, err, out, errOut)
	}
	for _, k := range []string{"name", "kind", "path", "found_via", "step"} {
		if _, ok := line[k]; !ok {
			t.Errorf("JSON line lacks %q: %s", k, out)
		}
	}
	out, _, code = run(t, "find", "cudart")
	if code != exitOK || out != filepath.Join(site, "nvidia/cu13/lib/libcudart.so.13")+"\n" {
		t.Fatalf("find cudart: exit %d, %q", code, out)
	}
}

func TestFind_notFound(t *testing.T) {
	isolate(t)
	out, _, code := run(t, "find", "nvfatbin", "--json")
	var line struct {
		Name, Error, Message string
		Attempts             []map[string]string
	}
	if err := json.Unmarshal([]byte(out), &line); err != nil {
		t.Fatal(err, out)
	}
	if code != exitNotFound || line.Error != "not-found" || line.Name != "nvfatbin" || len(line.Attempts) < 5 || !strings.Contains(line.Message, "libnvfatbin.so.13 or libnvfatbin.so.12") {
		t.Fatalf("exit %d, %+v", code, line)
	}
}

func TestUsageErrors(t *testing.T) {
	isolate(t)
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[search]\norder = [\"wheels\"]\ncolour = \"blue\"\n"), 0o644)
	badStep := filepath.Join(t.TempDir(), "step.toml")
	os.WriteFile(badStep, []byte("[library.cudart]\norder = [\"wheels\", \"nowhere\"]\n"), 0o644)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no command", nil, exitUsage, "usage: pathfinder COMMAND"},
		{"unknown command", []string{"fnd"}, exitUsage, `unknown command "fnd"`},
		{"unknown flag", []string{"find", "cudart", "--jsn"}, exitUsage, "unknown flag --jsn"},
		{"no names", []string{"find"}, exitUsage, "no library named"},
		{"unknown key in config", []string{"find", "cudart", "--config", bad}, exitUsage, bad + ":3:1: unknown key \"search.colour\""},
		{"unknown step in config", []string{"find", "cudart", "--config", badStep}, exitUsage, `library.cudart.order names unknown step "nowhere"`},
		{"missing config", []string{"list", "--config", "/nonexistent/p.toml"}, exitUsage, "no such file"},
		{"explain takes one", []string{"explain", "a", "b"}, exitUsage, "explain: takes one library name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := run(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.stderr)
			}
		})
	}
}

func TestHelpEverywhere(t *testing.T) {
	isolate(t)
	for _, c := range commands {
		for _, args := range [][]string{{c.name, "--help"}, {"help", c.name}} {
			out, _, code := run(t, args...)
			if code != exitOK || !strings.Contains(out, "usage: pathfinder "+c.name) {
				t.Errorf("%v: exit %d, %q", args, code, out)
			}
		}
	}
	out, _, code := run(t, "--help")
	if code != exitOK || !strings.Contains(out, "doctor") {
		t.Fatalf("--help: %d %q", code, out)
	}
}

func TestExplain(t *testing.T) {
	isolate(t)
	cuda := t.TempDir()
	gccLib(t, filepath.Join(cuda, "lib/libnvblas.so.13"), "libnvblas.so.13")
	os.WriteFile(filepath.Join(cuda, "lib/libnvblas.so.12"), []byte("not a library"), 0o644)
	t.Setenv("CUDA_HOME", cuda)
	out, _, code := run(t, "explain", "nvblas")
	for _, want := range []string{
		"steps: wheels → conda → already-loaded → system → envroots",
		"envroots        found",
		"✓ " + cuda + "/lib/libnvblas.so.13  (found via CUDA_HOME)",
		cuda + "/lib64  no such directory",
		"$CUDA_PATH  not set",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	out, _, _ = run(t, "explain", "nvblas", "--json")
	var ex struct {
		Steps []struct{ Step, Outcome string }
	}
	if err := json.Unmarshal([]byte(out), &ex); err != nil || len(ex.Steps) != 5 {
		t.Fatalf("explain --json: %v %s", err, out)
	}
}

func TestList(t *testing.T) {
	isolate(t)
	out, _, code := run(t, "list", "--json")
	type listed struct {
		Name, Kind, Category string
		Available            bool
	}
	libs := jsonLines[listed](t, out)
	if code != exitOK {
		t.Fatal(code)
	}
	perKind := map[string]int{}
	for _, l := range libs {
		perKind[l.Kind]++
	}
	// The catalog's 49 dynamic libraries and cudnn; 29 header sets and nccl's and cudnn's; 15 binaries
	// and ptxas; cudadevrt; three bitcode libraries.
	want := map[string]int{"dynamic-lib": 50, "header-dir": 31, "binary": 16, "static-lib": 1, "bitcode": 3}
	for k, n := range want {
		if perKind[k] != n {
			t.Errorf("%s: %d names, want %d", k, perKind[k], n)
		}
	}
	out, _, _ = run(t, "list", "--target", "windows/amd64", "--kind", "dynamic-lib", "--json")
	for _, l := range jsonLines[listed](t, out) {
		if l.Name == "cufile" && l.Available || l.Name == "cudart" && !l.Available {
			t.Errorf("on windows/amd64: %+v", l)
		}
	}
	out, _, _ = run(t, "list")
	golden(t, "list.txt", out)
}

func TestDoctor(t *testing.T) {
	isolate(t)
	conda := t.TempDir()
	gccLib(t, filepath.Join(conda, "lib/libnvjpeg.so.13"), "libnvjpeg.so.13")
	t.Setenv("CONDA_PREFIX", conda)
	out, _, code := run(t, "doctor", "--all", "--root", t.TempDir())
	for _, want := range []string{"CONDA_PREFIX=" + conda, "nvjpeg", conda + "/lib/libnvjpeg.so.13  (conda, CUDA 13)", "not found (looked for libcudart.so.13 or libcudart.so.12", "1 of 50 found"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	if code != exitNotFound { // the empty machine has no driver: a problem
		t.Fatalf("exit %d", code)
	}
}

// TestLoad_noCgoBinary builds pathfinder with CGO_ENABLED=0 and loads a library and its dependency
// with it: purego's dlopen works without cgo.
func TestLoad_noCgoBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := noCgoBinary(t)
	isolate(t)
	site := t.TempDir()
	fft := filepath.Join(site, "nvidia/cu13/lib/libcufft.so.12")
	gccLib(t, fft, "libcufft.so.12")
	gccLib(t, filepath.Join(site, "nvidia/cu13/lib/libcufftw.so.12"), "libcufftw.so.12", fft)
	cmd := exec.Command(bin, "load", "cufftw", "cufft", "--json")
	cmd.Env = append(os.Environ(), "PATHFINDER_SITE_PACKAGES="+site)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	want := fmt.Sprintf(`{"name":"cufftw","kind":"dynamic-lib","path":"%[1]s/nvidia/cu13/lib/libcufftw.so.12","found_via":"site-packages","step":"wheels","cuda":"13","version_from":"catalog","already_loaded":false,"dependencies":[{"name":"cufft","kind":"dynamic-lib","path":"%[1]s/nvidia/cu13/lib/libcufft.so.12","found_via":"site-packages","step":"wheels","cuda":"13","version_from":"catalog","already_loaded":false}]}
{"name":"cufft","kind":"dynamic-lib","path":"%[1]s/nvidia/cu13/lib/libcufft.so.12","found_via":"site-packages","step":"wheels","cuda":"13","version_from":"catalog","already_loaded":false}
`, site)
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func TestDriver_fakeRoot(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	for path, data := range map[string]string{
		"proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.144.03  Release Build  (dvs-builder@U16-I3-B03-4-3)  Mon Dec 30 17:10:20 UTC 2024\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n",
		"sys/module/nvidia/version":  "550.144.03\n",
		"dev/nvidiactl":              "",
	} {
		p := filepath.Join(root, path)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(data), 0o644)
	}
	out, errOut, code := run(t, "driver", "--root", root, "--json", "--methods", "sysfs,procfs")
	var report map[string]any
	if err := json.Unmarshal([]byte(out), &report); err != nil || code != exitOK {
		t.Fatalf("driver --json: exit %d %v\n%s%s", code, err, out, errOut)
	}
	if report["driver_version"] != "550.144.03" || report["max_cuda"] != "12.4" {
		t.Fatalf("report %v", report)
	}
	dir := t.TempDir()
	if _, errOut, code := run(t, "driver", "--root", root, "--format", "nfd", "--output", dir, "--methods", "sysfs"); code != exitOK {
		t.Fatalf("nfd: exit %d %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "pathfinder"))
	if err != nil || !strings.Contains(string(b), "nvidia.com/cuda.driver-version.major=550") {
		t.Fatalf("feature file: %v %q", err, b)
	}
	if _, _, code := run(t, "driver", "--root", t.TempDir()); code != exitNotFound {
		t.Fatalf("empty root: exit %d, want %d", code, exitNotFound)
	}
}

func TestFind_kindsTargetsAndOneToolkit(t *testing.T) {
	isolate(t)
	cuda := t.TempDir()
	for rel, data := range map[string]string{
		"include/cuda_runtime.h":           "",
		"include/cccl/cuda/std/version":    "",
		"nvvm/libdevice/libdevice.10.bc":   "BC\xc0\xde",
		"lib64/libcudadevrt.a":             "!<arch>\n",
		"bin/x64/nvcc.exe":                 "MZ",
		"include/cuda/std/not-the-version": "",
	} {
		p := filepath.Join(cuda, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(data), 0o644)
	}
	gccLib(t, filepath.Join(cuda, "lib64/libcudart.so.12"), "libcudart.so.12")
	gccLib(t, filepath.Join(cuda, "lib64/libnvrtc.so.12"), "libnvrtc.so.12")
	t.Setenv("CUDA_HOME", cuda)
	tests := []struct {
		args []string
		want string
		code int
	}{
		{[]string{"find", "cudart", "--kind", "header-dir"}, cuda + "/include\n", exitOK},
		{[]string{"find", "cccl", "--kind", "header-dir"}, cuda + "/include/cccl\n", exitOK},
		{[]string{"find", "device", "--kind", "bitcode"}, cuda + "/nvvm/libdevice/libdevice.10.bc\n", exitOK},
		{[]string{"find", "cudadevrt", "--kind", "static-lib"}, cuda + "/lib64/libcudadevrt.a\n", exitOK},
		// A Windows layout checked from Linux: the MZ stub is not a PE file, and explain says so.
		{[]string{"find", "nvcc", "--kind", "binary", "--target", "windows/amd64"}, "", exitNotFound},
		{[]string{"find", "--all-from-one-toolkit", "cudart", "nvrtc"}, cuda + "/lib64/libcudart.so.12\n" + cuda + "/lib64/libnvrtc.so.12\n", exitOK},
		{[]string{"find", "cudart", "--kind", "shader"}, "", exitUsage},
		{[]string{"find", "cudart", "--target", "plan9/mips"}, "", exitUsage},
		{[]string{"load", "cudart", "--target", "windows/amd64"}, "", exitUsage},
	}
	for _, tt := range tests {
		out, errOut, code := run(t, tt.args...)
		if code != tt.code || out != tt.want {
			t.Errorf("%v: exit %d, %q (stderr %q); want %d, %q", tt.args, code, out, errOut, tt.code, tt.want)
		}
	}
	out, _, _ := run(t, "explain", "nvcc", "--kind", "binary", "--target", "windows/amd64")
	if !strings.Contains(out, "bin/x64/nvcc.exe  refused: not a PE file") {
		t.Errorf("explain for windows/amd64 lacks the PE refusal:\n%s", out)
	}
}

// builds are the binaries the tests built, one per set of build tags, each built once per test
// binary.
var (
	buildsMu sync.Mutex
	builds   = map[string]*build{}
)

type build struct {
	once sync.Once
	path string
	err  error
}

// noCgoBinary builds pathfinder with CGO_ENABLED=0, once per test binary, before any isolate().
func noCgoBinary(t *testing.T) string { return builtBinary(t, "") }

// staticBinary builds the fully static pathfinder (-tags pathfinder_static), as noCgoBinary does.
func staticBinary(t *testing.T) string { return builtBinary(t, "pathfinder_static") }

func builtBinary(t *testing.T, tags string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	buildsMu.Lock()
	b := builds[tags]
	if b == nil {
		b = &build{}
		builds[tags] = b
	}
	buildsMu.Unlock()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "pathfinder-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "pathfinder")
		cmd := exec.Command(goBin, "build", "-tags", tags, "-o", b.path, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build -tags %q: %v\n%s", tags, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := pluginCacheDir(); err == nil {
		os.RemoveAll(dir)
	}
	for _, b := range builds {
		if b.path != "" {
			os.RemoveAll(filepath.Dir(b.path))
		}
	}
	os.Exit(code)
}
