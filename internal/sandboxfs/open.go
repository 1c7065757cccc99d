package sandboxfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotFileOrDir is why OpenIn refuses a FIFO, a socket or a device.
var ErrNotFileOrDir = errors.New("not a regular file or directory: never opened")

// OpenIn opens name inside root for reading, and only a regular file or a directory: opening a FIFO
// blocks until a writer comes, in a host call that no deadline interrupts, and opening a device can
// act on it, so anything else is refused with ErrNotFileOrDir (and what a stat saw of it). A stat
// judges first; the open itself does not block (openFlags) and the open file's own stat judges
// again, so a file swapped in between is refused too. A caller that has just stat'ed name passes
// what it saw as seen, and that stat is not repeated.
func OpenIn(root *os.Root, name string, seen fs.FileInfo) (*os.File, fs.FileInfo, error) {
	return openChecked(name, seen, root.Stat, root.OpenFile)
}

// Open is OpenIn for a host path.
func Open(path string) (*os.File, fs.FileInfo, error) {
	return openChecked(path, nil, os.Stat, os.OpenFile)
}

func openChecked(name string, fi fs.FileInfo, stat func(string) (fs.FileInfo, error), open func(string, int, fs.FileMode) (*os.File, error)) (*os.File, fs.FileInfo, error) {
	if fi == nil {
		var err error
		if fi, err = stat(name); err != nil {
			return nil, nil, err
		}
	}
	if !fileOrDir(fi) {
		return nil, fi, &fs.PathError{Op: "open", Path: name, Err: ErrNotFileOrDir}
	}
	f, err := open(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil || !fileOrDir(fi) {
		f.Close()
		if err == nil {
			err = &fs.PathError{Op: "open", Path: name, Err: ErrNotFileOrDir}
		}
		return nil, fi, err
	}
	return f, fi, nil
}

func fileOrDir(fi fs.FileInfo) bool { return fi.Mode().IsRegular() || fi.IsDir() }

// statOnly stands for what the guest may stat but not read — a FIFO, socket or device, or a file
// reached through a link out of its root — and nothing was opened on the host. refused, when set,
// says why a read failed.
type statOnly struct {
	fi      fs.FileInfo
	refused func()
}

func (s statOnly) Stat() (fs.FileInfo, error) { return s.fi, nil }
func (s statOnly) Close() error               { return nil }
func (s statOnly) Read([]byte) (int, error) {
	if s.refused != nil {
		s.refused()
	}
	return 0, &fs.PathError{Op: "read", Path: s.fi.Name(), Err: syscall.EACCES}
}
