package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// findFresh finds name with a fresh Finder (a new process, as far as the cache can tell) and reports
// whether it was answered from the result cache.
func findFresh(t *testing.T, env testEnv, config, name string) (*Library, error, bool) {
	t.Helper()
	f := newFinder(t, env, config)
	lib, err := f.Find(bg, name)
	return lib, err, f.searches.Load() == 0
}

func TestResultCache_exact(t *testing.T) {
	cache := t.TempDir()
	site, cuda, cudaPath := t.TempDir(), t.TempDir(), t.TempDir()
	lib13 := put(t, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	env := testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_CACHE_DIR": cache, "CUDA_HOME": cuda}

	lib, err, hit := findFresh(t, env, "", "cudart")
	if err != nil || hit || lib.Path != lib13 {
		t.Fatalf("first find: %+v %v hit=%v", lib, err, hit)
	}
	lib, err, hit = findFresh(t, env, "", "cudart")
	if err != nil || !hit || lib.Path != lib13 || lib.FoundVia != "site-packages" || lib.Step != "wheels" {
		t.Fatalf("second find: %+v %v hit=%v, want the cached answer", lib, err, hit)
	}

	steps := []struct {
		name   string
		change func()
		want   string // the path the fresh answer must have; "" = not found
	}{
		{"an added config layer", func() {
			env["XDG_CONFIG_HOME"] = t.TempDir()
			put(t, env["XDG_CONFIG_HOME"], "pathfinder/pathfinder.toml", []byte("[cache]\nenabled = true\n"))
		}, lib13},
		{"a touched file", func() {
			later := time.Now().Add(time.Hour)
			os.Chtimes(lib13, later, later)
		}, lib13},
		{"a replaced file (new inode)", func() {
			b, _ := os.ReadFile(lib13)
			os.Remove(lib13)
			os.WriteFile(lib13, b, 0o755)
		}, lib13},
		{"a removed file", func() { os.Remove(lib13) }, ""},
		{"a new directory an earlier step lists", func() {
			put(t, cuda, "lib64/libcudart.so.12", elfLib(t, "libcudart.so.12"))
		}, filepath.Join(cuda, "lib64/libcudart.so.12")},
		{"a different env value", func() { env["CUDA_PATH"] = cudaPath }, ""},
		{"an edited config", func() {
			env["PATHFINDER_CONFIG"] = put(t, t.TempDir(), "p.toml", []byte("[library.cudart]\norder = [\"envroots\"]\n"))
		}, ""},
		{"a file appearing where a not-found search looked", func() {
			put(t, cudaPath, "lib/libcudart.so.12", elfLib(t, "libcudart.so.12"))
		}, filepath.Join(cudaPath, "lib/libcudart.so.12")},
	}
	for _, st := range steps {
		st.change()
		lib, err, hit := findFresh(t, env, "", "cudart")
		if hit {
			t.Fatalf("%s: answered from the cache", st.name)
		}
		got := ""
		if err == nil {
			got = lib.Path
		}
		if got != st.want {
			t.Fatalf("%s: got %q (%v), want %q", st.name, got, err, st.want)
		}
		// Nothing changed since: now it is a hit, with the same answer.
		lib2, err2, hit := findFresh(t, env, "", "cudart")
		if !hit || (err == nil) != (err2 == nil) || err == nil && lib2.Path != lib.Path {
			t.Fatalf("%s: repeat: hit=%v %+v %v", st.name, hit, lib2, err2)
		}
	}
}

func TestResultCache_notFoundAndCorrupt(t *testing.T) {
	cache := t.TempDir()
	env := testEnv{"PATHFINDER_CACHE_DIR": cache, "CUDA_HOME": t.TempDir()}
	_, err, _ := findFresh(t, env, "", "nvfatbin")
	_, err2, hit := findFresh(t, env, "", "nvfatbin")
	if err == nil || err2 == nil || !hit || err.Error() != err2.Error() {
		t.Fatalf("not-found answers: %v / %v hit=%v", err, err2, hit)
	}
	var se *SearchError
	if !asSearchError(err2, &se) || len(se.Attempts) == 0 {
		t.Fatalf("cached not-found lost its attempts: %v", err2)
	}
	// Corrupt every entry: each is ignored and rewritten, never trusted.
	filepath.WalkDir(filepath.Join(cache, "results"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.WriteFile(p, []byte(`{"version":1,"key":"x"`), 0o644)
		}
		return nil
	})
	if _, _, hit := findFresh(t, env, "", "nvfatbin"); hit {
		t.Fatal("a corrupt entry was trusted")
	}
	if _, _, hit := findFresh(t, env, "", "nvfatbin"); !hit {
		t.Fatal("the corrupt entry was not rewritten")
	}
	// Off: nothing is written.
	off := t.TempDir()
	findFresh(t, testEnv{"PATHFINDER_CACHE_DIR": off, "PATHFINDER_NO_CACHE": "1"}, "", "nvfatbin")
	if entries, _ := os.ReadDir(off); len(entries) != 0 {
		t.Fatalf("cache off, but %v written", entries)
	}
}

func asSearchError(err error, se **SearchError) bool {
	e, ok := err.(*SearchError)
	*se = e
	return ok && strings.HasPrefix(err.Error(), "pathfinder: ")
}
