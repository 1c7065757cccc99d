//go:build unix

package cachefile

import (
	"io/fs"
	"os"
	"syscall"
)

func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	return st.Uid == uint32(os.Geteuid()) || st.Uid == 0
}
