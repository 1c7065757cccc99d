//go:build linux

package candidate

import (
	"io/fs"
	"syscall"
)

// fileID is what tells one content of a file from another without reading it.
type fileID struct {
	dev, ino           uint64
	size, mtime, ctime int64
	mode               fs.FileMode
}

func identify(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mtime: fi.ModTime().UnixNano(),
		ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec, mode: fi.Mode()}, true
}
