package cachefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Untrusted says why what lies at path may have been put there by someone other than this user or
// root, or "" when it cannot: path and every directory on the way to it, through every symlink, are
// owned by this user or root, and none of them can be written by anyone else. A directory others may
// write but whose sticky bit is set (/tmp) counts, for what in it is owned as above: there only an
// entry's owner can replace it. This is ssh's rule for key files, applied also to the directories
// that symlinks lead through. A path whose end does not exist yet is judged by what does. It is what
// makes a plugin file or a cache that is not pinned by a hash safe to use: whoever could change it
// could already run code as this user.
func Untrusted(path string) string {
	if !filepath.IsAbs(path) { // not filepath.Abs: it cleans "link/.." away, which the kernel does not
		wd, err := os.Getwd()
		if err != nil {
			return err.Error()
		}
		path = wd + string(filepath.Separator) + path
	}
	return untrusted(path)
}

// untrusted walks abs from the root as the kernel resolves it.
func untrusted(abs string) string {
	const maxLinks = 40 // Linux's MAXSYMLINKS
	links := 0
	cur := rootOf(abs)
	if why := judge(cur); why != "" {
		return why
	}
	rest := strings.TrimPrefix(abs, cur)
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
			return "" // to be made, by this user, in a directory judged trusted
		}
		if err != nil {
			return err.Error()
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if why := owner(next, fi); why != "" {
				return why
			}
			if links++; links > maxLinks {
				return next + ": too many levels of symbolic links"
			}
			target, err := os.Readlink(next)
			if err != nil {
				return err.Error()
			}
			if filepath.IsAbs(target) {
				cur = rootOf(target)
				if why := judge(cur); why != "" {
					return why
				}
				target = strings.TrimPrefix(target, cur)
			}
			rest = target + string(filepath.Separator) + rest
			continue
		}
		if why := judgeInfo(next, fi); why != "" {
			return why
		}
		cur = next
	}
	return ""
}

// rootOf is the root directory of the absolute path p: "/" on Unix, the volume's on Windows.
func rootOf(p string) string { return filepath.VolumeName(p) + string(filepath.Separator) }

// judge checks one file or directory on the way.
func judge(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return err.Error()
	}
	return judgeInfo(p, fi)
}

func judgeInfo(p string, fi fs.FileInfo) string {
	if why := owner(p, fi); why != "" {
		return why
	}
	if writableByOthers(fi) && !(fi.IsDir() && fi.Mode()&fs.ModeSticky != 0) {
		what := "file"
		if fi.IsDir() {
			what = "directory"
		}
		return fmt.Sprintf("%s %s is writable by others than its owner (mode %04o)", what, p, fi.Mode().Perm())
	}
	return ""
}

// owner says why fi, at p, is not owned by this user or root; "" when it is.
func owner(p string, fi fs.FileInfo) string {
	if uid, ok := ownerOf(fi); ok && !ownedByUs(fi) {
		return fmt.Sprintf("%s is owned by uid %d, neither this user nor root", p, uid)
	}
	return ""
}
