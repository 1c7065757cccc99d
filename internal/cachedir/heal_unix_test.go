//go:build unix

package cachedir

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWrite_replacesWhatIsNoFile puts what is not a regular file where an entry goes: Write removes
// it (only it: never what a symlink leads to) and writes the entry, which Read then returns.
func TestWrite_replacesWhatIsNoFile(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, entry, outside string)
	}{
		{"an empty directory", func(t *testing.T, entry, _ string) { mustOK(t, os.Mkdir(entry, 0o755)) }},
		{"a directory with files and directories in it", func(t *testing.T, entry, _ string) {
			mustOK(t, os.MkdirAll(filepath.Join(entry, "a/b"), 0o755))
			mustOK(t, os.WriteFile(filepath.Join(entry, "a/b/c"), []byte("x"), 0o644))
		}},
		{"a read-only directory", func(t *testing.T, entry, _ string) {
			mustOK(t, os.MkdirAll(filepath.Join(entry, "a"), 0o755))
			mustOK(t, os.Chmod(entry, 0o500))
		}},
		{"a FIFO", func(t *testing.T, entry, _ string) { mustOK(t, syscall.Mkfifo(entry, 0o644)) }},
		{"a symlink to a directory outside", func(t *testing.T, entry, outside string) { mustOK(t, os.Symlink(outside, entry)) }},
		{"a symlink to a file outside", func(t *testing.T, entry, outside string) {
			mustOK(t, os.Symlink(filepath.Join(outside, "keep"), entry))
		}},
		{"a dangling symlink", func(t *testing.T, entry, outside string) {
			mustOK(t, os.Symlink(filepath.Join(outside, "missing"), entry))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entry := filepath.Join(t.TempDir(), "ab", "entry.json")
			outside := t.TempDir()
			keep := filepath.Join(outside, "keep")
			mustOK(t, os.WriteFile(keep, []byte("someone's file"), 0o644))
			mustOK(t, os.MkdirAll(filepath.Dir(entry), 0o755))
			tt.make(t, entry, outside)
			if err := Write(entry, []byte("answer")); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if got, ok := Read(entry); !ok || string(got) != "answer" {
				t.Fatalf("Read after Write = %q, %v", got, ok)
			}
			if fi, err := os.Lstat(entry); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("entry is %v, %v; want a regular file", fi.Mode(), err)
			}
			if b, err := os.ReadFile(keep); err != nil || string(b) != "someone's file" {
				t.Fatalf("a file outside changed: %q, %v", b, err)
			}
			if left := temps(t, filepath.Dir(entry)); len(left) != 0 {
				t.Fatalf("left behind: %v", left)
			}
		})
	}
}

// TestWrite_removesAbandonedTemps leaves temporaries in an entry's directory as a writer killed
// between its write and its rename leaves them: the next Write there removes them, unless a live
// writer holds them, and leaves everything else alone.
func TestWrite_removesAbandonedTemps(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "target")
	mustOK(t, os.WriteFile(outside, []byte("someone's file"), 0o644))
	// A live writer's: held as Write holds its own.
	live, err := createTemp(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	liveDir, release, err := tempDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	abandoned := map[string]func(p string){
		".tmp-1234":  func(p string) { mustOK(t, os.WriteFile(p, []byte("half an entry"), 0o600)) },
		".tmp-empty": func(p string) { mustOK(t, os.WriteFile(p, nil, 0o600)) },
		".tmp-dir": func(p string) {
			mustOK(t, os.MkdirAll(filepath.Join(p, "wazero-x"), 0o700))
			mustOK(t, os.WriteFile(filepath.Join(p, "wazero-x/f"), nil, 0o600))
		},
		".tmp-symlink": func(p string) { mustOK(t, os.Symlink(outside, p)) },
	}
	for name, make := range abandoned {
		make(filepath.Join(dir, name))
	}
	mustOK(t, os.WriteFile(filepath.Join(dir, "other.json"), []byte("not a temporary"), 0o644))

	if err := Write(filepath.Join(dir, "entry.json"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	got := temps(t, dir)
	want := map[string]bool{filepath.Base(live.Name()): true, filepath.Base(liveDir): true}
	if len(got) != len(want) || !want[got[0]] || !want[got[1]] {
		t.Fatalf("temporaries after Write: %v; want only the live writers' %v", got, want)
	}
	for _, keep := range []string{filepath.Join(dir, "other.json"), outside} {
		if _, err := os.Stat(keep); err != nil {
			t.Fatalf("%s: %v", keep, err)
		}
	}
	// Once its writer lets go, the next Write removes it.
	live.Close()
	release()
	mustOK(t, Write(filepath.Join(dir, "entry.json"), []byte("y")))
	if got := temps(t, dir); len(got) != 0 {
		t.Fatalf("left behind after their writers let go: %v", got)
	}
}

// temps lists the temporaries in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
	mustOK(t, err)
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
