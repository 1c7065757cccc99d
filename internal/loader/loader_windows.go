//go:build windows && !pathfinder_static

package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/windows"
)

// Available reports whether this build can load libraries.
const Available = true

// The flags cuda.pathfinder loads with. A DLL given by absolute path is loaded with
// LOAD_LIBRARY_SEARCH_DEFAULT_DIRS|LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR: its dependencies are looked for
// in its own directory, the application's directory, System32 and the directories AddDLLDirectory
// added. A bare name gets the same search without the DLL's directory: what LoadLibraryExW(name, 0)
// does in a Python 3.8+ process (CPython sets SetDefaultDllDirectories(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)),
// so neither PATH nor the current directory is searched. A Go process sets no default, so the flag is
// passed explicitly instead of changing the whole process's DLL search.
const (
	flagsAbsolute = windows.LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | windows.LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR
	flagsBareName = windows.LOAD_LIBRARY_SEARCH_DEFAULT_DIRS
)

// Open loads path, an absolute path or a bare DLL name for the system's search (see the flags above),
// and reads back the absolute path the loader used. deepbind has no meaning on Windows and is ignored.
// A relative path with directories is refused: it would be resolved against the current directory.
func Open(path string, deepbind bool) (Library, error) {
	name := filepath.FromSlash(path)
	flags := uintptr(flagsBareName)
	switch {
	case filepath.IsAbs(name):
		name = filepath.Clean(name)
		flags = flagsAbsolute
	case strings.ContainsAny(name, `\:`):
		return Library{}, fmt.Errorf("LoadLibraryExW %s: a relative path: refused, never resolved against the working directory", path)
	}
	h, err := windows.LoadLibraryEx(name, 0, flags)
	if err != nil {
		return Library{}, fmt.Errorf("LoadLibraryExW %s: %w", path, err)
	}
	abs, err := moduleFileName(h)
	if err != nil {
		return Library{}, err
	}
	return Library{Handle: uintptr(h), Path: abs}, nil
}

// OpenFile loads path, which the caller opened as f and checked. Windows cannot load a DLL from an
// open handle, so path is opened again, without FILE_SHARE_DELETE (what os.Open asks), and held
// while LoadLibraryExW runs: the file can then be neither renamed nor replaced, and it must be the
// file f is. viaDescriptor has no meaning here.
func OpenFile(f *os.File, path string, deepbind, viaDescriptor bool) (Library, error) {
	held, err := os.Open(path)
	if err != nil {
		return Library{}, fmt.Errorf("LoadLibraryExW %s: %w", path, err)
	}
	defer held.Close()
	want, err1 := f.Stat()
	got, err2 := held.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(want, got) {
		return Library{}, fmt.Errorf("LoadLibraryExW %s: no longer the file that was checked", path)
	}
	return Open(path, deepbind)
}

// MappedFrom is not asked of Windows: OpenFile holds the file so that it cannot be replaced while
// it loads, and the caller compares the path afterwards.
func MappedFrom(h uintptr, f *os.File) (bool, error) { return false, errors.ErrUnsupported }

// Unload gives back a handle Open returned (FreeLibrary).
func Unload(h uintptr) error { return windows.FreeLibrary(windows.Handle(h)) }

// Loaded reports whether a DLL with this name is already in the process (GetModuleHandleW, which
// neither loads it nor takes a reference), and where it was loaded from.
func Loaded(name string) (Library, bool) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return Library{}, false
	}
	var h windows.Handle
	if err := windows.GetModuleHandleEx(windows.GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT, p, &h); err != nil || h == 0 {
		return Library{}, false
	}
	abs, err := moduleFileName(h)
	if err != nil {
		return Library{}, false
	}
	return Library{Handle: uintptr(h), Path: abs}, true
}

// moduleFileName is the absolute path a loaded module came from (GetModuleFileNameW), however long.
func moduleFileName(h windows.Handle) (string, error) {
	for size := uint32(windows.MAX_PATH); ; size *= 2 {
		buf := make([]uint16, size)
		n, err := windows.GetModuleFileName(h, &buf[0], size)
		switch {
		case err != nil && !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER):
			return "", fmt.Errorf("GetModuleFileNameW for handle %#x: %w", h, err)
		case n < size:
			return windows.UTF16ToString(buf[:n]), nil
		case size >= 1<<16:
			return "", fmt.Errorf("GetModuleFileNameW for handle %#x: path longer than %d characters", h, size)
		}
	}
}

var (
	dllDirsMu sync.Mutex
	dllDirs   = map[string]bool{} // added by AddDLLDirectory, folded to lower case
)

// AddDLLDirectory makes dir (absolute) part of the DLL search for what a library loads later, as
// cuda.pathfinder does for descriptors with requires_add_dll_directory (nvrtc loads its builtins DLL,
// cufft its helpers, by name). It calls AddDllDirectory, which LoadLibraryExW honours with the
// LOAD_LIBRARY_SEARCH_* flags, and appends dir to the process's PATH, which a plain LoadLibrary from
// inside the library searches in a process without SetDefaultDllDirectories (every Go process).
// The directory stays added for the life of the process; adding it again does nothing.
func AddDLLDirectory(dir string) error {
	dir = filepath.Clean(filepath.FromSlash(dir))
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("AddDllDirectory %s: not an absolute path", dir)
	}
	key := strings.ToLower(dir)
	dllDirsMu.Lock()
	defer dllDirsMu.Unlock()
	if dllDirs[key] {
		return nil
	}
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return fmt.Errorf("AddDllDirectory %s: %w", dir, err)
	}
	if _, err := windows.AddDllDirectory(p); err != nil {
		return fmt.Errorf("AddDllDirectory %s: %w", dir, err)
	}
	if path := os.Getenv("PATH"); !pathHas(path, dir) {
		if path != "" {
			path += string(os.PathListSeparator)
		}
		if err := os.Setenv("PATH", path+dir); err != nil {
			return fmt.Errorf("adding %s to PATH: %w", dir, err)
		}
	}
	dllDirs[key] = true
	return nil
}

// pathHas reports whether the PATH value list holds dir, ignoring case and a trailing separator.
func pathHas(list, dir string) bool {
	for _, e := range filepath.SplitList(list) {
		if e != "" && strings.EqualFold(filepath.Clean(e), dir) {
			return true
		}
	}
	return false
}

// StillAbsent is always false on Windows: GetModuleHandleEx does not search the file system, so
// Loaded is cheap to ask again.
func StillAbsent(name string) bool { return false }
