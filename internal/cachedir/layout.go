// Package cachedir owns the user's cache directory: where it is (Locate), every name in it (this
// file), and the forms its entries take: a checksummed file replaced atomically (Write, Read), a
// checksummed directory that appears whole or not at all (NewDir, DirWhole), and the memo of a pin
// check (Pin). Other packages ask it for their place and never join a name onto the directory.
// Nothing in it is trusted by accident: whoever can write the cache decides what find answers.
package cachedir

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"runtime"
)

// The cache directory, every name in it decided below:
//
//	<cache dir>/
//	  catalog-<packs hash[:32]>.bin   the catalog of packs besides the builtin one (internal/catalog)
//	  pins/<file name hash[:32]>      a pinned plugin file that matched its pin (internal/config)
//	  results/<key[:2]>/<key>.json    a find answer and what it observed (internal/resultcache)
//	  wazero-<go version>/            the compilation cache (internal/wasm):
//	    <module hash[:32]>.module/      a module compiled, a checksummed directory:
//	      pathfinder.sum                  its checksum (SumFile)
//	    <module hash[:32]>.refused      why that module is refused
//
// Beside any entry, .tmp-* is a file or directory being written (tempPrefix). Each function takes
// the directory the entry is in, and returns "" for "" (the cache is off).

// CatalogFile is the file in base that holds the catalog of the packs with this hash.
func CatalogFile(base, packsHash string) string {
	return join(base, "catalog-"+packsHash[:32]+".bin")
}

// pinFile is the file in base that remembers the pin check of the plugin file.
func pinFile(base, file string) string {
	sum := sha256.Sum256([]byte(file))
	return join(base, "pins", hex.EncodeToString(sum[:16]))
}

// Results is the directory in base of the result cache's entries.
func Results(base string) string { return join(base, "results") }

// ResultFile is the file in results (Results) of the entry key.
func ResultFile(results, key string) string { return join(results, key[:2], key+".json") }

// Compiled is the directory in base of the compilation cache: one for each Go release, so a
// pathfinder built by another keeps its own.
func Compiled(base string) string { return join(base, "wazero-"+runtime.Version()) }

// ModuleDir is the directory in compiled (Compiled) of the module with this hash. Not the name an
// older pathfinder used (hash[:32], its checksum beside it): the two share one cache dir without
// taking each other's modules for broken.
func ModuleDir(compiled, moduleHash string) string { return join(compiled, moduleHash[:32]+".module") }

// RefusalFile is the file in compiled (Compiled) that says why the module with this hash is refused.
func RefusalFile(compiled, moduleHash string) string {
	return join(compiled, moduleHash[:32]+".refused")
}

// SumFile is the file in the checksummed directory dir that holds the checksum of the rest of it.
func SumFile(dir string) string { return join(dir, "pathfinder.sum") }

// tempPrefix starts the name of every temporary file and directory the caches make: removeAbandoned
// removes those whose writer is gone.
const tempPrefix = ".tmp-"

// join is filepath.Join of a name in dir, "" when dir is "".
func join(dir string, name ...string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(append([]string{dir}, name...)...)
}
