//go:build linux && !pathfinder_static

package loader

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// glibc's values; purego exports only the portable ones.
const (
	rtldNoload      = 0x4
	rtldDeepbind    = 0x8
	rtldDILinkmap   = 2
	maxCStringBytes = 1 << 16
)

// Available reports whether this build can load libraries.
const Available = true

// Open loads path (absolute, or a bare soname for the loader's own search) with RTLD_NOW|RTLD_GLOBAL,
// plus RTLD_DEEPBIND when asked, and reads back the absolute path the loader used.
func Open(path string, deepbind bool) (Library, error) {
	flags := purego.RTLD_NOW | purego.RTLD_GLOBAL
	if deepbind {
		flags |= rtldDeepbind
	}
	h, err := purego.Dlopen(path, flags)
	if err != nil {
		return Library{}, fmt.Errorf("dlopen %s: %w", path, err)
	}
	abs, err := pathOf(h)
	if err != nil {
		return Library{}, err
	}
	return Library{Handle: h, Path: abs}, nil
}

// Loaded reports whether a library with this soname is already in the process, without loading it.
func Loaded(soname string) (Library, bool) {
	h, err := purego.Dlopen(soname, purego.RTLD_NOW|rtldNoload)
	if err != nil || h == 0 {
		return Library{}, false
	}
	abs, err := pathOf(h)
	if err != nil {
		return Library{}, false
	}
	return Library{Handle: h, Path: abs}, true
}

var (
	dlinfoOnce sync.Once
	dlinfoFn   uintptr
	dlinfoErr  error
)

type linkMap struct {
	addr uintptr
	name *byte
}

func pathOf(h uintptr) (string, error) {
	dlinfoOnce.Do(func() {
		dlinfoFn, dlinfoErr = purego.Dlsym(purego.RTLD_DEFAULT, "dlinfo")
	})
	if dlinfoErr != nil {
		return "", fmt.Errorf("dlinfo: %w", dlinfoErr)
	}
	var lm *linkMap
	if r, _, _ := purego.SyscallN(dlinfoFn, h, rtldDILinkmap, uintptr(unsafe.Pointer(&lm))); r != 0 || lm == nil {
		return "", fmt.Errorf("dlinfo failed for handle %#x", h)
	}
	return cString(lm.name), nil
}

func cString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for n < maxCStringBytes && *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// AddDLLDirectory is for Windows, where a DLL's own dependencies are found through it; elsewhere
// there is nothing to do.
func AddDLLDirectory(dir string) error { return nil }
