package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/resultcache"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"

	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/cachedir"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/loader"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

func TestResultCache_exact(t *testing.T) {
	cache := t.TempDir()
	site, cuda, cudaPath := t.TempDir(), t.TempDir(), t.TempDir()
	lib13 := filetree.Put(t, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
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
			filetree.Put(t, env["XDG_CONFIG_HOME"], "pathfinder/pathfinder.toml", []byte("[cache]\nenabled = true\n"))
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
			filetree.Put(t, cuda, "lib64/libcudart.so.12", elfLib(t, "libcudart.so.12"))
		}, filepath.Join(cuda, "lib64/libcudart.so.12")},
		{"a different env value", func() { env["CUDA_PATH"] = cudaPath }, ""},
		{"an edited config", func() {
			env["PATHFINDER_CONFIG"] = filetree.Put(t, t.TempDir(), "p.toml", []byte("[library.cudart]\norder = [\"envroots\"]\n"))
		}, ""},
		{"a file appearing where a not-found search looked", func() {
			filetree.Put(t, cudaPath, "lib/libcudart.so.12", elfLib(t, "libcudart.so.12"))
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
	return ok && !strings.HasPrefix(err.Error(), "pathfinder: ")
}

// cachedEntry reads the result-cache entry an Engine would use for a dynamic library.
func cachedEntry(t *testing.T, f *Engine, name string) resultcache.Entry {
	t.Helper()
	c := f.results.Read(f.resultKey(DynamicLib, name))
	if c == nil {
		t.Fatalf("no readable entry for %s", name)
	}
	return *c
}

// TestResultCache_discovery: an entry keeps site-packages discovery as the hash of what it observed,
// checked once per Engine against the Engine's own discovery; a change to anything discovery looks
// at is still a fresh answer, and what each name observed is still re-checked name by name.
func TestResultCache_discovery(t *testing.T) {
	cache, home := t.TempDir(), t.TempDir()
	venv := t.TempDir()
	site := filepath.Join(venv, "lib", "python3.12", "site-packages")
	lib := filetree.Put(t, site, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	env := testEnv{"PATHFINDER_CACHE_DIR": cache, "HOME": home, "VIRTUAL_ENV": venv, "PATH": "/nonexistent"}

	if got, err, hit := findFresh(t, env, "", "cudart"); err != nil || hit || got.Path != lib {
		t.Fatalf("first find: %+v %v hit=%v", got, err, hit)
	}
	f := newFinder(t, env, "")
	c := cachedEntry(t, f, "cudart")
	if c.Sites == "" || c.Sites != f.discovery().hash {
		t.Fatalf("entry's discovery hash %q, the Engine's %q", c.Sites, f.discovery().hash)
	}
	for _, o := range c.Seen {
		if o.Path == "VIRTUAL_ENV" || o.Path == filepath.Join(venv, "lib") {
			t.Fatalf("a discovery observation kept in Seen: %+v", o)
		}
	}
	if _, err, hit := findFresh(t, env, "", "cudart"); err != nil || !hit {
		t.Fatalf("unchanged: %v hit=%v", err, hit)
	}

	// A newer Python's site-packages appears in the venv: discovery sees it first, so the answer is
	// the library there, although nothing cudart's own search looked at changed.
	newer := filetree.Put(t, filepath.Join(venv, "lib", "python3.13", "site-packages"), "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
	if got, err, hit := findFresh(t, env, "", "cudart"); err != nil || hit || got.Path != newer {
		t.Fatalf("a new site-packages: %+v %v hit=%v, want a fresh answer %s", got, err, hit, newer)
	}
	// Another value of a variable only discovery reads.
	env["PYTHONUSERBASE"] = t.TempDir()
	if _, err, hit := findFresh(t, env, "", "cudart"); err != nil || hit {
		t.Fatalf("a variable discovery reads changed: %v hit=%v", err, hit)
	}
	if _, err, hit := findFresh(t, env, "", "cudart"); err != nil || !hit {
		t.Fatalf("unchanged again: %v hit=%v", err, hit)
	}

	// In one Engine, with discovery shared: a name's own observations are re-checked each time it is
	// asked. nvrtc is not found, then appears where its search looked, and is found by the same Engine.
	g := newFinder(t, env, "")
	if _, err := g.Find(bg, "cudart"); err != nil || g.searches.Load() != 0 {
		t.Fatalf("cudart: %v, %d searches", err, g.searches.Load())
	}
	if _, err := g.Find(bg, "nvrtc"); err == nil {
		t.Fatal("nvrtc found before it exists")
	}
	if _, err := newFinder(t, env, "").Find(bg, "nvrtc"); err == nil {
		t.Fatal("nvrtc found before it exists")
	}
	nvrtc := filetree.Put(t, filepath.Join(venv, "lib", "python3.13", "site-packages"), "nvidia/cu13/lib/libnvrtc.so.13", elfLib(t, "libnvrtc.so.13"))
	if got, err := g.Find(bg, "nvrtc"); err != nil || got.Path != nvrtc {
		t.Fatalf("nvrtc after it appeared: %+v, %v; want %s", got, err, nvrtc)
	}
}

// Test_splitDiscovery: discovery's observations are taken out of an entry only when the search
// recorded every one of them as discovery saw them; otherwise the entry keeps them all.
func Test_splitDiscovery(t *testing.T) {
	f := newFinder(t, testEnv{"PATHFINDER_SITE_PACKAGES": t.TempDir()}, "")
	hash := f.discovery().hash
	disc := slices.Clone(f.discovery().seen)
	own := observe.Observation{Path: "/x", What: observe.Stat, Seen: "absent"}
	changed := slices.Clone(disc)
	changed[0].Seen += " (another value)"
	tests := []struct {
		name      string
		seen      []observe.Observation
		wantSites string
		wantSeen  []observe.Observation
	}{
		{"all of discovery", append(slices.Clone(disc), own), hash, []observe.Observation{own}},
		{"none of it", []observe.Observation{own}, "", []observe.Observation{own}},
		{"part of it", append(slices.Clone(disc[1:]), own), "", append(slices.Clone(disc[1:]), own)},
		{"one seen otherwise", append(changed, own), "", append(slices.Clone(changed), own)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sites, seen := resultcache.SplitDiscovery(tt.seen, disc, hash)
			if sites != tt.wantSites || !slices.Equal(seen, tt.wantSeen) {
				t.Fatalf("splitDiscovery = %q, %+v; want %q, %+v", sites, seen, tt.wantSites, tt.wantSeen)
			}
		})
	}
}

// TestResultCache_loadedSince: a not-found answer is not used once a library of that name has been
// loaded into the process, even when the answer was checked (and the loader's look skipped) before.
func TestResultCache_loadedSince(t *testing.T) {
	if !loader.Available {
		t.Skip(loader.ErrUnavailable)
	}
	env := testEnv{"PATHFINDER_CACHE_DIR": t.TempDir()}
	soname := newFinder(t, env, "").FileNames(DynamicLib, "custabilizer")[0]
	if _, ok := loader.Loaded(soname); ok {
		t.Fatalf("%s is already in the process", soname)
	}
	if _, err, _ := findFresh(t, env, "", "custabilizer"); err == nil {
		t.Fatal("custabilizer found")
	}
	if c := cachedEntry(t, newFinder(t, env, ""), "custabilizer"); !slices.Contains(c.Live, soname) || !resultcache.ObservedLoaderSearch(c.Seen, soname) {
		t.Fatalf("the entry does not hold the loader's search for %s: live %q", soname, c.Live)
	}
	for range 2 { // the second is answered with the loader's look skipped
		if _, err, hit := findFresh(t, env, "", "custabilizer"); err == nil || !hit {
			t.Fatalf("not found, cached: %v hit=%v", err, hit)
		}
	}
	if !loader.StillAbsent(soname) {
		t.Fatal("the absence was not remembered")
	}
	lib := filetree.Put(t, t.TempDir(), soname, elfLib(t, soname))
	if _, err := loader.Open(lib, false); err != nil {
		t.Fatal(err)
	}
	got, err, hit := findFresh(t, env, "", "custabilizer")
	if err != nil || hit || got.Path != lib || got.Step != StepAlreadyLoaded {
		t.Fatalf("after loading %s: %+v, %v, hit=%v; want it already loaded", lib, got, err, hit)
	}
}

// TestCatalog_Remembered: the catalog a process remembers is used again only for the same packs, the same
// cache directory and an unchanged cache file. A vendor's pack is read beside the builtin one, whose
// catalog alone is in the binary and kept in no cache file.
func TestCatalog_Remembered(t *testing.T) {
	base := t.TempDir()
	vendor := func(name string) catalog.Pack {
		return catalog.Pack{Name: "/x/" + name + ".toml", Data: []byte("[[library]]\nname = \"" + name + "\"\npackaged_with = \"other\"\nlinux_sonames = [\"lib" + name + ".so.1\"]\n")}
	}
	packs := []catalog.Pack{{Name: "builtin:nvidia.toml", Data: builtin.NVIDIAPack()}, vendor("vendor")}
	first, err := catalog.Remembered(base, packs)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := catalog.Remembered(base, packs); again != first {
		t.Fatal("the same packs were read again")
	}
	extra := append(slices.Clone(packs), vendor("extra"))
	if other, err := catalog.Remembered(base, extra); err != nil || other == first {
		t.Fatalf("another pack set: %v, same catalog %v", err, other == first)
	}
	if other, _ := catalog.Remembered(t.TempDir(), packs); other == first {
		t.Fatal("another cache directory: the remembered catalog")
	}
	now, _ := catalog.Remembered(base, packs)
	file := cachedir.CatalogFile(base, now.Hash())
	if err := os.WriteFile(file, []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again, _ := catalog.Remembered(base, packs); again == now {
		t.Fatal("the cache file changed, and it was not read again")
	}
	if builtinOnly, _ := catalog.Remembered(base, packs[:1]); builtinOnly == nil {
		t.Fatal("no builtin catalog")
	} else if again, _ := catalog.Remembered(base, packs[:1]); again != builtinOnly {
		t.Fatal("the builtin catalog alone was made again")
	}
}

// TestResultCache_revalidates changes what a cached answer names in ways no observation sees: the
// library rewritten in place, same size, inode and mtime; the entry rewritten, checksum and all.
// Each cached answer is checked as a fresh candidate is, so none of them is answered.
func TestResultCache_revalidates(t *testing.T) {
	// rewriteInPlace makes p another file that a stat cannot tell from it: same size, same inode,
	// same mtime.
	rewriteInPlace := func(t *testing.T, p string) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("#!/bin/sh\necho this is not a library\n"))
		f.Close()
		os.Chtimes(p, fi.ModTime(), fi.ModTime())
		if now, _ := os.Stat(p); observe.StatSeen(now, nil) != observe.StatSeen(fi, nil) {
			t.Fatal("the rewrite shows in a stat")
		}
	}
	for _, tt := range []struct {
		name  string
		step  string // the step that finds it: a plugin's or the system's
		fault func(t *testing.T, env testEnv, config, lib, other string)
		want  func(lib, other string) string // the path a fresh search finds now; "" for none
	}{
		{"a plugin's library rewritten in place", "wheels",
			func(t *testing.T, _ testEnv, _, lib, _ string) { rewriteInPlace(t, lib) },
			func(lib, other string) string { return "" }},
		{"the loader's library rewritten in place", StepSystem,
			func(t *testing.T, _ testEnv, _, lib, _ string) { rewriteInPlace(t, lib) },
			func(lib, other string) string { return "" }},
		{"a plugin's entry rewritten to a library outside its directories", "wheels",
			func(t *testing.T, env testEnv, config, _, other string) {
				rewriteEntry(t, newFinder(t, env, config), other, "was-already-loaded-from-elsewhere")
			},
			func(lib, other string) string { return lib }},
		{"the loader's entry rewritten to a library it does not find", StepSystem,
			func(t *testing.T, env testEnv, config, _, other string) {
				rewriteEntry(t, newFinder(t, env, config), other, "was-already-loaded-from-elsewhere")
			},
			func(lib, other string) string { return lib }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			lib := filetree.Put(t, dir, "nvidia/cu13/lib/libcudart.so.13", elfLib(t, "libcudart.so.13"))
			other := filetree.Put(t, t.TempDir(), "libcudart.so.13", elfLib(t, "libcudart.so.13"))
			env := testEnv{"PATHFINDER_CACHE_DIR": t.TempDir(), "PATHFINDER_SITE_PACKAGES": dir, "LD_LIBRARY_PATH": filepath.Dir(lib)}
			// The config file's path is part of the key: one file for every Engine.
			env["PATHFINDER_CONFIG"] = filetree.Put(t, t.TempDir(), "p.toml", []byte(fmt.Sprintf("[search]\norder = [%q]\n", tt.step)))
			config := ""
			if got, err, _ := findFresh(t, env, config, "cudart"); err != nil || got.Path != lib {
				t.Fatalf("populating: %+v, %v", got, err)
			}
			if _, _, hit := findFresh(t, env, config, "cudart"); !hit {
				t.Fatal("not answered from the cache before the fault")
			}
			tt.fault(t, env, config, lib, other)
			got, err, hit := findFresh(t, env, config, "cudart")
			want := tt.want(lib, other)
			switch {
			case hit:
				t.Fatalf("answered from the cache after the fault: %+v", got)
			case want == "" && err == nil:
				t.Fatalf("found %+v; want nothing", got)
			case want != "" && (err != nil || got.Path != want):
				t.Fatalf("%+v, %v; want %s", got, err, want)
			}
		})
	}
}

// TestResultCache_entryNotAFile puts what is no regular file where a find's entry is: the next
// Engine searches afresh and writes the entry in its place, and the one after it is answered from
// the entry. Nothing a symlink there leads to is touched.
func TestResultCache_entryNotAFile(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, entry, outside string) error
	}{
		{"a directory", func(t *testing.T, entry, _ string) error { return os.Mkdir(entry, 0o755) }},
		{"a directory holding files", func(t *testing.T, entry, _ string) error {
			filetree.Put(t, entry, "a/b", []byte("x"))
			return nil
		}},
		{"a symlink to a directory outside", func(t *testing.T, entry, outside string) error { return os.Symlink(outside, entry) }},
		{"a symlink to a file outside", func(t *testing.T, entry, outside string) error {
			return os.Symlink(filepath.Join(outside, "keep"), entry)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cuda, outside := t.TempDir(), t.TempDir()
			lib := filetree.Put(t, cuda, "lib64/libcudart.so.13", elfLib(t, "libcudart.so.13"))
			keep := filetree.Put(t, outside, "keep", []byte("someone's file"))
			env := testEnv{"CUDA_PATH": cuda, "PATHFINDER_CACHE_DIR": t.TempDir()}
			if got, err, _ := findFresh(t, env, "", "cudart"); err != nil || got.Path != lib {
				t.Fatalf("first find: %+v, %v", got, err)
			}
			f := newFinder(t, env, "")
			entry := f.results.Path(f.resultKey(DynamicLib, "cudart"))
			if err := os.Remove(entry); err != nil {
				t.Fatal(err)
			}
			if err := tt.make(t, entry, outside); err != nil {
				t.Fatal(err)
			}
			for i, wantHit := range []bool{false, true} {
				got, err, hit := findFresh(t, env, "", "cudart")
				if err != nil || got.Path != lib || hit != wantHit {
					t.Fatalf("find %d after: %+v, %v, from the cache: %v; want %v", i+1, got, err, hit, wantHit)
				}
			}
			if fi, err := os.Lstat(entry); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("the entry is %v, %v; want a regular file", fi.Mode(), err)
			}
			if b, err := os.ReadFile(keep); err != nil || string(b) != "someone's file" {
				t.Fatalf("a file outside the cache changed: %q, %v", b, err)
			}
		})
	}
}
