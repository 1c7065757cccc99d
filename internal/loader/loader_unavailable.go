//go:build (!linux && !windows) || pathfinder_static

package loader

import "os"

// Available reports whether this build can load libraries.
const Available = false

// Open is unavailable in this build.
func Open(path string, deepbind bool) (Library, error) { return Library{}, ErrUnavailable }

// OpenFile is unavailable in this build.
func OpenFile(f *os.File, path string, deepbind, viaDescriptor bool) (Library, error) {
	return Library{}, ErrUnavailable
}

// MappedFrom is unavailable in this build.
func MappedFrom(h uintptr, f *os.File) (bool, error) { return false, ErrUnavailable }

// Unload is unavailable in this build.
func Unload(h uintptr) error { return ErrUnavailable }

// Loaded is unavailable in this build: nothing is ever reported as loaded.
func Loaded(soname string) (Library, bool) { return Library{}, false }

// AddDLLDirectory is for Windows, where a DLL's own dependencies are found through it; elsewhere
// there is nothing to do.
func AddDLLDirectory(dir string) error { return nil }

// StillAbsent is false in this build: there is nothing to remember.
func StillAbsent(soname string) bool { return false }
