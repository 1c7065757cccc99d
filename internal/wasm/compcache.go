package wasm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/pathfinder-dev/pathfinder/internal/cachefile"
	"github.com/pathfinder-dev/pathfinder/internal/trust"
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

// refusal is why a module is refused, and, for a compile that outlasted its bound, that bound:
// a later Load with a longer timeout tries again. limit 0 refuses it whatever the timeout.
type refusal struct {
	why   string
	limit time.Duration
}

// refusal is why the module with this hash was refused before, in this process or, remembered in
// the cache dir, in another, for a Load of this timeout; "" when it was not.
func (e *Engine) refusal(hash string, timeout time.Duration) string {
	e.mu.Lock()
	r, ok := e.refused[hash]
	e.mu.Unlock()
	if !ok && e.dir != "" {
		if b, read := cachefile.Read(e.refusalFile(hash)); read {
			r, ok = decodeRefusal(string(b)), true
			r.why += r.remembered(e.refusalFile(hash))
		}
	}
	if !ok || r.limit > 0 && timeout > r.limit {
		return ""
	}
	return r.why
}

// refuse remembers that the module with this hash is refused, and why; it returns why, with where it
// is remembered.
func (e *Engine) refuse(hash string, r refusal) string {
	if e.dir != "" {
		file := e.refusalFile(hash)
		e.writeErr.Note(cachefile.Write(file, []byte(r.encode())))
		r.why += r.remembered(file)
	}
	e.mu.Lock()
	e.refused[hash] = r
	e.mu.Unlock()
	return r.why
}

// remembered says where the refusal is remembered, and what tries again.
func (r refusal) remembered(file string) string {
	if r.limit > 0 {
		return fmt.Sprintf(" (remembered in %s: a timeout over %v, or removing it, tries again)", file, r.limit.Round(time.Millisecond))
	}
	return " (remembered in " + file + "; remove it to try again)"
}

// encode is a refusal as its file holds it: the bound's nanoseconds on a first line of their own
// where there is one ("limit 1000000000"), then why.
func (r refusal) encode() string {
	if r.limit > 0 {
		return fmt.Sprintf("limit %d\n%s", r.limit.Nanoseconds(), r.why)
	}
	return r.why
}

func decodeRefusal(s string) refusal {
	if first, rest, ok := strings.Cut(s, "\n"); ok {
		if ns, err := strconv.ParseInt(strings.TrimPrefix(first, "limit "), 10, 64); err == nil && ns > 0 && strings.HasPrefix(first, "limit ") {
			return refusal{why: rest, limit: time.Duration(ns)}
		}
	}
	return refusal{why: s}
}

func (e *Engine) refusalFile(hash string) string { return filepath.Join(e.dir, hash[:32]+".refused") }

// CacheWriteError is the first error writing the compilation cache met, nil when none did.
func (e *Engine) CacheWriteError() error { return e.writeErr.Err() }
