package engine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pathfinder-dev/pathfinder/bench/nativefind"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// findAllSetup makes bench's fake venv: every library the CUDA 13 wheels ship in nvidia/cu13/lib, as a
// real ELF file, and returns the site-packages dir, every dynamic library's name and the entries.
func findAllSetup(b *testing.B) (site string, all []string) {
	libs, err := nativefind.Libraries()
	if err != nil {
		b.Fatal(err)
	}
	site = filepath.Join(b.TempDir(), "venv", "lib", "python3.12", "site-packages")
	for _, l := range libs {
		all = append(all, l.Name)
		if len(l.LinuxSonames) == 0 || !slices.Contains(l.SitePackagesLinux, "nvidia/cu13/lib") {
			continue
		}
		filetree.Put(b, site, filepath.Join("nvidia/cu13/lib", l.LinuxSonames[0]), elfLib(b, l.LinuxSonames[0]))
	}
	return site, all
}

// BenchmarkFindAll_warm is bench's "in-process find of all 50, new Engine, warm": a new Engine per
// pass, every answer from the result cache.
func BenchmarkFindAll_warm(b *testing.B) {
	site, all := findAllSetup(b)
	env := testEnv{"PATHFINDER_SITE_PACKAGES": site, "PATHFINDER_CACHE_DIR": b.TempDir(), "HOME": b.TempDir(), "PATH": "/usr/bin:/bin"}
	sys := b.TempDir()
	pass := func() {
		f, err := New(Options{LookupEnv: env.lookup, SystemConfigDir: sys, hooks: hooks{engine: testEngine()}})
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range all {
			f.Find(bg, n)
		}
		f.Close()
	}
	pass() // fill the result cache
	b.ResetTimer()
	for b.Loop() {
		pass()
	}
}

// BenchmarkFindAll_native is the floor: the same searches natively, without wasm, config or caches.
func BenchmarkFindAll_native(b *testing.B) {
	site, _ := findAllSetup(b)
	libs, _ := nativefind.Libraries()
	os.Setenv("PATH", "/usr/bin:/bin")
	sites := []string{site}
	b.ResetTimer()
	for b.Loop() {
		for _, l := range libs {
			nativefind.Find(l, sites)
		}
	}
}
