//go:build unix

package cachedir

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRead_fifo reads a cache file that is a FIFO (with a writer holding it open, so that a read
// would wait): it is refused at once.
func TestRead_fifo(t *testing.T) {
	p := filepath.Join(t.TempDir(), "entry")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	w, err := os.OpenFile(p, os.O_RDWR, 0) // a writer that never writes
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	done := make(chan bool, 1)
	go func() { _, ok := Read(p); done <- ok }()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("a FIFO read as a cache file")
		}
	case <-time.After(time.Minute):
		t.Fatal("reading a FIFO blocked")
	}
}
