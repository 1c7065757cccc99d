//go:build !unix

package cachefile

import "io/fs"

// privateTo is not checked here: Windows reports every directory as mode 0777 whatever its ACL says,
// so the bits would refuse every cache. The default cache dir (%LocalAppData%) is the user's own.
func privateTo(fs.FileInfo) bool { return true }

func ownedByUs(fs.FileInfo) bool { return true }

// ownerOf: Windows has no owner uid in a FileInfo.
func ownerOf(fs.FileInfo) (uint32, bool) { return 0, false }

// writableByOthers: the mode bits say nothing on Windows (see privateTo).
func writableByOthers(fs.FileInfo) bool { return false }

const openFlags = 0
