// Package trust tells whether a path can be changed under pathfinder by another user: whether someone
// other than this user and root could replace the file, or a directory on its way, between the
// moment pathfinder checks it and the moment it uses it.
package trust

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Replaceable returns nil when only this user or root can replace what the absolute path p names:
// every directory on its way — both as written and with symlinks resolved — is owned by one of them
// and writable by no one else, or is sticky (like /tmp) and holds an entry that one of them owns. It
// is ssh's rule for key files, with sticky directories allowed. Otherwise the error names the first
// directory someone else could change. The file's own mode is not its concern: writing into a file
// changes its content, not which file the path names.
func Replaceable(p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%s: not an absolute path", p)
	}
	if err := walk(filepath.Clean(p)); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return err
	}
	if real != filepath.Clean(p) {
		return walk(real)
	}
	return nil
}

// walk checks each directory above p, and the entry on p's way in it.
func walk(p string) error {
	for child := p; ; {
		dir := filepath.Dir(child)
		if dir == child {
			return nil // child is the root directory
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			return err
		}
		// A symlink on the way is its parent's to replace (checked next); its target is checked by
		// the walk over the resolved path.
		if fi.Mode()&fs.ModeSymlink == 0 {
			if err := dirSafe(dir, fi, child); err != nil {
				return err
			}
		}
		child = dir
	}
}

func dirSafe(dir string, fi fs.FileInfo, child string) error {
	uid, ok := owner(fi)
	if !ok {
		return nil // no owners on this system (Windows): nothing to tell
	}
	if !trusted(uid) {
		return fmt.Errorf("%s is owned by uid %d, neither this user nor root", dir, uid)
	}
	if fi.Mode().Perm()&0o022 == 0 {
		return nil
	}
	if fi.Mode()&fs.ModeSticky != 0 {
		// In a sticky directory only an entry's owner (or the directory's) can rename or remove it.
		if ci, err := os.Lstat(child); err == nil {
			cuid, _ := owner(ci)
			if trusted(cuid) {
				return nil
			}
			return fmt.Errorf("%s is in %s (sticky, writable by others) but owned by uid %d, neither this user nor root", child, dir, cuid)
		}
	}
	return fmt.Errorf("%s is writable by others than its owner (mode %04o)", dir, fi.Mode().Perm())
}

func trusted(uid int) bool { return uid == 0 || uid == os.Geteuid() }
