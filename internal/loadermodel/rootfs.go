package loadermodel

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
)

// rootFS reads loader paths (absolute, as the loader inside the tree sees them) under a root
// directory the way a chroot would: an absolute symlink target is taken relative to the root, not
// to this machine's "/". With root "/" it is the ordinary file system.
type rootFS struct{ root string }

func newRootFS(root string) rootFS {
	if root == "" {
		root = "/"
	}
	return rootFS{filepath.Clean(root)}
}

func (r rootFS) isHost() bool { return r.root == "/" }

// hostPath is the path on this machine of loader path p, all symlinks resolved inside the root.
func (r rootFS) hostPath(p string) (string, error) {
	if r.isHost() {
		return p, nil
	}
	real, err := r.realPath(p)
	if err != nil {
		return "", err
	}
	return filepath.Join(r.root, filepath.FromSlash(real)), nil
}

// open opens loader path p, never a FIFO, socket or device: the loader would wait on a FIFO for a
// writer, and a model that answers find must not (sandboxfs.Open).
func (r rootFS) open(p string) (*os.File, error) {
	hp, err := r.hostPath(p)
	if err != nil {
		return nil, err
	}
	f, _, err := sandboxfs.Open(hp)
	return f, err
}

func (r rootFS) readFile(p string) ([]byte, error) {
	hp, err := r.hostPath(p)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(hp)
}

func (r rootFS) stat(p string) (fs.FileInfo, error) {
	hp, err := r.hostPath(p)
	if err != nil {
		return nil, err
	}
	return os.Stat(hp)
}

// realPath resolves every symlink of loader path p inside the root, like realpath(3) run in a
// chroot, and returns the result as a loader path.
func (r rootFS) realPath(p string) (string, error) {
	if r.isHost() {
		return filepath.EvalSymlinks(p)
	}
	const maxLinks = 40 // Linux's MAXSYMLINKS
	resolved := "/"
	rest := p
	links := 0
	for rest != "" {
		var c string
		c, rest, _ = strings.Cut(rest, "/")
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = path.Dir(resolved)
			continue
		}
		next := path.Join(resolved, c)
		fi, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(next)))
		if err != nil {
			return "", &fs.PathError{Op: "lstat", Path: next, Err: observe.Cause(err)}
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if links++; links > maxLinks {
				return "", &fs.PathError{Op: "readlink", Path: next, Err: syscall.ELOOP}
			}
			target, err := os.Readlink(filepath.Join(r.root, filepath.FromSlash(next)))
			if err != nil {
				return "", &fs.PathError{Op: "readlink", Path: next, Err: observe.Cause(err)}
			}
			if strings.HasPrefix(target, "/") {
				resolved = "/"
			}
			if rest != "" {
				target += "/" + rest
			}
			rest = target
		case rest != "" && strings.Trim(rest, "/") != "" && !fi.IsDir():
			return "", &fs.PathError{Op: "lstat", Path: next, Err: syscall.ENOTDIR}
		default:
			resolved = next
		}
	}
	return resolved, nil
}
