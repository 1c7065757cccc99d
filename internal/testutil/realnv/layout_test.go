//go:build linux

package realnv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func inode(t *testing.T, p string) (dev, ino uint64) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return uint64(st.Dev), st.Ino
}

func TestPlaceAndCopy(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "libx.so.1.2.3")
	if err := os.WriteFile(src, []byte("\x7fELF real"), 0o644); err != nil {
		t.Fatal(err)
	}
	filetree.Symlink(t, "libx.so.1.2.3", filepath.Join(dir, "libx.so.1"))

	// Place follows the soname link and hard-links the file: one inode, as the loader sees it.
	linked := filepath.Join(dir, "site", "nvidia", "x", "lib", "libx.so.1")
	Place(t, filepath.Join(dir, "libx.so.1"), linked)
	if fi, _ := os.Lstat(linked); !fi.Mode().IsRegular() {
		t.Fatalf("%s is %v, want a regular file", linked, fi.Mode())
	}
	sd, si := inode(t, src)
	if d, i := inode(t, linked); d != sd || i != si {
		t.Errorf("Place made another inode (%d/%d, want %d/%d)", d, i, sd, si)
	}

	// Copy makes a file of its own with the same bytes.
	copied := filepath.Join(dir, "preload", "libx.so.1")
	Copy(t, filepath.Join(dir, "libx.so.1"), copied)
	if d, i := inode(t, copied); d == sd && i == si {
		t.Errorf("Copy shares the inode of %s", src)
	}
	if b, _ := os.ReadFile(copied); string(b) != "\x7fELF real" {
		t.Errorf("copy holds %q", b)
	}

	// On another filesystem Place copies. /dev/shm is one where it is mounted apart from the temp dir.
	if shm, err := os.MkdirTemp("/dev/shm", "realnv"); err == nil {
		defer os.RemoveAll(shm)
		if d, _ := inode(t, shm); d != sd {
			other := filepath.Join(shm, "libx.so.1")
			Place(t, src, other)
			if b, _ := os.ReadFile(other); string(b) != "\x7fELF real" {
				t.Errorf("cross-filesystem Place holds %q", b)
			}
		}
	}
}
