package candidate

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
)

// TestCheckContentOnce_rewrittenInPlace: a verdict is reused only for the content it judged: a
// library rewritten in place, its size and mtime kept, is judged again (its ctime moved).
func TestCheckContentOnce_rewrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libx.so.1")
	elfso.Build(t, lib, "libx.so.1", "int x(void){return 1;}")
	e := &catalog.Entry{Kind: abi.KindDynamicLib, Descriptor: abi.Descriptor{Name: "x", LinuxSonames: []string{"libx.so.1"}}}
	plat := abi.Platform{OS: "linux", Arch: "amd64"}
	check := func() error {
		f, err := os.Open(lib)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fi, _ := f.Stat()
		_, err = checkContentOnce(f, fi, e, plat)
		return err
	}
	for range 2 {
		if err := check(); err != nil {
			t.Fatalf("a valid library: %v", err)
		}
	}
	fi, _ := os.Stat(lib)
	ctime := func(fi os.FileInfo) syscall.Timespec { return fi.Sys().(*syscall.Stat_t).Ctim }
	os.WriteFile(lib, []byte(strings.Repeat("x", int(fi.Size()))), 0o755)
	os.Chtimes(lib, fi.ModTime(), fi.ModTime())
	// On a coarse clock the rewrite may share the judged file's ctime tick: touch the inode (a
	// chmod to the same mode sets the ctime, nothing else) until its ctime has moved.
	for now, _ := os.Stat(lib); ctime(now) == ctime(fi); now, _ = os.Stat(lib) {
		os.Chmod(lib, 0o755)
	}
	if now, _ := os.Stat(lib); now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) || !os.SameFile(now, fi) {
		t.Fatal("setup: the rewrite changed the size, the mtime or the inode")
	}
	if err := check(); err == nil || !strings.Contains(err.Error(), "not an ELF file") {
		t.Fatalf("after a rewrite in place: %v; want it judged again and refused", err)
	}
}
