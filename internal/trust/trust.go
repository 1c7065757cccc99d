// Package trust tells whether someone other than this user and root could change what a path
// names: replace the file, or a directory on its way, between the moment pathfinder checks it and
// the moment it uses it; or, for code and caches, change what the file holds. It is ssh's rule for
// key files, with sticky directories and user private groups allowed.
package trust

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// OthersCanReplace returns nil when only this user or root could make path name another file: every
// directory on its way, as the kernel resolves it through every symlink (and "..", after one), is
// owned by one of them and writable by no one else — or is sticky (like /tmp) and holds an entry one
// of them owns, or is writable by a group that is this user's alone. Otherwise the error names the
// first one someone else could change. The file's own owner and mode are not its concern: writing
// into a file changes what it holds, not which file the path names. A path whose end does not exist
// yet is judged by what does.
func OthersCanReplace(path string) error { return walk(path, false) }

// OthersCanChange is OthersCanReplace that also judges the file (or directory) path names itself:
// owned by this user or root, writable by no one else. It is what makes a plugin file or a cache that
// no hash pins safe to use: whoever could change it could already run code as this user.
func OthersCanChange(path string) error { return walk(path, true) }

// Private reports whether fi is owned by this user or root and writable by no one else.
func Private(fi fs.FileInfo) bool { return judge("", fi) == nil }

func walk(path string, last bool) error {
	if !filepath.IsAbs(path) { // not filepath.Abs: it cleans "link/.." away, which the kernel does not
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		path = wd + string(filepath.Separator) + path
	}
	const maxLinks = 40 // Linux's MAXSYMLINKS
	links := 0
	cur := rootOf(path)
	if err := judgePath(cur); err != nil {
		return err
	}
	rest := strings.TrimPrefix(path, cur)
	for rest != "" {
		var c string
		c, rest, _ = strings.Cut(strings.TrimLeft(rest, string(filepath.Separator)), string(filepath.Separator))
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // to be made, by this user, in a directory judged trusted
		}
		if err != nil {
			return err
		}
		final := strings.Trim(rest, string(filepath.Separator)) == ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			// A symlink is its directory's to replace; its owner could point it elsewhere.
			if err := owner(next, fi); err != nil {
				return err
			}
			if links++; links > maxLinks {
				return errors.New(next + ": too many levels of symbolic links")
			}
			target, err := os.Readlink(next)
			if err != nil {
				return err
			}
			if filepath.IsAbs(target) {
				cur = rootOf(target)
				if err := judgePath(cur); err != nil {
					return err
				}
				target = strings.TrimPrefix(target, cur)
			}
			rest = target + string(filepath.Separator) + rest
			continue
		}
		if !final || last {
			if err := judge(next, fi); err != nil {
				return err
			}
		} else if err := owner(next, fi); err != nil && !ownedDir(cur) {
			// The file itself, in a sticky directory: only its owner (or the directory's) can
			// replace it.
			return err
		}
		cur = next
	}
	return nil
}

// ownedDir reports whether dir is not sticky: then what is in it is replaceable only by whoever
// can write dir, which was judged already.
func ownedDir(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.Mode()&fs.ModeSticky == 0
}

// rootOf is the root directory of the absolute path p: "/" on Unix, the volume's on Windows.
func rootOf(p string) string { return filepath.VolumeName(p) + string(filepath.Separator) }

func judgePath(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	return judge(p, fi)
}

// judge checks one file or directory on the way: its owner, and who else may write it.
func judge(p string, fi fs.FileInfo) error {
	if err := owner(p, fi); err != nil {
		return err
	}
	if writableByOthers(fi) && !(fi.IsDir() && fi.Mode()&fs.ModeSticky != 0) {
		what := "file"
		if fi.IsDir() {
			what = "directory"
		}
		return fmt.Errorf("%s %s is writable by others than its owner (mode %04o)", what, p, fi.Mode().Perm())
	}
	return nil
}

// owner says why fi, at p, is not owned by this user or root; nil when it is.
func owner(p string, fi fs.FileInfo) error {
	if uid, ok := ownerOf(fi); ok && uid != 0 && uid != os.Geteuid() {
		return fmt.Errorf("%s is owned by uid %d, neither this user nor root", p, uid)
	}
	return nil
}
