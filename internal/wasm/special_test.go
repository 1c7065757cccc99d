//go:build unix

package wasm

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestModule_fifoDoesNotBlock puts a FIFO where the wheels step looks for the library: opening it
// for reading would block in the host until a writer came, inside a host call that no deadline can
// interrupt. The step must answer without it.
func TestModule_fifoDoesNotBlock(t *testing.T) {
	m := stepsModule(t)
	site := t.TempDir()
	lib := filepath.Join(site, "nvidia/cu13/lib/libcudart.so.13")
	os.MkdirAll(filepath.Dir(lib), 0o755)
	if err := syscall.Mkfifo(lib, 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(site)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	done := make(chan string, 1)
	go func() {
		got, _ := wheelsCall(t, m, site, root)
		done <- got
	}()
	select {
	case <-done: // whether the step proposes it or not, the host's check refuses what is no regular file
	case <-time.After(time.Minute):
		// Unblock the open so the test binary can end, then fail.
		if f, err := os.OpenFile(lib, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("the step blocked on the FIFO")
	}
}
