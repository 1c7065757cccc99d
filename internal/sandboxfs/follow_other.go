//go:build !linux

package sandboxfs

import (
	"io/fs"
	"os"
)

// followsLinks: links out of a granted directory are followed on Linux only; elsewhere os.Root's answer
// (the link leads out) stands.
const followsLinks = false

// Follow is never called off Linux.
func Follow(mount, name string) (fs.FileInfo, Reached, error) {
	return nil, Reached{}, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrPermission}
}

// OpenFollowed is Follow's open: never, off Linux.
func OpenFollowed(mount, name string) (*os.File, fs.FileInfo, Reached, error) {
	return nil, nil, Reached{}, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
}
