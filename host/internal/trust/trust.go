// Package trust tells whether a path can be changed under pathfinder by another user: whether someone
// other than this user and root could replace the file, or a directory on its way, between the
// moment pathfinder checks it and the moment it uses it.
package trust

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	mode := fi.Mode().Perm()
	if mode&0o002 == 0 && (mode&0o020 == 0 || privateGroup(fi)) {
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

// privateGroup reports whether the group of fi is this user's own and no one else's: a user private
// group (Debian's and Red Hat's default, with umask 002), whose group-write bit lets no other user
// in. It reads /etc/group and /etc/passwd; a group known only to a directory service counts as shared.
func privateGroup(fi fs.FileInfo) bool {
	gid, ok := group(fi)
	if !ok {
		return false
	}
	uid := strconv.Itoa(os.Geteuid())
	name, primary := "", ""
	for _, l := range lines(passwdFile) {
		if f := strings.Split(l, ":"); len(f) >= 4 && f[2] == uid {
			name, primary = f[0], f[3]
			break
		}
	}
	if name == "" || primary != strconv.Itoa(gid) {
		return false
	}
	me := struct{ Username, Uid, Gid string }{name, uid, primary}
	for _, l := range lines(groupFile) {
		f := strings.Split(l, ":")
		if len(f) >= 4 && f[2] == me.Gid && f[3] != "" && f[3] != me.Username {
			return false // other members
		}
	}
	found := false
	for _, l := range lines(passwdFile) {
		f := strings.Split(l, ":")
		if len(f) >= 4 && f[3] == me.Gid {
			if f[2] != me.Uid {
				return false // another user's primary group too
			}
			found = true
		}
	}
	return found
}

// The account files privateGroup reads; tests give their own.
var groupFile, passwdFile = "/etc/group", "/etc/passwd"

func lines(p string) []string {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	return strings.Split(string(b), "\n")
}

func trusted(uid int) bool { return uid == 0 || uid == os.Geteuid() }
