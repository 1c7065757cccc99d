//go:build unix

package cachefile

import (
	"io/fs"
	"os"
	"syscall"
)

// privateTo reports whether only the directory's owner may write it, and the owner is this user or root.
func privateTo(fi fs.FileInfo) bool { return !writableByOthers(fi) && ownedByUs(fi) }

func ownedByUs(fi fs.FileInfo) bool {
	uid, ok := ownerOf(fi)
	return !ok || uid == uint32(os.Geteuid()) || uid == 0
}

func ownerOf(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// writableByOthers reports whether others than the owner (its group, everyone) may write fi.
func writableByOthers(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o022 != 0 }

// openFlags make an open that does not wait for a writer when a FIFO stands where a file should.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
