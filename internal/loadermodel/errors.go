package loadermodel

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/pathfinder-dev/pathfinder/host/search"
)

var (
	// ErrNotFound means the loader would search every place and not find the library.
	ErrNotFound = errors.New("the loader would not find the library")

	// ErrBadLibrary means the loader would stop at a file it cannot load (not ELF, truncated, an
	// unreadable file): dlopen fails there instead of searching on.
	ErrBadLibrary = errors.New("the loader would stop at a file it cannot load")

	// ErrRelative means the name or a search directory is relative to the working directory, which
	// this package never resolves against, like os/exec's ErrDot.
	ErrRelative = errors.New("refusing to resolve relative to the working directory")

	// ErrUnmodeled means the search reaches something this model does not predict (a dynamic
	// string token in LD_LIBRARY_PATH); it gives no answer rather than a guess.
	ErrUnmodeled = errors.New("the loader model cannot predict this search")

	// ErrBadCache means an ld.so.cache file is malformed.
	ErrBadCache = errors.New("malformed ld.so.cache")
)

// ResolveError is the error of Resolve: the soname, the file it stopped at (for ErrBadLibrary) and
// every place it tried, with why not.
type ResolveError struct {
	Soname string
	Path   string // where it stops: the file (ErrBadLibrary), the name or entry (ErrRelative, ErrUnmodeled)
	Reason string // why it stops there
	Tried  []search.Attempt
	Err    error // ErrNotFound, ErrBadLibrary, ErrRelative or ErrUnmodeled
}

func (e *ResolveError) Error() string {
	switch {
	case errors.Is(e.Err, ErrNotFound):
		return fmt.Sprintf("the loader would not find %q (%d places tried)", e.Soname, len(e.Tried))
	case errors.Is(e.Err, ErrBadLibrary):
		return fmt.Sprintf("dlopen(%q) would fail at %q: %s", e.Soname, e.Path, e.Reason)
	case errors.Is(e.Err, ErrRelative):
		return fmt.Sprintf("dlopen(%q): refusing %q, relative to the working directory: %s", e.Soname, e.Path, e.Reason)
	case errors.Is(e.Err, ErrUnmodeled):
		return fmt.Sprintf("cannot predict where the loader finds %q: %q: %s", e.Soname, e.Path, e.Reason)
	default:
		return fmt.Sprintf("dlopen(%q): %s", e.Soname, e.Reason)
	}
}

func (e *ResolveError) Unwrap() error { return e.Err }

// CacheError describes a malformed ld.so.cache; it matches ErrBadCache.
type CacheError struct {
	Path   string // the file, when known
	Offset int64  // where in the file the problem is, or -1
	Reason string
}

func (e *CacheError) Error() string {
	s := "malformed ld.so.cache"
	if e.Path != "" {
		s += " " + strconv.Quote(e.Path)
	}
	if e.Offset >= 0 {
		s += " at offset " + strconv.FormatInt(e.Offset, 10)
	}
	return s + ": " + e.Reason
}

func (e *CacheError) Is(target error) bool { return target == ErrBadCache }
