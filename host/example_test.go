package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/pathfinder-dev/pathfinder/host"
)

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

	env := map[string]string{"VIRTUAL_ENV": venv, "PATHFINDER_CACHE_DIR": filepath.Join(os.TempDir(), "pathfinder-test-cache")}
	f, err := host.New(host.Options{Getenv: func(k string) string { return env[k] }, SystemConfigDir: venv})
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

// Errors say what went wrong and carry what a program needs to react.
func ExampleSearchError() {
	f, err := host.New(host.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	_, err = f.Find(context.Background(), "cublass")
	var se *host.SearchError
	if errors.Is(err, host.ErrUnknown) && errors.As(err, &se) {
		fmt.Println(err)
		fmt.Println(se.Code(), se.Suggestions)
	}
	// Output:
	// pathfinder: unknown library "cublass" (did you mean "cublas", "cublasLt" or "cublasmp"?)
	// unknown [cublas cublasLt cublasmp]
}
