package wasm

import (
	"crypto/sha256"
	"encoding/hex"
	"github.com/pathfinder-dev/pathfinder/internal/trust"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/pathfinder-dev/pathfinder/internal/cachefile"
	"github.com/tetratelabs/wazero"
)

// wazero trusts its compilation cache: it runs the native code it finds under a module's key, so an
// entry that was truncated, corrupted, copied from another module or written by someone else would
// crash the host or run their code in it. The rule that makes it safe to use:
//   - the cache dir is used only when it, and every directory above it, is owned by this user or
//     root and writable by no one else (cachefile.Usable, checked by the host before it makes an
//     engine): then only those who can already run code as this user can change it;
//   - each module gets a directory of its own, which appears whole or not at all: a cold compile
//     writes into a temporary directory, puts the checksum of what wazero left there in it
//     (sumName), and renames it into place; when another process put the module there first, its
//     directory is kept and this one's removed. Before a use the directory must match the checksum
//     it holds and hold only regular files that this user or root owns and no one else may write,
//     or it is moved aside, removed and the module compiled again. A use from the cache writes
//     nothing.
// The checksum guards against corruption and mix-ups, not against this user: whoever can write the
// cache can write the user's shell startup files too. (Hashing the compiled code costs well under a
// millisecond for the builtin module (~190 KB), a few for a Go plugin's ~15 MB, and only in processes
// that load the module at all.)

// sumName is the file in a module's directory that holds the checksum of the rest of it.
const sumName = "pathfinder.sum"

// moduleCache returns the compilation cache for the module with this hash, and a function to call
// when the compile ended, saying whether it succeeded; nil when the engine has no cache dir, or when
// it cannot be written (CacheWriteError says why).
func (e *Engine) moduleCache(hash string) (wazero.CompilationCache, func(compiled bool)) {
	none := func(bool) {}
	if e.dir == "" {
		return nil, none
	}
	// Not the directory name an older pathfinder used (hash[:32], its checksum beside it): the two
	// share one cache dir without taking each other's modules for broken.
	dir := filepath.Join(e.dir, hash[:32]+".module")
	if want, ok := cachefile.Read(filepath.Join(dir, sumName)); ok && string(want) == dirSum(dir) {
		if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			return c, none // compiled from it: nothing to write
		}
	}
	if _, err := os.Lstat(dir); err == nil { // unverifiable or changed: never used
		if aside, release, err := cachefile.TempDir(e.dir); err == nil {
			if os.Rename(dir, filepath.Join(aside, "old")) == nil {
				os.RemoveAll(aside)
			}
			release()
		}
	}
	tmp, release, err := cachefile.TempDir(e.dir)
	if err != nil {
		e.writeErr.Note(err)
		return nil, none
	}
	c, err := wazero.NewCompilationCacheWithDir(tmp)
	if err != nil {
		e.writeErr.Note(err)
		os.RemoveAll(tmp)
		release()
		return nil, none
	}
	return c, func(compiled bool) {
		defer release()
		if !compiled {
			os.RemoveAll(tmp)
			return
		}
		err := cachefile.Write(filepath.Join(tmp, sumName), []byte(dirSum(tmp)))
		if err == nil {
			if os.Rename(tmp, dir) == nil {
				return
			}
			// Another process put it there first, or something stands there: keep what is there.
		}
		e.writeErr.Note(err)
		os.RemoveAll(tmp)
	}
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
		case p == filepath.Join(dir, sumName):
			trusted = trusted && trust.Private(fi) && d.Type().IsRegular()
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
		e.writeErr.Note(cachefile.Write(file, []byte(why)))
		why += " (remembered in " + file + "; remove it to try again)"
	}
	e.mu.Lock()
	e.refused[hash] = why
	e.mu.Unlock()
	return why
}

func (e *Engine) refusalFile(hash string) string { return filepath.Join(e.dir, hash[:32]+".refused") }

// CacheWriteError is the first error writing the compilation cache met, nil when none did.
func (e *Engine) CacheWriteError() error { return e.writeErr.Err() }
