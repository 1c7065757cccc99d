package observe

import (
	"io/fs"
	"path"
	"syscall"

	"golang.org/x/sys/unix"
)

// statInDir answers a confined Stat observation the way r.Stat would, in fewer system calls: r.Stat
// walks from the root for every path, opening each directory on the way; here each directory is
// opened once per Check, from its parent's descriptor, and shared by every observation under it.
// Each step is the one os.Root takes (openat with O_NOFOLLOW|O_DIRECTORY, then an lstat of the last
// name), so where it answers, it answers alike. A symlink anywhere, or any error but a missing name,
// it declines (ok false), and Check's seeIn (the sandbox's r.Stat, then its walk) decides with its
// own following of links and its own error text.
func (c *checker) statInDir(o Observation) (string, bool) {
	if o.What != Stat || !fs.ValidPath(o.Path) || o.Path == "." {
		return "", false
	}
	d := c.dir(o.Root, path.Dir(o.Path))
	switch {
	case d.absent:
		return "absent", true
	case d.decline:
		return "", false
	}
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, path.Base(o.Path), &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == unix.ENOENT:
		return "absent", true
	case err != nil, st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return "", false
	}
	return statSeenRaw(&st), true
}

// maxOpenDirs bounds the descriptors one Check holds, whatever an entry observed.
const maxOpenDirs = 64

// dir opens the directory dir of root, from its parent's descriptor, once per Check. The root itself
// is opened by its path as os.OpenRoot opens it.
func (c *checker) dir(root, dir string) dirFD {
	k := [2]string{root, dir}
	if d, ok := c.dirs[k]; ok {
		return d
	}
	if c.dirs == nil {
		c.dirs = map[[2]string]dirFD{}
	}
	if len(c.dirs) >= maxOpenDirs {
		return dirFD{decline: true} // r.Stat, which holds no descriptor, does the rest
	}
	var d dirFD
	if dir == "." {
		fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		d = dirFD{fd: fd, decline: err != nil}
	} else if parent := c.dir(root, path.Dir(dir)); parent.absent || parent.decline {
		d = dirFD{absent: parent.absent, decline: parent.decline}
	} else {
		fd, err := unix.Openat(parent.fd, path.Base(dir), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		switch {
		case err == unix.ENOENT:
			d.absent = true
		case err != nil:
			d.decline = true
		default:
			d.fd = fd
		}
	}
	c.dirs[k] = d
	return d
}

func (c *checker) closeDirs() {
	for _, d := range c.dirs {
		if !d.absent && !d.decline {
			unix.Close(d.fd)
		}
	}
}

// statSeenRaw is StatSeen of the FileInfo Go's os package makes of st (os.fillFileStatFromSys).
func statSeenRaw(st *unix.Stat_t) string {
	return statString(modeOf(st.Mode), st.Size, st.Mtim.Nano(), st.Ino)
}

// modeOf is the fs.FileMode Go's os package makes of a stat's st_mode.
func modeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&syscall.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&syscall.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&syscall.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
