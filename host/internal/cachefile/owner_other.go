//go:build !unix

package cachefile

import "io/fs"

// Ownership is not checked here; permission bits still are.
func ownedByUs(fs.FileInfo) bool { return true }
