package wasm

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/pathfinder-dev/pathfinder/host/internal/cachefile"
	"github.com/tetratelabs/wazero"
)

// wazero trusts its compilation cache: it runs the native code it finds under a module's key, so an
// entry that was truncated, corrupted, or copied from another module would crash the host or worse.
// Each module therefore gets a directory of its own, and a checksum of what wazero left in it is kept
// beside it after a successful compile. Before the next use the directory must match its checksum,
// or it is removed and the module compiled again. (Hashing the compiled code costs well under a
// millisecond for the builtin module (~190 KB), a few for a Go plugin's ~15 MB, and only in processes
// that load the module at all.)

// moduleCache returns the compilation cache for the module with this hash, and a function to call
// after it compiled; nil when the engine has no cache dir or it is unusable.
func (e *Engine) moduleCache(hash string) (wazero.CompilationCache, func()) {
	if e.dir == "" {
		return nil, func() {}
	}
	dir := filepath.Join(e.dir, hash[:32])
	sumFile := dir + ".sum"
	if want, ok := cachefile.Read(sumFile); !ok || string(want) != dirSum(dir) {
		os.RemoveAll(dir) // unverifiable or changed: never used
	}
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil, func() {}
	}
	return c, func() { cachefile.Write(sumFile, []byte(dirSum(dir))) }
}

// dirSum hashes the names and contents of every regular file under dir; "" when there is none.
func dirSum(dir string) string {
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		return ""
	}
	sort.Strings(files)
	h := sha256.New()
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel + "\x00"))
		f, err := os.Open(p)
		if err != nil {
			return "unreadable"
		}
		io.Copy(h, f)
		f.Close()
	}
	return hex.EncodeToString(h.Sum(nil))
}
