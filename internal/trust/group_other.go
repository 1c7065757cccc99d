//go:build !unix

package trust

import "io/fs"

// ownerOf: Windows has no owner uid in a FileInfo, and its mode bits say nothing of who may write.
func ownerOf(fs.FileInfo) (int, bool) { return 0, false }

// writableByOthers: the mode bits say nothing on Windows.
func writableByOthers(fs.FileInfo) bool { return false }
