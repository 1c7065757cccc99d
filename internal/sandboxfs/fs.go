package sandboxfs

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"sync/atomic"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// RootFS is the file system a sandbox mounts for one granted root: os.Root's, so nothing is read
// outside it, and where a link leads out of it, what the link leads to, to be looked at but not
// read (StatIn). It records every open, stat and listing into the Recorder current at the time. The
// host swaps the recorder per call; an instance serves one call at a time.
type RootFS struct {
	Root  *os.Root
	Mount string // the host path of the root, recorded as the observations' root
	rec   atomic.Pointer[observe.Recorder]
	log   atomic.Pointer[func(string)]
}

// NewRootFS returns a recording view of root mounted at mount.
func NewRootFS(root *os.Root, mount string) *RootFS { return &RootFS{Root: root, Mount: mount} }

// Record sends what follows to r (nil stops recording), and says each read refused to log (nil: to
// no one).
func (f *RootFS) Record(r *observe.Recorder, log func(string)) {
	f.rec.Store(r)
	if log == nil {
		f.log.Store(nil)
	} else {
		f.log.Store(&log)
	}
}

func (f *RootFS) add(name, what, seen string) {
	if r := f.rec.Load(); r != nil {
		r.Add(observe.Observation{Root: f.Mount, Path: path.Clean(name), What: what, Seen: seen})
	}
}

// Open opens name confined to the root and records what it saw. A FIFO, socket or device is never
// opened (OpenIn): the guest gets a file it can stat but not read. Through a link out of the root,
// a directory can be listed and a file stat'ed, never read.
func (f *RootFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	fi, reached, seen, err := StatIn(f.Root, f.Mount, name)
	f.add(name, observe.Stat, seen)
	if err != nil {
		return nil, err
	}
	var file *os.File
	switch {
	case !fileOrDir(fi):
		return statOnly{fi: fi}, nil
	case !reached.Out:
		if file, fi, err = OpenIn(f.Root, name, fi); err != nil {
			return nil, err
		}
	case fi.IsDir():
		if file, fi, _, err = OpenFollowed(f.Mount, name); err != nil {
			return nil, err
		}
	default:
		log := f.log.Load()
		return statOnly{fi, func() {
			if log != nil {
				(*log)(fmt.Sprintf("read of %s refused: %v (%s)", name, ErrReadThroughLink, reached))
			}
		}}, nil
	}
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
		d.fs.add(d.name, observe.Dir, observe.DirSeen(d.names, nil))
	}
	return entries, err
}
