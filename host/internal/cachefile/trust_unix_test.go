//go:build unix

package cachefile

import (
	"os"
	"path/filepath"
	"strings"
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

func TestUntrusted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	mk := func(t *testing.T, dir, rel string, mode os.FileMode) string {
		p := filepath.Join(dir, rel)
		os.MkdirAll(p, 0o700)
		os.Chmod(p, mode)
		return p
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  string // "" for trusted; $DIR is the test's directory
	}{
		{"private", func(t *testing.T, dir string) string { return mk(t, dir, "a/b", 0o755) }, ""},
		{"missing below private", func(t *testing.T, dir string) string { return filepath.Join(dir, "x/y/z") }, ""},
		{"itself writable by others", func(t *testing.T, dir string) string { return mk(t, dir, "a", 0o777) },
			"directory $DIR/a is writable by others than its owner (mode 0777)"},
		{"a file writable by its group", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "f")
			os.WriteFile(p, nil, 0o664)
			os.Chmod(p, 0o664)
			return p
		}, "file $DIR/f is writable by others than its owner (mode 0664)"},
		{"sticky", func(t *testing.T, dir string) string {
			mk(t, dir, "tmp", 0o777|os.ModeSticky)
			return mk(t, dir, "tmp/mine", 0o700)
		}, ""},
		{"sticky, but another user's entry", func(t *testing.T, dir string) string {
			mk(t, dir, "tmp", 0o777|os.ModeSticky)
			p := mk(t, dir, "tmp/theirs", 0o755)
			os.Chown(p, 65534, 65534)
			return filepath.Join(p, "f")
		}, "$DIR/tmp/theirs is owned by uid 65534, neither this user nor root"},
		{"dot-dot through a symlink is resolved as the kernel does", func(t *testing.T, dir string) string {
			mk(t, dir, "w/sub", 0o755)
			os.Chmod(filepath.Join(dir, "w"), 0o777)
			os.Symlink(filepath.Join(dir, "w/sub"), filepath.Join(dir, "link"))
			return dir + "/link/../x" // $DIR/w/x, in the directory others can write (not $DIR/x, as Clean would say)
		}, "directory $DIR/w is writable by others than its owner (mode 0777)"},
		{"a symlink loop", func(t *testing.T, dir string) string {
			os.Symlink("loop", filepath.Join(dir, "loop"))
			return filepath.Join(dir, "loop/x")
		}, "too many levels of symbolic links"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			got := Untrusted(tt.setup(t, dir))
			want := strings.ReplaceAll(tt.want, "$DIR", dir)
			if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
				t.Fatalf("Untrusted = %q, want %q", got, want)
			}
		})
	}
}
