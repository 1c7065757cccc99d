//go:build !unix

package cachefile

import "io/fs"

// privateTo is not checked here: Windows reports every directory as mode 0777 whatever its ACL says,
// so the bits would refuse every cache. The default cache dir (%LocalAppData%) is the user's own.
func privateTo(fs.FileInfo) bool { return true }
