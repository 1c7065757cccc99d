//go:build unix

package sandboxfs

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// TestRootFS_special opens a FIFO the way the sandbox does for a guest: it must not block (a FIFO's
// open waits for a writer), the guest must see what it is, and reading it must fail, not wait. A
// socket and a device are not opened either.
func TestRootFS_special(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "socket"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	specials := map[string]fs.FileMode{"fifo": fs.ModeNamedPipe, "socket": fs.ModeSocket}
	// /dev/null's numbers: opening it is harmless, so a test can tell it was not opened only by
	// what OpenIn says.
	if err := syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		specials["null"] = fs.ModeDevice | fs.ModeCharDevice
	}
	os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644)
	root, rfs, rec := recorded(t, dir, nil)

	done := make(chan error, 1)
	go func() {
		f, err := rfs.Open("fifo")
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
			done <- errors.New("the guest does not see a FIFO")
			return
		}
		if _, err := f.Read(make([]byte, 1)); err == nil || err == io.EOF {
			done <- errors.New("a FIFO was read")
			return
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		if w, err := os.OpenFile(filepath.Join(dir, "fifo"), os.O_WRONLY, 0); err == nil {
			w.Close() // let the blocked open end
		}
		t.Fatal("opening a FIFO blocked")
	}
	if l := rec.List(); len(l) != 1 || l[0].Path != "fifo" || l[0].Seen[0] != 'p' {
		t.Errorf("recorded %+v; want the FIFO's stat", l)
	}
	for name, mode := range specials {
		if _, fi, err := OpenIn(root, name, nil); !errors.Is(err, ErrNotFileOrDir) || fi == nil || fi.Mode().Type() != mode {
			t.Errorf("OpenIn(%s): %v", name, err)
		}
		if f, err := rfs.Open(name); err != nil {
			t.Errorf("the guest cannot stat %s: %v", name, err)
		} else if _, err := f.Read(make([]byte, 1)); err == nil {
			t.Errorf("the guest read %s", name)
		}
	}
	f, fi, err := OpenIn(root, "file", nil)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("OpenIn(file): %v", err)
	}
	f.Close()
	// A stat that said "regular file" while a FIFO is there now: the open does not block, and the
	// open file's own stat refuses it.
	if _, _, err := OpenIn(root, "fifo", fi); !errors.Is(err, ErrNotFileOrDir) {
		t.Errorf("OpenIn(fifo swapped in after the stat): %v", err)
	}
}

// TestSee_dirBecameFIFO: a result cache's check of a directory that is now a FIFO says it changed,
// and does not wait for a writer that never comes.
func TestSee_dirBecameFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, _, _ := recorded(t, dir, nil)
	o := observe.Observation{Root: dir, Path: "lib", What: observe.Dir}
	o.Seen = See(root, o)
	if err := os.Remove(filepath.Join(dir, "lib")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "lib"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- See(root, o) }()
	select {
	case seen := <-done:
		if seen == o.Seen {
			t.Errorf("a directory become a FIFO is seen as before: %q", seen)
		}
	case <-time.After(time.Minute):
		if w, err := os.OpenFile(filepath.Join(dir, "lib"), os.O_WRONLY, 0); err == nil {
			w.Close() // let the blocked open end
		}
		t.Fatal("seeing a FIFO where a directory was blocked")
	}
}
