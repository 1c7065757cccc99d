package engine

import (
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func benchFinder(b *testing.B) *Engine {
	site := b.TempDir()
	filetree.Put(b, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(b, "libcudart.so.13"))
	f := newFinder(b, testEnv{"PATHFINDER_SITE_PACKAGES": site}, "")
	if _, err := f.Find(bg, "cudart"); err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkFind_remembered is the in-process repeated call: a map lookup under a mutex.
func BenchmarkFind_remembered(b *testing.B) {
	f := benchFinder(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.Find(bg, "cudart"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFind_search is a whole search with the module compiled and an instance warm: one wasm call,
// validation of the candidate.
func BenchmarkFind_search(b *testing.B) {
	f := benchFinder(b)
	b.ResetTimer()
	for b.Loop() {
		if ex := f.Explain(bg, DynamicLib, "cudart"); ex.Err != nil {
			b.Fatal(ex.Err)
		}
	}
}

// BenchmarkFind_notFound runs every step for a library that is nowhere.
func BenchmarkFind_notFound(b *testing.B) {
	f := benchFinder(b)
	b.ResetTimer()
	for b.Loop() {
		if ex := f.Explain(bg, DynamicLib, "nvfatbin"); ex.Err == nil {
			b.Fatal("found")
		}
	}
}

// BenchmarkFind_freshFinder is what a warm `pathfinder find cudart` does after start-up: a new
// Engine (the configuration, the catalog), then the answer the on-disk result cache holds, re-checked.
func BenchmarkFind_freshFinder(b *testing.B) {
	site := b.TempDir()
	filetree.Put(b, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(b, "libcudart.so.13"))
	env := testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_CACHE_DIR": b.TempDir()}
	opts := Options{LookupEnv: env.lookup, SystemConfigDir: b.TempDir()}
	find := func(engine bool) {
		o := opts
		if engine {
			o.hooks.engine = testEngine() // compiled once per test binary
		}
		f, err := New(o)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Find(bg, "cudart"); err != nil {
			b.Fatal(err)
		}
		if !engine && f.searches.Load() != 0 {
			b.Fatal("not answered from the result cache")
		}
	}
	find(true)
	for b.Loop() {
		find(false)
	}
}
