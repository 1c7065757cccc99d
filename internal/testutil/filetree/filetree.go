// Package filetree writes a tree of files, folders and symbolic links that a test describes as a
// map: a machine's /sys and /dev, a toolkit's prefix, a loader's search path.
package filetree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Write makes files under root. Each key is a slash-separated path under root (a leading slash is
// under root too); its value is the file's content, but "dir" makes a folder and "-> target" a
// symbolic link to target.
func Write(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch target, isLink := strings.CutPrefix(content, "-> "); {
		case content == "dir":
			err = os.MkdirAll(p, 0o755)
		case isLink:
			err = os.Symlink(target, p)
		default:
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Put writes data at root/rel (slash-separated), executable as a shared object is, making the
// folders above it, and returns the file's path.
func Put(t testing.TB, root, rel string, data []byte) string {
	t.Helper()
	return PutMode(t, root, rel, data, 0o755)
}

// PutMode is Put with the file's mode set to mode exactly, whatever the umask.
func PutMode(t testing.TB, root, rel string, data []byte, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// Mkdir makes the folder root/rel and those above it, with its mode set to mode exactly, whatever
// the umask, and returns its path.
func Mkdir(t testing.TB, root, rel string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// Symlink makes dst a symlink to target (relative targets are relative to dst's directory), as
// packages and toolkits install soname links and lib64 -> targets/x86_64-linux/lib.
func Symlink(t testing.TB, target, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, dst); err != nil {
		t.Fatal(err)
	}
}

// New writes files (as Write does) under a new temporary directory, removed when the test ends, and
// returns it.
func New(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	Write(t, root, files)
	return root
}
