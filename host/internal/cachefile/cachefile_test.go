package cachefile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a", "b.json")
	Write(p, []byte(`{"x":1}`))
	if got, ok := Read(p); !ok || string(got) != `{"x":1}` {
		t.Fatalf("Read = %q, %v", got, ok)
	}
	// Around the size read in one go, and well past it.
	for _, n := range []int{4<<10 - 66, 4<<10 - 65, 4<<10 - 64, 4 << 10, 100 << 10} {
		data := bytes.Repeat([]byte("x"), n)
		Write(p, data)
		if got, ok := Read(p); !ok || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: Read gave %d bytes, %v", n, len(got), ok)
		}
	}
	Write(p, []byte(`{"x":1}`))
	raw, _ := os.ReadFile(p)
	for name, bad := range map[string][]byte{
		"truncated":    raw[:len(raw)-2],
		"flipped":      append(append([]byte{}, raw[:len(raw)-2]...), '2', '}'),
		"no checksum":  []byte(`{"x":1}`),
		"empty":        nil,
		"bad checksum": append([]byte("0000000000000000000000000000000000000000000000000000000000000000\n"), `{"x":1}`...),
	} {
		os.WriteFile(p, bad, 0o644)
		if got, ok := Read(p); ok {
			t.Errorf("%s: accepted %q", name, got)
		}
	}
}

func TestUsable(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	if !Usable(dir) || !Usable(filepath.Join(dir, "missing")) {
		t.Fatal("a private dir is not usable")
	}
	os.Chmod(dir, 0o777)
	if Usable(dir) {
		t.Fatal("a dir others can write is usable")
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if Usable(f) {
		t.Fatal("a file is usable as a dir")
	}
}

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
		{"sticky", func(t *testing.T, dir string) string { mk(t, dir, "tmp", 0o777|os.ModeSticky); return mk(t, dir, "tmp/mine", 0o700) }, ""},
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
