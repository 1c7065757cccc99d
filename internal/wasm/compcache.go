package wasm

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/pathfinder-dev/pathfinder/internal/cachedir"
)

// wazero trusts its compilation cache: it runs the native code it finds under a module's key, so an
// entry that was truncated, corrupted, copied from another module or written by someone else would
// crash the host or run their code in it. So the cache dir is used only when it, and every directory
// above it, is owned by this user or root and writable by no one else (cachedir.Locate, before an
// engine is made), and each module gets a directory of its own, a checksummed directory
// (cachedir.NewDir) that wazero compiles into and that is used only when whole (cachedir.DirWhole).

// moduleCache returns the compilation cache for the module with this hash, and a function to call
// when the compile ended, saying whether it succeeded; nil when the engine has no cache dir, or when
// it cannot be written (CacheWriteError says why).
func (e *Engine) moduleCache(hash string) (wazero.CompilationCache, func(compiled bool)) {
	none := func(bool) {}
	if e.dir == "" {
		return nil, none
	}
	dir := cachedir.ModuleDir(e.dir, hash)
	if cachedir.DirWhole(dir) {
		if c, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			return c, none // compiled from it: nothing to write
		}
	}
	tmp, finish, err := cachedir.NewDir(dir)
	if err != nil {
		e.writeErr.Note(err)
		return nil, none
	}
	c, err := wazero.NewCompilationCacheWithDir(tmp)
	if err != nil {
		e.writeErr.Note(err)
		finish(false)
		return nil, none
	}
	return c, func(compiled bool) { e.writeErr.Note(finish(compiled)) }
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
		if b, read := cachedir.Read(e.refusalFile(hash)); read {
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
		e.writeErr.Note(cachedir.Write(file, []byte(r.encode())))
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

func (e *Engine) refusalFile(hash string) string { return cachedir.RefusalFile(e.dir, hash) }

// CacheWriteError is the first error writing the compilation cache met, nil when none did.
func (e *Engine) CacheWriteError() error { return e.writeErr.Err() }
