//go:build unix

package wasm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/cachedir"
)

// cacheState is every file and directory under dir with what a write changes: its identity, size
// and modification time (a directory's changes when anything is made, renamed or removed in it).
func cacheState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fmt.Sprintf("%v %d %d %v", fi.Mode(), fi.Sys().(*syscall.Stat_t).Ino, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	return out
}

// loadIn loads the builtin module with a new engine (a new process, as far as the cache can tell)
// whose compilation cache is dir.
func loadIn(t *testing.T, dir string) *Engine {
	t.Helper()
	e := NewEngine(dir)
	t.Cleanup(func() { e.Close() })
	if _, err := e.Load(ctx, builtin.StepsModule(), 64<<20, time.Hour); err != nil {
		t.Fatal(err)
	}
	return e
}

// checkWhole checks that the cache under dir holds the builtin module whole: one directory whose
// checksum matches what it holds, nothing half made beside it, and that a new engine loads it
// from there writing nothing at all.
func checkWhole(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !entries[0].IsDir() || len(entries[0].Name()) != 32+len(".module") {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("cache holds %v; want one module directory", names)
	}
	mod := filepath.Join(dir, entries[0].Name())
	if !cachedir.DirWhole(mod) || len(compiledFiles(mod)) == 0 {
		t.Fatalf("the module directory does not match its checksum, or holds no compiled code (%v)", compiledFiles(mod))
	}
	before := cacheState(t, dir)
	e := loadIn(t, dir)
	if err := e.CacheWriteError(); err != nil {
		t.Fatal(err)
	}
	if after := cacheState(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a load from the cache wrote to it:\nbefore %v\nafter  %v", before, after)
	}
}

// TestModuleCache_fromTheCacheWritesNothing loads a module compiled by an earlier engine: nothing in
// the cache is written, renamed or made, its checksum included.
func TestModuleCache_fromTheCacheWritesNothing(t *testing.T) {
	dir := t.TempDir()
	loadIn(t, dir)
	for range 2 {
		checkWhole(t, dir)
	}
}

// TestModuleCache_concurrentColdWriters has engines compile one module at once into one empty cache,
// as processes started together do: the module's directory and its checksum appear whole, from one
// of them, and nothing else stays.
func TestModuleCache_concurrentColdWriters(t *testing.T) {
	rounds, writers := 4, 6
	if testing.Short() {
		rounds = 1
	}
	for round := range rounds {
		dir := t.TempDir()
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e := NewEngine(dir)
				defer e.Close()
				<-start
				if _, err := e.Load(ctx, builtin.StepsModule(), 64<<20, time.Hour); err != nil {
					t.Error(err)
				}
			}()
		}
		close(start)
		wg.Wait()
		t.Run(fmt.Sprint("round ", round), func(t *testing.T) { checkWhole(t, dir) })
	}
}

// TestModuleCache_brokenPairHeals breaks the module directory or its checksum between two engines:
// the second compiles again and leaves the pair whole.
func TestModuleCache_brokenPairHeals(t *testing.T) {
	tests := []struct {
		name string
		brk  func(t *testing.T, mod string)
	}{
		{"checksum removed", func(t *testing.T, mod string) { mustRemove(t, cachedir.SumFile(mod)) }},
		{"checksum of other contents", func(t *testing.T, mod string) {
			if err := cachedir.Write(cachedir.SumFile(mod), []byte(strings.Repeat("0", 64))); err != nil {
				t.Fatal(err)
			}
		}},
		{"a compiled file removed", func(t *testing.T, mod string) {
			for _, p := range compiledFiles(mod) {
				mustRemove(t, p)
			}
		}},
		{"a file added", func(t *testing.T, mod string) {
			if err := os.WriteFile(filepath.Join(mod, "extra"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"the directory replaced by a file", func(t *testing.T, mod string) {
			if err := os.RemoveAll(mod); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(mod, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			loadIn(t, dir)
			entries, _ := os.ReadDir(dir)
			tt.brk(t, filepath.Join(dir, entries[0].Name()))
			loadIn(t, dir)
			checkWhole(t, dir)
		})
	}
}

// compiledFiles are the files of compiled code wazero keeps in mod, named by their 64-digit key.
func compiledFiles(mod string) []string {
	var files []string
	filepath.WalkDir(mod, func(p string, d os.DirEntry, err error) error {
		if err == nil && len(d.Name()) == 64 {
			files = append(files, p)
		}
		return nil
	})
	return files
}

func mustRemove(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}
