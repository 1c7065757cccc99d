// Package loader loads shared libraries into the process through the OS loader (purego's dlopen on
// Linux, no cgo; LoadLibraryExW on Windows) and asks the loader where a library it loaded came from. Handles are never closed:
// a library that was loaded stays loaded, as the libraries pathfinder serves expect. Its model,
// which loads nothing and answers where the loader would look, is internal/loadermodel.
package loader

import "errors"

// ErrUnavailable is returned by every function of a build that cannot load libraries.
var ErrUnavailable = errors.New("this build cannot load libraries (built with -tags pathfinder_static)")

// Library is a library the OS loader holds.
type Library struct {
	Handle uintptr
	Path   string // absolute, as the loader reports it
}
