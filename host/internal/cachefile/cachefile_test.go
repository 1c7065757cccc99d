package cachefile

import (
	"bytes"
	"os"
	"path/filepath"
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
