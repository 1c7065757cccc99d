package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/loader"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// Each test loads libraries no other test loads: what a process loaded stays loaded.

func TestLoad_dependencyFirst(t *testing.T) {
	if !loader.Available {
		t.Skip("this build cannot load libraries")
	}
	site := t.TempDir()
	lt := filetree.Put(t, site, "nvidia/cu13/lib/libcublasLt.so.13", elfLib(t, "libcublasLt.so.13"))
	// libcublas.so.13 needs libcublasLt.so.13 (DT_NEEDED), which is in no loader path: it loads only
	// because pathfinder loads the dependency first.
	blas := filetree.Put(t, site, "nvidia/cu13/lib/libcublas.so.13", elfLib(t, "libcublas.so.13", lt))
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site}, "")
	lib, err := f.Load(bg, "cublas")
	if err != nil {
		t.Fatalf("Load(cublas): %v\n%s", err, dump(f.Explain(bg, DynamicLib, "cublas")))
	}
	if lib.Path != blas || lib.FoundVia != "site-packages" || lib.AlreadyLoaded || lib.Handle == 0 {
		t.Fatalf("Load(cublas) = %+v", lib)
	}
	if len(lib.Dependencies) != 1 || lib.Dependencies[0].Name != "cublasLt" || lib.Dependencies[0].Path != lt {
		t.Fatalf("Load(cublas).Dependencies = %+v; want cublasLt from %s", lib.Dependencies, lt)
	}
	dep, err := f.Load(bg, "cublasLt")
	if err != nil || dep.Path != lt {
		t.Fatalf("Load(cublasLt) = %+v, %v; want it loaded from %s as cublas's dependency", dep, err, lt)
	}
	again, _ := f.Load(bg, "cublas")
	if again != lib {
		t.Fatalf("second Load returned a new result: %+v", again)
	}

	// A fresh Engine with nothing to search finds both already in the process.
	g := newFinder(t, nil, "")
	lib2, err := g.Load(bg, "cublas")
	if err != nil || !lib2.AlreadyLoaded || lib2.FoundVia != "was-already-loaded-from-elsewhere" || lib2.Path != blas {
		t.Fatalf("Load in a new Engine = %+v, %v; want already loaded from %s", lib2, err, blas)
	}
}

func TestLoad_dependencyFailureIsTheCallers(t *testing.T) {
	if !loader.Available {
		t.Skip("this build cannot load libraries")
	}
	site := t.TempDir()
	filetree.Put(t, site, "nvidia/cu13/lib/libcusparse.so.12", elfLib(t, "libcusparse.so.12"))
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site}, "")
	_, err := f.Load(bg, "cusparse")
	var se *SearchError
	if !errors.As(err, &se) || se.Name != "cusparse" || se.Dependency != "nvJitLink" || !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load(cusparse) error = %v; want a cusparse error naming its dependency nvJitLink", err)
	}
	if !strings.Contains(err.Error(), `cannot load "cusparse": its dependency "nvJitLink" failed`) {
		t.Fatalf("message: %v", err)
	}
	if _, ok := loader.Loaded("libcusparse.so.12"); ok {
		t.Fatal("cusparse was loaded although its dependency failed")
	}
}

func TestLoad_systemSearch(t *testing.T) {
	if !loader.Available {
		t.Skip("this build cannot load libraries")
	}
	// No step finds it, so the OS loader's own search (LD_LIBRARY_PATH is read at process start, so use
	// a library the machine has) answers: here libcudla is absent, and the failure names every step.
	f := newFinder(t, nil, "")
	_, err := f.Load(bg, "cudla")
	var se *SearchError
	if !errors.As(err, &se) {
		t.Fatalf("Load(cudla): %v", err)
	}
	var steps []string
	for _, a := range se.Attempts {
		steps = append(steps, a.Step)
	}
	for _, want := range []string{"wheels", "conda", "already-loaded", "system", "envroots"} {
		if !strings.Contains(strings.Join(steps, " "), want) {
			t.Fatalf("attempts %v lack step %s", steps, want)
		}
	}
	for _, a := range se.Attempts {
		if a.Step == "system" && a.Path == "libcudla.so.1" && !strings.Contains(a.Reason, "dlopen libcudla.so.1") {
			t.Fatalf("system attempt reason %q", a.Reason)
		}
	}
}

func TestLoad_absolutePathFromLoader(t *testing.T) {
	if !loader.Available {
		t.Skip("this build cannot load libraries")
	}
	conda := t.TempDir()
	want := filetree.Put(t, conda, "lib/libnppig.so.13", elfLib(t, "libnppig.so.13"))
	filetree.Put(t, conda, "lib/libnppc.so.13", elfLib(t, "libnppc.so.13"))
	f := newFinder(t, testEnv{"CONDA_PREFIX": conda}, "")
	lib, err := f.Load(bg, "nppig")
	if err != nil {
		t.Fatal(err)
	}
	if lib.Path != want || !filepath.IsAbs(lib.Path) || lib.FoundVia != "conda" {
		t.Fatalf("Load(nppig) = %+v, want %s via conda", lib, want)
	}
	if l, ok := loader.Loaded("libnppc.so.13"); !ok || l.Path != filepath.Join(conda, "lib/libnppc.so.13") {
		t.Fatalf("dependency nppc not loaded from conda: %+v", l)
	}
}

// TestLoad_fileSwappedAfterValidation replaces a valid candidate between its check and its load:
// the replacement (a different inode) is refused, never loaded, and the search goes on.
func TestLoad_fileSwappedAfterValidation(t *testing.T) {
	if !loader.Available {
		t.Skip("this build cannot load libraries")
	}
	site, conda := t.TempDir(), t.TempDir()
	swapped := filetree.Put(t, site, "nvidia/cu13/lib/libnppitc.so.13", elfLib(t, "libnppitc.so.13"))
	fromConda := filetree.Put(t, conda, "lib/libnppitc.so.13", elfLib(t, "libnppitc.so.13"))
	filetree.Put(t, conda, "lib/libnppc.so.13", elfLib(t, "libnppc.so.13")) // its dependency
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": site, "CONDA_PREFIX": conda}, "", func(o *Options) {
		o.hooks.beforeLoad = func(p string) {
			if p == swapped {
				tmp := p + ".new" // same bytes, another file, renamed over the checked one
				os.WriteFile(tmp, elfLib(t, "libnppitc.so.13"), 0o755)
				os.Rename(tmp, p)
			}
		}
	})
	lib, err := f.Load(bg, "nppitc")
	if err != nil || lib.Path != fromConda {
		t.Fatalf("Load = %+v, %v; want the conda copy after the wheel's was swapped", lib, err)
	}
	if l, ok := loader.Loaded("libnppitc.so.13"); !ok || l.Path != fromConda {
		t.Fatalf("loaded %+v", l)
	}
}
