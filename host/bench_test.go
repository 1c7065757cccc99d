package host

import (
	"testing"
)

func benchFinder(b *testing.B) *Finder {
	site := b.TempDir()
	put(b, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(b, "libcudart.so.13"))
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
