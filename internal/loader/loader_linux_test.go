//go:build linux && !pathfinder_static

package loader

import (
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
)

// gccLib builds a shared library with the given soname in dir.
func gccLib(t *testing.T, dir, soname string) string {
	t.Helper()
	out := filepath.Join(dir, soname)
	elfso.Build(t, out, soname, "int marker(void){return 1;}\n")
	return out
}

// TestStillAbsent: an absence is remembered only while nothing is loaded into the process; a
// library loaded since, this one or another, is seen again by Loaded.
func TestStillAbsent(t *testing.T) {
	dir := t.TempDir()
	target := gccLib(t, dir, "libpathfinder-stillabsent.so.1")
	other := gccLib(t, dir, "libpathfinder-stillabsent-other.so.1")
	if _, ok := linkMapGeneration(); !ok {
		t.Fatal("dl_iterate_phdr reported no link-map counts")
	}
	if StillAbsent("libpathfinder-stillabsent.so.1") {
		t.Fatal("absent before anyone looked")
	}
	if _, ok := Loaded("libpathfinder-stillabsent.so.1"); ok {
		t.Fatal("loaded before it was loaded")
	}
	if !StillAbsent("libpathfinder-stillabsent.so.1") {
		t.Fatal("the absence Loaded found is not remembered")
	}
	if StillAbsent("libpathfinder-stillabsent-unasked.so.1") {
		t.Fatal("a name never asked for is remembered as absent")
	}
	// Another library loaded: the link map changed, so nothing is known to be absent any more.
	if _, err := Open(other, false); err != nil {
		t.Fatal(err)
	}
	if StillAbsent("libpathfinder-stillabsent.so.1") {
		t.Fatal("still absent after the link map changed")
	}
	if _, ok := Loaded("libpathfinder-stillabsent.so.1"); ok || !StillAbsent("libpathfinder-stillabsent.so.1") {
		t.Fatal("not remembered again after a fresh look")
	}
	// The library itself loaded: Loaded must see it, and it is not absent.
	lib, err := Open(target, false)
	if err != nil {
		t.Fatal(err)
	}
	if StillAbsent("libpathfinder-stillabsent.so.1") {
		t.Fatal("absent after it was loaded")
	}
	if l, ok := Loaded("libpathfinder-stillabsent.so.1"); !ok || l.Path != lib.Path {
		t.Fatalf("Loaded after loading = %+v, %v; want %s", l, ok, lib.Path)
	}
}

// TestOpen_errorMessageSurvivesThreadSwitches: dlerror's message belongs to the thread that called
// dlopen; a goroutine moved to another thread in between read an empty one ("dlopen X: ", seen once
// in about a thousand failed loads of Debian's libnccl). Many goroutines failing at once make the
// switch likely; every message must still say why.
func TestOpen_errorMessageSurvivesThreadSwitches(t *testing.T) {
	var wg sync.WaitGroup
	var empty atomic.Int64
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				_, err := Open("/nonexistent/libpathfinder-missing.so.1", false)
				if err == nil || !strings.Contains(err.Error(), "No such file") {
					empty.Add(1)
				}
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	if n := empty.Load(); n > 0 {
		t.Fatalf("%d of 4800 failed loads lost the loader's message", n)
	}
}
