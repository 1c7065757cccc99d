package observe_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lib", "libx.so.1")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte("x"), 0o644)
	os.Mkdir(filepath.Join(dir, "host"), 0o755)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	env := map[string]string{"CUDA_HOME": "/a"}
	getenv := func(k string) string { return env[k] }

	record := func() []observe.Observation {
		rec := &observe.Recorder{}
		rec.Getenv(getenv)("CUDA_HOME")
		rec.Stat(file)
		rec.Stat(filepath.Join(dir, "absent"))
		rec.ReadDir(filepath.Join(dir, "host"))
		rfs := sandboxfs.NewRootFS(root, dir)
		rfs.Record(rec, nil)
		if f, err := rfs.Open("lib"); err == nil {
			f.(interface {
				ReadDir(int) ([]os.DirEntry, error)
			}).ReadDir(-1)
			f.Close()
		}
		rfs.Open("lib/libx.so.1")
		rfs.Open("lib/missing")
		return rec.List()
	}
	tests := []struct {
		name   string
		change func()
		what   string // "" = still valid
	}{
		{"nothing", func() {}, ""},
		{"env", func() { env["CUDA_HOME"] = "/b" }, "env CUDA_HOME changed"},
		{"mtime", func() { later := time.Now().Add(time.Hour); os.Chtimes(file, later, later) }, "stat " + file + " changed"},
		{"size", func() { os.WriteFile(file, []byte("xy"), 0o644) }, "changed"},
		{"appeared", func() { os.WriteFile(filepath.Join(dir, "absent"), nil, 0o644) }, "absent changed"},
		{"listing", func() { os.WriteFile(filepath.Join(dir, "lib", "new"), nil, 0o644) }, "lib changed"},
		{"host listing", func() { os.WriteFile(filepath.Join(dir, "host", "new"), nil, 0o644) }, "dir " + filepath.Join(dir, "host") + " changed"},
		{"confined view", func() { os.Symlink("/etc/passwd", filepath.Join(dir, "lib", "missing")) }, "lib"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := record()
			if got := observe.Check(seen, getenv, sandboxfs.See); got != "" {
				t.Fatalf("fresh record invalid: %s", got)
			}
			tt.change()
			got := observe.Check(seen, getenv, sandboxfs.See)
			if (tt.what == "") != (got == "") || !strings.Contains(got, tt.what) {
				t.Fatalf("Check after %s = %q, want %q", tt.name, got, tt.what)
			}
		})
	}
}

func TestRecorder_dedupes(t *testing.T) {
	rec := &observe.Recorder{}
	rec.Add(observe.Observation{Path: "/a", What: observe.Stat, Seen: "1"})
	rec.Add(observe.Observation{Path: "/a", What: observe.Stat, Seen: "2"})
	if l := rec.List(); len(l) != 1 || l[0].Seen != "1" {
		t.Fatalf("%+v", l)
	}
	var nilRec *observe.Recorder
	nilRec.Add(observe.Observation{}) // a nil recorder records nothing and does not crash
	if nilRec.List() != nil {
		t.Fatal("nil recorder listed something")
	}
}
