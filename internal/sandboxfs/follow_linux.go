package sandboxfs

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"golang.org/x/sys/unix"
)

// followsLinks: on Linux, a link out of a granted directory is followed (Follow).
const followsLinks = true

// Follow resolves name inside the granted directory mount as the kernel would (every link, and a
// ".." after one, taken where it leads), and stats what it reaches without following a last link.
// Each step is made from the descriptor of the directory before it, so a link re-pointed during
// the walk cannot lead it anywhere the walk did not check: never into /proc, /sys or /dev, through
// no more than MaxLinks links.
func Follow(mount, name string) (fs.FileInfo, Reached, error) {
	w, err := walk(mount, name)
	if err != nil {
		return nil, w.reached, err
	}
	unix.Close(w.dir)
	return w.info, w.reached, nil
}

// OpenFollowed opens, for reading, what name inside mount leads to (Follow): a regular file or a
// directory only, as OpenIn.
func OpenFollowed(mount, name string) (*os.File, fs.FileInfo, Reached, error) {
	w, err := walk(mount, name)
	if err != nil {
		return nil, nil, w.reached, err
	}
	defer unix.Close(w.dir)
	if !fileOrDir(w.info) {
		return nil, w.info, w.reached, &fs.PathError{Op: "open", Path: w.reached.Path, Err: ErrNotFileOrDir}
	}
	fd, err := unix.Openat(w.dir, w.last, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|openFlags, 0)
	if err != nil {
		return nil, nil, w.reached, &fs.PathError{Op: "open", Path: w.reached.Path, Err: err}
	}
	f := os.NewFile(uintptr(fd), w.reached.Path)
	fi, err := f.Stat()
	if err != nil || !fileOrDir(fi) || !os.SameFile(fi, w.info) {
		f.Close()
		return nil, nil, w.reached, &fs.PathError{Op: "open", Path: w.reached.Path, Err: ErrNotFileOrDir}
	}
	return f, fi, w.reached, nil
}

// walked is where a walk ended: the directory holding the last name, open, and what the name is.
type walked struct {
	dir     int    // O_PATH descriptor of the directory holding last
	last    string // the last name, never a link
	info    fs.FileInfo
	reached Reached
}

func walk(mount, name string) (w walked, err error) {
	// The walk's paths are real ones from the start, so that ".." after a link goes where the
	// kernel's would.
	cur, err := filepath.EvalSymlinks(mount)
	if err != nil {
		return w, err
	}
	w.reached.Path = cur
	dir, err := unix.Open(cur, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return w, &fs.PathError{Op: "open", Path: cur, Err: err}
	}
	defer func() {
		if err != nil {
			unix.Close(dir)
		}
	}()
	top := cur
	inside := func(p string) bool { return p == top || strings.HasPrefix(p, strings.TrimSuffix(top, "/")+"/") }
	rest := strings.Split(name, "/")
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if cur == "/" {
				continue
			}
			up, err := unix.Openat(dir, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return w, &fs.PathError{Op: "open", Path: path.Dir(cur), Err: err}
			}
			unix.Close(dir)
			dir, cur = up, path.Dir(cur)
			if err := w.enter(dir, cur, inside); err != nil {
				return w, err
			}
			continue
		}
		next := path.Join(cur, c)
		var st unix.Stat_t
		if err := unix.Fstatat(dir, c, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return w, &fs.PathError{Op: "stat", Path: next, Err: err}
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			if len(w.reached.Links) == MaxLinks {
				return w, &fs.PathError{Op: "stat", Path: next, Err: ErrTooManyLinks}
			}
			target, err := readlinkat(dir, c)
			if err != nil {
				return w, &fs.PathError{Op: "readlink", Path: next, Err: err}
			}
			w.reached.Links = append(w.reached.Links, search.Link{Path: next, Target: target})
			if strings.HasPrefix(target, "/") {
				root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
				if err != nil {
					return w, err
				}
				unix.Close(dir)
				dir, cur = root, "/"
				if err := w.enter(dir, cur, inside); err != nil {
					return w, err
				}
			}
			rest = append(strings.Split(target, "/"), rest...)
			continue
		}
		if !more(rest) {
			w.dir, w.last, w.reached.Path = dir, c, next
			if w.info, err = statAt(dir, c, next); err != nil {
				return w, err
			}
			if !inside(next) {
				w.reached.Out = true
			}
			if w.reached.Out && forbidden(next) {
				return w, &fs.PathError{Op: "stat", Path: next, Err: ErrForbidden}
			}
			return w, nil
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return w, &fs.PathError{Op: "stat", Path: next, Err: unix.ENOTDIR}
		}
		sub, err := unix.Openat(dir, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return w, &fs.PathError{Op: "open", Path: next, Err: err}
		}
		unix.Close(dir)
		dir, cur = sub, next
		if err := w.enter(dir, cur, inside); err != nil {
			return w, err
		}
	}
	// name named mount itself, or a link led back to a directory: what it reaches is cur.
	up, err := unix.Openat(dir, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return w, &fs.PathError{Op: "open", Path: path.Dir(cur), Err: err}
	}
	unix.Close(dir)
	dir = up
	w.dir, w.last, w.reached.Path = dir, path.Base(cur), cur
	w.info, err = statAt(dir, w.last, cur)
	return w, err
}

// statAt is what os.Lstat says of name in dir (called p): a FileInfo os.SameFile can compare.
func statAt(dir int, name, p string) (fs.FileInfo, error) {
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	return f.Stat()
}

// enter notes that the walk is now in the directory cur (open as dir): out of the granted directory
// once it has left it, and refused in /proc, /sys, /dev or a file system of theirs mounted elsewhere.
func (w *walked) enter(dir int, cur string, inside func(string) bool) error {
	if !inside(cur) {
		w.reached.Out = true
	}
	if !w.reached.Out {
		return nil
	}
	var sfs unix.Statfs_t
	if forbidden(cur) || unix.Fstatfs(dir, &sfs) == nil && special(sfs.Type) {
		return &fs.PathError{Op: "open", Path: cur, Err: ErrForbidden}
	}
	return nil
}

// special reports whether a file system type is one of the kernel's views (procfs, sysfs, a device
// file system), wherever it is mounted.
func special(t int64) bool {
	switch t {
	case unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC, unix.DEVPTS_SUPER_MAGIC, unix.CGROUP_SUPER_MAGIC,
		unix.CGROUP2_SUPER_MAGIC, unix.DEBUGFS_MAGIC, unix.SECURITYFS_MAGIC, unix.TRACEFS_MAGIC:
		return true
	}
	return false
}

// more reports whether any name but "" and "." is left.
func more(rest []string) bool {
	for _, c := range rest {
		if c != "" && c != "." {
			return true
		}
	}
	return false
}

func readlinkat(dir int, name string) (string, error) {
	for n := 256; ; n *= 2 {
		b := make([]byte, n)
		k, err := unix.Readlinkat(dir, name, b)
		if err != nil {
			return "", err
		}
		if k < n {
			return string(b[:k]), nil
		}
	}
}
