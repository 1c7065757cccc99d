package wasm

import (
	"crypto/sha256"
	"encoding/hex"
	"github.com/pathfinder-dev/pathfinder/host/internal/trust"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/pathfinder-dev/pathfinder/host/internal/cachefile"
	"github.com/tetratelabs/wazero"
)

// wazero trusts its compilation cache: it runs the native code it finds under a module's key, so an
// entry that was truncated, corrupted, copied from another module or written by someone else would
// crash the host or run their code in it. The rule that makes it safe to use:
//   - the cache dir is used only when it, and every directory above it, is owned by this user or
//     root and writable by no one else (cachefile.Usable, checked by the host before it makes an
//     engine): then only those who can already run code as this user can change it;
//   - each module gets a directory of its own, and a checksum of what wazero left in it is kept
//     beside it after a successful compile. Before the next use the directory must match its
//     checksum and hold only regular files that this user or root owns and no one else may write,
//     or it is removed and the module compiled again.
// The checksum guards against corruption and mix-ups, not against this user: whoever can write the
// cache can write the user's shell startup files too. (Hashing the compiled code costs well under a
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

// dirSum hashes the names and contents of every regular file under dir; "" when there is none, and
// "untrusted" when dir holds anything else (a symlink wazero would follow) or a file others than
// this user or root could have written.
func dirSum(dir string) string {
	var files []string
	trusted := true
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := d.Info()
		switch {
		case err != nil:
			trusted = false
		case d.IsDir():
			trusted = trusted && trust.Private(fi)
		case d.Type().IsRegular():
			trusted = trusted && trust.Private(fi)
			files = append(files, p)
		default:
			trusted = false
		}
		return nil
	})
	if !trusted {
		return "untrusted"
	}
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

// refusal is why the module with this hash was refused before, in this process or, remembered in the
// cache dir, in another; "" when it was not.
func (e *Engine) refusal(hash string) string {
	e.mu.Lock()
	why := e.refused[hash]
	e.mu.Unlock()
	if why != "" || e.dir == "" {
		return why
	}
	file := e.refusalFile(hash)
	if b, ok := cachefile.Read(file); ok {
		return string(b) + " (remembered in " + file + "; remove it to try again)"
	}
	return ""
}

// refuse remembers that the module with this hash is refused, and why; it returns why, with where it
// is remembered.
func (e *Engine) refuse(hash, why string) string {
	if e.dir != "" {
		file := e.refusalFile(hash)
		cachefile.Write(file, []byte(why))
		why += " (remembered in " + file + "; remove it to try again)"
	}
	e.mu.Lock()
	e.refused[hash] = why
	e.mu.Unlock()
	return why
}

func (e *Engine) refusalFile(hash string) string { return filepath.Join(e.dir, hash[:32]+".refused") }
