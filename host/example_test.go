package host_test

import (
	"context"
	"errors"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/host"
	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
)

// The README's Go section is this example's body: TestExample_isTheREADME keeps them the same, and
// TestExample_runs runs it over a virtual environment of known libraries and checks what it prints.
func Example() {
	ctx := context.Background()

	lib, err := host.Load(ctx, "cudart") // finds it, loads its dependencies, then it; remembered for the process
	var se *host.SearchError
	switch {
	case err == nil:
		fmt.Println(lib.Path, lib.FoundVia, lib.AlreadyLoaded)
	case errors.As(err, &se):
		fmt.Println(se.Code(), se.Path(), len(se.Attempts())) // not-found, refused, load-failed...; every place looked
	default:
		fmt.Println(err) // a configuration error
	}

	f, err := host.New(host.Options{CUDA: "13"}) // a Finder of your own: the CUDA the program was built for, a site config, another platform
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	if p, err := f.Find(ctx, "nvrtc"); err == nil { // find without loading
		fmt.Println(p.Path, p.LoadProblem)               // what would stop a load of it, told without loading
		fmt.Println(p.CUDA, p.Compat, len(p.PassedOver)) // its CUDA; how the driver runs it; what did not run
	}
	ex := f.Explain(ctx, search.DynamicLib, "cudnn") // the whole trace: every step, candidate and reason
	fmt.Println(len(ex.Steps), ex.Err)
	if dir, err := f.FindKind(ctx, search.HeaderDir, "cccl"); err == nil { // also search.Binary, StaticLib, Bitcode
		fmt.Println(dir.Path)
	}
	if set, err := f.FindTogether(ctx, []string{"cudart", "nvrtc"}); err == nil { // all from one root, or a *MixedToolkitsError
		fmt.Println(set[0].Path, set[1].Path)
	}
	rep := driver.Probe(ctx, driver.Options{}) // host/driver: the driver, the highest CUDA it supports, each GPU
	fmt.Println(rep.DriverVersion, rep.MaxCUDA, len(rep.GPUs))
}

// TestExample_isTheREADME: the README shows a whole program a user can paste and run, gofmt'ed, whose
// main is Example's body as it is, and which imports what it uses and nothing else.
func TestExample_isTheREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)## Go\n\n```go\n(.*?)```").FindSubmatch(readme)
	body := regexp.MustCompile(`(?s)\nfunc Example\(\) \{\n(.*?\n)\}\n`).FindSubmatch(src)
	if block == nil || body == nil {
		t.Fatal("README's Go block or Example's body not found")
	}
	program := string(block[1])
	if formatted, err := format.Source(block[1]); err != nil || string(formatted) != program {
		t.Fatalf("README's Go block is not a gofmt'ed Go file: %v\n%s", err, formatted)
	}
	main := regexp.MustCompile(`(?s)\nfunc main\(\) \{\n(.*?\n)\}\n$`).FindStringSubmatch(program)
	if !strings.HasPrefix(program, "package main\n") || main == nil || main[1] != string(body[1]) {
		t.Fatalf("README's Go block is not package main with Example's body as its main:\n--- README\n%s\n--- Example\n%s", program, body[1])
	}
	file, err := parser.ParseFile(token.NewFileSet(), "README.go", program, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	imported := map[string]bool{}
	for _, imp := range file.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		imported[path.Base(p)] = true
	}
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b([a-z]+)\.[A-Z]`).FindAllStringSubmatch(main[1], -1) {
		switch m[1] {
		case "lib", "se", "f", "p", "ex", "dir", "set", "rep", "err": // the program's own variables
		default:
			used[m[1]] = true
		}
	}
	if fmt.Sprint(imported) != fmt.Sprint(used) {
		t.Fatalf("README's program imports %v and uses %v", imported, used)
	}
}

// TestExample_runs runs the README's code in a process of its own, over a virtual environment that
// holds a CUDA 13 wheel's cudart, nvrtc and cccl and cuDNN's wheel: what it prints of the libraries
// is known; the driver's line is this machine's.
func TestExample_runs(t *testing.T) {
	if os.Getenv("PATHFINDER_TEST_EXAMPLE") == "1" {
		Example()
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("the virtual environment is Linux's")
	}
	venv := t.TempDir()
	site := filepath.Join(venv, "lib", "python3.12", "site-packages")
	lib := func(rel, soname string) string {
		p := filepath.Join(site, filepath.FromSlash(rel), soname)
		elfso.Build(t, p, soname, "int f(void) { return 0; }")
		return p
	}
	cudart, nvrtc := lib("nvidia/cu13/lib", "libcudart.so.13"), lib("nvidia/cu13/lib", "libnvrtc.so.13")
	lib("nvidia/cudnn/lib", "libcudnn.so.9")
	cccl := filepath.Join(site, "nvidia", "cu13", "include", "cccl")
	os.MkdirAll(filepath.Join(cccl, "cuda", "std"), 0o755)
	os.WriteFile(filepath.Join(cccl, "cuda", "std", "version"), nil, 0o644)

	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestExample_runs$")
	cmd.Env = []string{"PATHFINDER_TEST_EXAMPLE=1", "VIRTUAL_ENV=" + venv, "HOME=" + home, "XDG_CONFIG_HOME=" + home, "PATHFINDER_DRIVER_VERSION=580.65.06",
		"PATHFINDER_CACHE_DIR=" + filepath.Join(os.TempDir(), "pathfinder-test-cache"), "PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	t.Logf("Example printed:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\nPASS\n"), "\n")
	want := []string{
		cudart + " site-packages false",
		nvrtc + " ",
		"13 minor-version 0", // the catalog says libnvrtc.so.13 is CUDA 13, and no minor: the 13.0 driver runs it by minor-version compatibility
		`^\d+ <nil>$`,
		cccl,
		cudart + " " + nvrtc,
		"580.65.06 13.0 0", // the driver pinned, the highest CUDA it supports, and no GPU
	}
	if len(lines) != len(want) {
		t.Fatalf("Example printed %d lines, want %d", len(lines), len(want))
	}
	for i, w := range want {
		if ok := lines[i] == w || strings.HasPrefix(w, "^") && regexp.MustCompile(w).MatchString(lines[i]); !ok {
			t.Errorf("line %d: %q, want %q", i+1, lines[i], w)
		}
	}
}

// TestDefault: the package-level functions use one process-wide Finder.
func TestDefault(t *testing.T) {
	a, err := host.Default()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := host.Default(); a != b {
		t.Fatal("Default returned two Finders")
	}
	ctx := context.Background()
	if _, err := host.Find(ctx, "cudartt"); !errors.Is(err, host.ErrUnknown) {
		t.Fatalf("host.Find(cudartt) = %v; want ErrUnknown", err)
	}
	if _, err := host.Load(ctx, "cudartt"); !errors.Is(err, host.ErrUnknown) {
		t.Fatalf("host.Load(cudartt) = %v; want ErrUnknown", err)
	}
	lib, err := host.Find(ctx, "nvjpeg")
	lib2, err2 := a.Find(ctx, "nvjpeg")
	if (err == nil) != (err2 == nil) || err == nil && lib.Path != lib2.Path {
		t.Fatalf("host.Find = %+v, %v; Default().Find = %+v, %v", lib, err, lib2, err2)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := host.Load(canceled, "cufft"); !errors.Is(err, context.Canceled) {
		t.Fatalf("host.Load with a canceled context = %v", err)
	}
}

// A Finder over a fake virtual environment: a real shared object in the CUDA 13 wheel layout.
func ExampleFinder_Find() {
	venv, _ := os.MkdirTemp("", "venv")
	defer os.RemoveAll(venv)
	site := filepath.Join(venv, "lib", "python3.12", "site-packages")
	lib := filepath.Join(site, "nvidia", "cu13", "lib", "libcudart.so.13")
	os.MkdirAll(filepath.Dir(lib), 0o755)
	os.WriteFile(lib+".c", []byte("int f(void) { return 0; }"), 0o644)
	if err := exec.Command("gcc", "-shared", "-fPIC", "-Wl,-soname,libcudart.so.13", "-o", lib, lib+".c").Run(); err != nil {
		fmt.Println("gcc:", err)
		return
	}

	// A driver pinned as $PATHFINDER_DRIVER_VERSION would: one that runs CUDA 13.
	env := map[string]string{"VIRTUAL_ENV": venv, "PATHFINDER_DRIVER_VERSION": "580.65.06",
		"PATHFINDER_CACHE_DIR": filepath.Join(os.TempDir(), "pathfinder-test-cache")}
	lookupEnv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	f, err := host.New(host.Options{LookupEnv: lookupEnv, SystemConfigDir: venv})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	found, err := f.Find(context.Background(), "cudart")
	if err != nil {
		fmt.Println(err)
		return
	}
	rel, _ := filepath.Rel(venv, found.Path)
	fmt.Println(rel, found.FoundVia, found.Step)
	// Output: lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13 site-packages wheels
}

// The CUDA 12 and the CUDA 13 runtime wheels side by side, and a driver that runs CUDA 12.4 at most:
// the search passes over the CUDA 13 runtime, which would fail at its first call, and answers the
// CUDA 12 one, saying why. pathfinder find cudart --json answers the same.
func ExampleOptions_compatibility() {
	site, _ := os.MkdirTemp("", "site-packages")
	defer os.RemoveAll(site)
	for _, w := range []struct{ dir, soname, dist, version string }{
		{"nvidia/cu13/lib", "libcudart.so.13", "nvidia_cuda_runtime", "13.0.96"},
		{"nvidia/cuda_runtime/lib", "libcudart.so.12", "nvidia_cuda_runtime_cu12", "12.4.127"},
	} {
		lib := filepath.Join(site, w.dir, w.soname)
		os.MkdirAll(filepath.Dir(lib), 0o755)
		os.WriteFile(lib+".c", []byte("int f(void) { return 0; }"), 0o644)
		if err := exec.Command("gcc", "-shared", "-fPIC", "-Wl,-soname,"+w.soname, "-o", lib, lib+".c").Run(); err != nil {
			fmt.Println("gcc:", err)
			return
		}
		info := filepath.Join(site, w.dist+"-"+w.version+".dist-info") // as pip installs a wheel
		os.MkdirAll(info, 0o755)
		name := strings.ReplaceAll(w.dist, "_", "-")
		os.WriteFile(filepath.Join(info, "METADATA"), []byte("Metadata-Version: 2.1\nName: "+name+"\nVersion: "+w.version+"\n"), 0o644)
		os.WriteFile(filepath.Join(info, "RECORD"), []byte(w.dir+"/"+w.soname+",,\n"), 0o644)
	}

	env := map[string]string{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_DRIVER_VERSION": "550.54.14",
		"PATHFINDER_CACHE_DIR": filepath.Join(os.TempDir(), "pathfinder-test-cache")}
	lookupEnv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	f, err := host.New(host.Options{LookupEnv: lookupEnv, SystemConfigDir: site, Compatibility: search.CompatibilityStrict})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	found, err := f.Find(context.Background(), "cudart")
	if err != nil {
		fmt.Println(err)
		return
	}
	rel, _ := filepath.Rel(site, found.Path)
	fmt.Println(rel, "CUDA", found.CUDA, found.Version, "from the", found.VersionFrom, "runs:", found.Compat)
	for _, p := range found.PassedOver {
		rel, _ := filepath.Rel(site, p.Path)
		fmt.Println("passed over", rel+":", p.Reason)
	}
	// Output:
	// nvidia/cuda_runtime/lib/libcudart.so.12 CUDA 12.4 12.4.127 from the wheel runs: full
	// passed over nvidia/cu13/lib/libcudart.so.13: CUDA 13.0: driver 550.54.14 runs CUDA 12.4 at most (CUDA 13.0 needs 580.65.06)
}

// Errors say what went wrong and carry what a program needs to react.
func ExampleSearchError() {
	f, err := host.New(host.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	_, err = f.Find(context.Background(), "cublass")
	var se *host.SearchError
	if errors.Is(err, host.ErrUnknown) && errors.As(err, &se) {
		fmt.Println(err)
		fmt.Println(se.Code(), se.Suggestions())
	}
	// Output:
	// unknown library "cublass" (did you mean "cublas", "cublasLt" or "cublasmp"?)
	// unknown [cublas cublasLt cublasmp]
}
