package observe

import (
	"io/fs"
	"syscall"
)

// ChangeTime is fi's change time (ctime) in nanoseconds, 0 where there is none: the kernel sets it
// on every write and metadata change, and no user can set it back, so a file rewritten in place
// with its size, inode and mtime kept is still told apart.
func ChangeTime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return 0
}
