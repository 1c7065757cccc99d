//go:build !unix

package cachedir

import (
	"os"
	"time"
)

const openFlags = 0

// Without flock, a temporary older than any write could take is taken for abandoned.
const abandonedAfter = time.Hour

func holdTemp(*os.File) bool { return true }

// closeBeforeRename closes a temporary file before its rename: Windows renames no open file.
func closeBeforeRename(f *os.File) error { return f.Close() }

func takeAbandoned(p string) (release func(), ok bool) {
	fi, err := os.Lstat(p)
	return func() {}, err == nil && time.Since(fi.ModTime()) > abandonedAfter
}
