//go:build unix

package cachefile

import (
	"io/fs"
	"os"
	"syscall"
)

// privateTo reports whether only the directory's owner may write it, and the owner is this user or root.
func privateTo(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o022 == 0 && ownedByUs(fi) }

func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	return st.Uid == uint32(os.Geteuid()) || st.Uid == 0
}
