//go:build !linux

package candidate

import "io/fs"

// fileID is what tells one content of a file from another without reading it; without a change
// time that no user can set, nothing does, and every check reads the file.
type fileID struct{}

func identify(fs.FileInfo) (fileID, bool) { return fileID{}, false }
