//go:build linux && !pathfinder_static

package loader

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"
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

// Dlopen is purego.Dlopen on one OS thread: dlerror's message belongs to the thread that called
// dlopen, and a goroutine moved to another thread in between reads an empty one.
func Dlopen(path string, flags int) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(path, flags)
}

// Open loads path (absolute, or a bare soname for the loader's own search) with RTLD_NOW|RTLD_GLOBAL,
// plus RTLD_DEEPBIND when asked, and reads back the absolute path the loader used.
func Open(path string, deepbind bool) (Library, error) {
	flags := purego.RTLD_NOW | purego.RTLD_GLOBAL
	if deepbind {
		flags |= rtldDeepbind
	}
	h, err := Dlopen(path, flags)
	if err != nil {
		return Library{}, fmt.Errorf("dlopen %s: %w", path, err)
	}
	abs, err := pathOf(h)
	if err != nil {
		return Library{}, err
	}
	return Library{Handle: h, Path: abs}, nil
}

// OpenFile loads the file f, which the caller opened at path and checked, so that what the loader
// maps is that very file. With viaDescriptor it is opened through /proc/self/fd/N, whatever has
// become of path since: the way for a path that someone else could change between the check and
// the load. The loader then knows the library by that name, so an $ORIGIN in its DT_RUNPATH stands
// for /proc/self/fd. Without it, the loader opens path itself, which is exact only when no one else
// can change path (see internal/trust). Either way the Library's Path is path.
func OpenFile(f *os.File, path string, deepbind, viaDescriptor bool) (Library, error) {
	if !viaDescriptor {
		return Open(path, deepbind)
	}
	// The loader knows an object by the name it was opened by, and hands the same object back for
	// the same name: a descriptor number used again for another file would get the first file. So
	// the loader gets a descriptor of its own, kept open for the life of the process, as the
	// library stays loaded.
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	runtime.KeepAlive(f)
	if err != nil {
		return Library{}, fmt.Errorf("dlopen %s through its open descriptor: %w", path, err)
	}
	l, err := Open("/proc/self/fd/"+strconv.Itoa(fd), deepbind)
	if err != nil {
		unix.Close(fd)
		return Library{}, fmt.Errorf("dlopen %s through its open descriptor: %w", path, errors.Unwrap(err))
	}
	l.Path = path
	return l, nil
}

// Unload gives back a handle Open returned; the library leaves the process when nothing else holds it.
func Unload(h uintptr) error { return purego.Dlclose(h) }

// Loaded reports whether a library with this soname is already in the process, without loading it.
func Loaded(soname string) (Library, bool) {
	gen, counted := linkMapGeneration() // before the look: a load during it makes the answer stale
	h, err := purego.Dlopen(soname, purego.RTLD_NOW|rtldNoload)
	if err != nil || h == 0 {
		if counted {
			absent.note(soname, gen)
		}
		return Library{}, false
	}
	abs, err := pathOf(h)
	if err != nil {
		return Library{}, false
	}
	return Library{Handle: h, Path: abs}, true
}

// StillAbsent reports whether Loaded last said soname was not in the process and the process's
// link map is as it was then: glibc's counts of objects ever added to it and removed from it are
// unchanged, so no library was loaded or unloaded since. RTLD_NOLOAD makes glibc search the file
// system for the name as dlopen would, and matches what it finds against the loaded objects by
// file identity; that search is not repeated here, so a caller must know by other means that it
// would find what it found before (the result cache's record of the loader's search places).
func StillAbsent(soname string) bool {
	gen, counted := linkMapGeneration()
	return counted && absent.holds(soname, gen)
}

// absent is what Loaded found not loaded, at which link-map generation.
var absent absences

type absences struct {
	mu    sync.Mutex
	gen   generation
	names map[string]bool
}

type generation struct{ adds, subs uint64 }

func (a *absences) note(soname string, gen generation) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gen != gen || a.names == nil {
		a.gen, a.names = gen, map[string]bool{}
	}
	a.names[soname] = true
}

func (a *absences) holds(soname string, gen generation) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gen == gen && a.names[soname]
}

// dlPhdrInfo is the start of glibc's struct dl_phdr_info, up to the counters.
type dlPhdrInfo struct {
	addr  uintptr
	name  uintptr
	phdr  uintptr
	phnum uint16
	adds  uint64
	subs  uint64
}

var (
	phdrOnce sync.Once
	phdrFn   uintptr // dl_iterate_phdr
	phdrCB   uintptr
	phdrMu   sync.Mutex // one walk at a time: the callback reports through phdrGen
	phdrGen  generation
	phdrOK   bool
)

// linkMapGeneration reads glibc's dlpi_adds and dlpi_subs: how many objects were ever added to and
// removed from the link map. dl_iterate_phdr reports them for every object; the first is enough.
func linkMapGeneration() (generation, bool) {
	phdrOnce.Do(func() {
		fn, err := purego.Dlsym(purego.RTLD_DEFAULT, "dl_iterate_phdr")
		if err != nil {
			return
		}
		phdrCB = purego.NewCallback(func(info *dlPhdrInfo, size uintptr, _ uintptr) uintptr {
			if size >= unsafe.Offsetof(info.subs)+unsafe.Sizeof(info.subs) {
				phdrGen, phdrOK = generation{info.adds, info.subs}, true
			}
			return 1 // stop after the first object
		})
		phdrFn = fn
	})
	if phdrFn == 0 {
		return generation{}, false
	}
	phdrMu.Lock()
	defer phdrMu.Unlock()
	phdrOK = false
	purego.SyscallN(phdrFn, phdrCB, 0)
	return phdrGen, phdrOK
}

var (
	dlinfoOnce sync.Once
	dlinfoFn   uintptr
	dlinfoErr  error
)

// linkMap is the start of glibc's struct link_map.
type linkMap struct {
	addr uintptr // l_addr: the load bias
	name *byte   // l_name
	ld   uintptr // l_ld: the object's dynamic section, inside one of its mappings
}

func linkMapOf(h uintptr) (*linkMap, error) {
	dlinfoOnce.Do(func() {
		dlinfoFn, dlinfoErr = purego.Dlsym(purego.RTLD_DEFAULT, "dlinfo")
	})
	if dlinfoErr != nil {
		return nil, fmt.Errorf("dlinfo: %w", dlinfoErr)
	}
	var lm *linkMap
	if r, _, _ := purego.SyscallN(dlinfoFn, h, rtldDILinkmap, uintptr(unsafe.Pointer(&lm))); r != 0 || lm == nil {
		return nil, fmt.Errorf("dlinfo failed for handle %#x", h)
	}
	return lm, nil
}

func pathOf(h uintptr) (string, error) {
	lm, err := linkMapOf(h)
	if err != nil {
		return "", err
	}
	return cString(lm.name), nil
}

// MappedFrom reports whether the object the loader holds as h was mapped from the open file f: the
// file behind the mapping that holds its dynamic section is f's, by device and inode as
// /proc/self/maps tells them. f's own numbers are read the same way, from a page of it mapped here
// for the purpose: on overlayfs (a container's root) a mapping names the file underneath, where a
// stat names the overlay's.
func MappedFrom(h uintptr, f *os.File) (bool, error) {
	lm, err := linkMapOf(h)
	if err != nil {
		return false, err
	}
	page, err := unix.Mmap(int(f.Fd()), 0, 1, unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		return false, fmt.Errorf("mapping %s: %w", f.Name(), err)
	}
	defer unix.Munmap(page)
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return false, err
	}
	ms := ParseMaps(string(maps))
	loaded, mine := mappedFile(ms, lm.ld), mappedFile(ms, uintptr(unsafe.Pointer(&page[0])))
	if loaded == "" || mine == "" {
		return false, fmt.Errorf("/proc/self/maps has no mapping at %#x or %#x", lm.ld, uintptr(unsafe.Pointer(&page[0])))
	}
	return loaded == mine, nil
}

// mappedFile is the "major:minor inode" of the file mapped at addr, "" for none or an anonymous
// mapping.
func mappedFile(ms []Mapping, addr uintptr) string {
	for _, m := range ms {
		if uint64(addr) >= m.Start && uint64(addr) < m.End {
			return m.File
		}
	}
	return ""
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
