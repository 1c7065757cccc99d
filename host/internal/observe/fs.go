package observe

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"sync/atomic"
)

// RootFS is the file system a sandbox mounts for one granted root: os.Root's, so nothing leads out of
// it, recording every open, stat and listing into the Recorder current at the time. The host swaps
// the recorder per call; an instance serves one call at a time.
type RootFS struct {
	Root  *os.Root
	Mount string // the host path of the root, recorded as the observations' root
	rec   atomic.Pointer[Recorder]
}

// NewRootFS returns a recording view of root mounted at mount.
func NewRootFS(root *os.Root, mount string) *RootFS { return &RootFS{Root: root, Mount: mount} }

// Record sends what follows to r (nil stops recording).
func (f *RootFS) Record(r *Recorder) { f.rec.Store(r) }

func (f *RootFS) add(name, what, seen string) {
	if r := f.rec.Load(); r != nil {
		r.Add(Observation{Root: f.Mount, Path: path.Clean(name), What: what, Seen: seen})
	}
}

// Open opens name confined to the root and records what it saw. A FIFO, socket or device is never
// opened (OpenIn): the guest gets a file it can stat but not read.
func (f *RootFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	file, fi, err := OpenIn(f.Root, name, nil)
	if errors.Is(err, ErrNotFileOrDir) && fi != nil {
		f.add(name, Stat, StatSeen(fi, nil))
		return specialFile{fi}, nil
	}
	if err != nil {
		f.add(name, Stat, StatSeen(nil, err))
		return nil, err
	}
	f.add(name, Stat, StatSeen(fi, nil))
	if fi.IsDir() {
		return &recordingDir{ReadDirFile: file, fs: f, name: name}, nil
	}
	return file, nil
}

// recordingDir records a directory's listing when the guest reads it whole.
type recordingDir struct {
	fs.ReadDirFile
	fs    *RootFS
	name  string
	names []string
}

func (d *recordingDir) ReadDir(n int) ([]fs.DirEntry, error) {
	entries, err := d.ReadDirFile.ReadDir(n)
	for _, e := range entries {
		d.names = append(d.names, e.Name())
	}
	if n <= 0 || err != nil {
		d.fs.add(d.name, Dir, DirSeen(d.names, nil))
	}
	return entries, err
}
