package filetree

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPut: the modes are exact, whatever the umask, and the folders above are made.
func TestPut(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	root := t.TempDir()
	for _, tt := range []struct {
		path string
		mode os.FileMode
	}{
		{Put(t, root, "lib/libx.so.1", []byte("x")), 0o755},
		{PutMode(t, root, "site/plugin.wasm", []byte("x"), 0o664), 0o664},
		{Mkdir(t, root, "tmp/shared", 0o777|os.ModeSticky), 0o777 | os.ModeSticky | os.ModeDir},
	} {
		fi, err := os.Stat(tt.path)
		if err != nil || fi.Mode() != tt.mode || !strings.HasPrefix(tt.path, root) {
			t.Errorf("%s: %v, %v; want mode %v", tt.path, fi.Mode(), err, tt.mode)
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "lib/libx.so.1")); err != nil || string(b) != "x" {
		t.Errorf("Put wrote %q, %v", b, err)
	}
}
