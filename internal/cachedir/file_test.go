package cachedir

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// Test_check says why a directory may not hold caches, and that one may.
func Test_check(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	tests := []struct {
		name, dir, anchor, want string // want is in the error; "" for none
	}{
		{"a private directory", dir, filepath.Dir(dir), ""},
		{"not made yet, in a directory that exists", filepath.Join(dir, "cache"), dir, ""},
		{"not made yet, its own components below the anchor", filepath.Join(dir, ".cache/pathfinder"), dir, ""},
		{"the anchor does not exist", filepath.Join(dir, "missing/.cache/pathfinder"), filepath.Join(dir, "missing"), "missing does not exist"},
		{"the anchor is a file", filepath.Join(f, "cache"), f, "not a directory"},
		{"a file", f, filepath.Dir(f), "not a directory"},
		{"a directory others can write", open, filepath.Dir(open), "writable by others"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := check(tt.dir, tt.anchor)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("check(%q, %q) = %v, want %q", tt.dir, tt.anchor, err, tt.want)
			}
		})
	}
}
