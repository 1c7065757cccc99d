package observe_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
)

// TestStatInDir: wherever the one-fstatat path answers, it answers what r.Stat does.
func TestStatInDir(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "a/b/c"), 0o755))
	must(os.WriteFile(filepath.Join(root, "a/b/c/lib.so"), []byte("x"), 0o644))
	must(os.WriteFile(filepath.Join(root, "a/b/setuid"), []byte("xy"), 0o755))
	must(os.Chmod(filepath.Join(root, "a/b/setuid"), 0o755|os.ModeSetuid|os.ModeSetgid))
	must(os.Mkdir(filepath.Join(root, "a/sticky"), 0o777))
	must(os.Chmod(filepath.Join(root, "a/sticky"), 0o777|os.ModeSticky))
	must(syscall.Mkfifo(filepath.Join(root, "a/fifo"), 0o600))
	must(os.Symlink("b/c", filepath.Join(root, "a/inside")))       // stays in the root
	must(os.Symlink(outside, filepath.Join(root, "a/escape")))     // leads out
	must(os.Symlink("nowhere", filepath.Join(root, "a/dangling"))) // leads nowhere
	must(os.Symlink("../../a/b", filepath.Join(root, "a/b/c/up"))) // up and back in
	must(os.WriteFile(filepath.Join(outside, "lib.so"), []byte("o"), 0o644))
	r, err := os.OpenRoot(root)
	must(err)
	defer r.Close()
	paths := []string{
		"a", "a/b", "a/b/c", "a/b/c/lib.so", "a/b/c/lib.so.1", "a/b/setuid", "a/sticky", "a/fifo",
		"a/inside", "a/inside/lib.so", "a/escape", "a/escape/lib.so", "a/dangling", "a/dangling/x",
		"a/b/c/up", "a/b/c/up/c/lib.so", "a/b/c/lib.so/x", "missing", "missing/deeper/x", "a/missing/x",
		"a/../a/b", "./a", "a//b",
	}
	statInDir, done := observe.StatInDir()
	defer done()
	answered := 0
	for _, p := range paths {
		o := observe.Observation{Root: root, Path: p, What: observe.Stat}
		want := sandboxfs.See(r, o)
		got, ok := statInDir(o)
		if !ok {
			continue
		}
		answered++
		if got != want {
			t.Errorf("%s: one fstatat saw %q, r.Stat %q", p, got, want)
		}
	}
	if answered < 10 { // every path without a symlink on the way or an odd spelling
		t.Errorf("the fast path answered only %d of %d paths", answered, len(paths))
	}
}
