package sandboxfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// linkForest is a granted directory whose links lead out, as real installs' do, and the tree they
// lead into.
func linkForest(t *testing.T) (granted, store string) {
	t.Helper()
	top := t.TempDir()
	granted, store = filepath.Join(top, "granted"), filepath.Join(top, "store")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"granted/lib", "granted/sub", "store/pkg/lib", "store/nvvm/libdevice"} {
		must(os.MkdirAll(filepath.Join(top, d), 0o755))
	}
	must(os.WriteFile(filepath.Join(store, "pkg/lib/libx.so.1.2"), []byte("ELF-ish"), 0o644))
	must(os.WriteFile(filepath.Join(store, "nvvm/libdevice/libdevice.10.bc"), []byte("BC"), 0o644))
	must(os.WriteFile(filepath.Join(granted, "inside.txt"), []byte("inside"), 0o644))
	must(syscall.Mkfifo(filepath.Join(store, "fifo"), 0o644))
	links := map[string]string{
		"lib/libx.so.1":   filepath.Join(store, "pkg/lib/libx.so.1.2"), // absolute, as uv's
		"lib/rel.so.1":    "../../store/pkg/lib/libx.so.1.2",           // relative, up and out
		"nvvm":            "../store/nvvm",                             // a directory, as Nix's symlinkJoin
		"lib/chain.so.1":  "libx.so.1",                                 // a link to a link
		"lib/inside":      "../inside.txt",                             // stays inside
		"lib/dangling":    filepath.Join(store, "nowhere"),
		"lib/loop-a":      "loop-b",
		"lib/loop-b":      "loop-a",
		"lib/zero":        "/dev/zero",
		"lib/proc":        "/proc/self",
		"lib/fifo":        filepath.Join(store, "fifo"),
		"sub/up-and-back": "../../granted/inside.txt",
	}
	for l, target := range links {
		must(os.Symlink(target, filepath.Join(granted, l)))
	}
	// 60 links, each to the next: past the kernel's 40.
	for i := range 60 {
		must(os.Symlink("c"+strconv.Itoa(i+1), filepath.Join(store, "c"+strconv.Itoa(i))))
	}
	must(os.WriteFile(filepath.Join(store, "c60"), nil, 0o644))
	must(os.Symlink(filepath.Join(store, "c0"), filepath.Join(granted, "lib/long-chain")))
	return granted, store
}

func TestFollow(t *testing.T) {
	granted, store := linkForest(t)
	real := func(p string) string { r, _ := filepath.EvalSymlinks(p); return r }
	tests := []struct {
		name, path string
		want       string // the real path reached, "" for an error
		out        bool
		links      int
		err        error
	}{
		{name: "absolute link out", path: "lib/libx.so.1", want: real(store) + "/pkg/lib/libx.so.1.2", out: true, links: 1},
		{name: "relative link up and out", path: "lib/rel.so.1", want: real(store) + "/pkg/lib/libx.so.1.2", out: true, links: 1},
		{name: "a file under a directory link", path: "nvvm/libdevice/libdevice.10.bc", want: real(store) + "/nvvm/libdevice/libdevice.10.bc", out: true, links: 1},
		{name: "a chain", path: "lib/chain.so.1", want: real(store) + "/pkg/lib/libx.so.1.2", out: true, links: 2},
		{name: "a link that stays inside", path: "lib/inside", want: real(granted) + "/inside.txt", links: 1},
		{name: "out and back in is out", path: "sub/up-and-back", want: real(granted) + "/inside.txt", out: true, links: 1},
		{name: "dot-dot after a directory link is the target's parent", path: "nvvm/../pkg/lib/libx.so.1.2", want: real(store) + "/pkg/lib/libx.so.1.2", out: true, links: 1},
		{name: "dangling", path: "lib/dangling", err: fs.ErrNotExist},
		{name: "loop", path: "lib/loop-a", err: ErrTooManyLinks},
		{name: "60-link chain", path: "lib/long-chain", err: ErrTooManyLinks},
		{name: "/dev/zero", path: "lib/zero", err: ErrForbidden},
		{name: "/proc", path: "lib/proc/environ", err: ErrForbidden},
		{name: "a FIFO is stat'ed, never opened", path: "lib/fifo", want: real(store) + "/fifo", out: true, links: 1},
		{name: "no link", path: "inside.txt", want: real(granted) + "/inside.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fi, r, err := Follow(granted, tt.path)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Follow(%s) = %v, %+v; want %v", tt.path, err, r, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Follow(%s): %v", tt.path, err)
			}
			if r.Path != tt.want || r.Out != tt.out || len(r.Links) != tt.links {
				t.Fatalf("Follow(%s) = %+v; want %s, out %v, %d links", tt.path, r, tt.want, tt.out, tt.links)
			}
			if now, err := os.Stat(r.Path); err != nil || !os.SameFile(now, fi) {
				t.Fatalf("Follow(%s)'s FileInfo is not %s's", tt.path, r.Path)
			}
		})
	}
}

// TestRootFS_throughLinks: what a step sees through a link out of its directory: a file's stat and a
// directory's names, never a file's bytes (the read fails and the step's log says why), and nothing
// in /dev or /proc. Reads inside are as before.
func TestRootFS_throughLinks(t *testing.T) {
	granted, _ := linkForest(t)
	var log []string
	_, rfs, rec := recorded(t, granted, func(l string) { log = append(log, l) })

	fi, err := fs.Stat(rfs, "lib/libx.so.1")
	if err != nil || fi.Size() != int64(len("ELF-ish")) {
		t.Fatalf("stat through a link out: %v, %v", fi, err)
	}
	if _, err := fs.ReadFile(rfs, "lib/libx.so.1"); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("read through a link out: %v; want permission refused", err)
	}
	if len(log) != 1 || !strings.Contains(log[0], "lib/libx.so.1") || !strings.Contains(log[0], " → "+filepath.Dir(granted)+"/store/pkg/lib/libx.so.1.2") {
		t.Fatalf("the log says %q; want the read refused, naming the link", log)
	}
	names, err := fs.ReadDir(rfs, "nvvm/libdevice")
	if err != nil || len(names) != 1 || names[0].Name() != "libdevice.10.bc" {
		t.Fatalf("a directory through a link: %v, %v", names, err)
	}
	if b, err := fs.ReadFile(rfs, "lib/inside"); err != nil || string(b) != "inside" {
		t.Fatalf("a link that stays inside reads as before: %q, %v", b, err)
	}
	for _, p := range []string{"lib/zero", "lib/proc/environ", "lib/loop-a", "lib/long-chain"} {
		if f, err := rfs.Open(p); err == nil {
			b, _ := io.ReadAll(io.LimitReader(f, 8))
			t.Errorf("%s opened (%q)", p, b)
		}
	}
	fifo, err := rfs.Open("lib/fifo")
	if err != nil {
		t.Fatalf("a FIFO through a link: %v; want a file to stat", err)
	}
	if fi, _ := fifo.Stat(); fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO is %v", fi.Mode())
	}
	// Every observation is re-made alike, and re-pointing a link changes the one it is on.
	list := rec.List()
	if why := observe.Check(list, os.Getenv, See); why != "" {
		t.Fatalf("nothing changed, yet: %s", why)
	}
	if !slices.ContainsFunc(list, func(o observe.Observation) bool { return strings.Contains(o.Seen, " via ") }) {
		t.Fatalf("no observation holds the links: %+v", list)
	}
	link := filepath.Join(granted, "lib/libx.so.1")
	os.Remove(link)
	if err := os.Symlink("../../store/pkg/lib/libx.so.1.2", link); err != nil { // the same file, another way
		t.Fatal(err)
	}
	if why := observe.Check(list, os.Getenv, See); !strings.Contains(why, "lib/libx.so.1 changed") {
		t.Fatalf("a re-pointed link: Check says %q", why)
	}
}
