package loadermodel

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/pathfinder-dev/pathfinder/internal/binfmt"
)

// target is what differs between the loaders this package models.
type target struct {
	binfmt.Arch
	cacheID    int32  // _DL_CACHE_DEFAULT_ID, the only flags the loader accepts in ld.so.cache
	signedChar bool   // C's char, for libcmp
	interp     string // the glibc loader, PT_INTERP of every program
	triplet    string // Debian's multiarch directory name
}

var targets = []target{
	{binfmt.Arch{Class: binfmt.Class64, Data: binfmt.LittleEndian, Machine: binfmt.MachineX86_64}, flagELFLibc6 | flagX8664Lib64, true, "/lib64/ld-linux-x86-64.so.2", "x86_64-linux-gnu"},
	{binfmt.Arch{Class: binfmt.Class64, Data: binfmt.LittleEndian, Machine: binfmt.MachineAArch64}, flagELFLibc6 | flagAArch64Lib64, false, "/lib/ld-linux-aarch64.so.1", "aarch64-linux-gnu"},
}

func hostMachine() binfmt.Machine { return binfmt.MachineOf(runtime.GOARCH) }

func findTarget(m binfmt.Machine, c binfmt.Class) (target, error) {
	if m == binfmt.MachineNone {
		m = hostMachine()
	}
	if c == binfmt.ClassNone {
		c = binfmt.Class64
	}
	for _, t := range targets {
		if t.Machine == m && t.Class == c {
			return t, nil
		}
	}
	return target{}, fmt.Errorf("no loader model for %v %v (GOARCH %s): %w", m, c, runtime.GOARCH, errors.ErrUnsupported)
}

// glibcVersion is the version of the loader under Root; zero when unknown.
type glibcVersion struct{ major, minor int }

func (v glibcVersion) known() bool { return v.major != 0 }

func (v glibcVersion) atLeast(major, minor int) bool {
	return v.major > major || v.major == major && v.minor >= minor
}

func (v glibcVersion) String() string {
	if !v.known() {
		return "unknown"
	}
	return strconv.Itoa(v.major) + "." + strconv.Itoa(v.minor)
}

// interpreterFacts is what the loader binary itself tells: its version and its default directories.
type interpreterFacts struct {
	version    glibcVersion
	systemDirs []string // nil when they could not be read
}

var releaseVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`release version (\d+)\.(\d+)`) })

// readInterpreter reads the glibc loader binary. Its default directories are compiled in as
// rtld's system_dirs: absolute directories, each ending in '/', NUL-separated and contiguous
// ("/lib/x86_64-linux-gnu/\0/usr/lib/x86_64-linux-gnu/\0/lib/\0/usr/lib/\0" on Debian,
// "/lib64/\0/usr/lib64/\0" upstream). That is what `ld.so --help` prints as "system search path".
func readInterpreter(data []byte) interpreterFacts {
	var f interpreterFacts
	if m := releaseVersion().FindSubmatch(data); m != nil {
		major, _ := strconv.Atoi(string(m[1]))
		minor, _ := strconv.Atoi(string(m[2]))
		f.version = glibcVersion{major, minor}
	}
	f.systemDirs = findSystemDirs(data)
	return f
}

// findSystemDirs finds the longest run of NUL-terminated strings that each start with '/', end with
// "/" and name a lib directory, and that begins right after a NUL; the first such run wins a tie.
func findSystemDirs(data []byte) []string {
	var best []string
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], '/')
		if j < 0 {
			break
		}
		i += j
		if i > 0 && data[i-1] != 0 {
			i++
			continue
		}
		var run []string
		k := i
		for k < len(data) && data[k] == '/' {
			end := bytes.IndexByte(data[k:], 0)
			if end < 0 {
				break
			}
			s := string(data[k : k+end])
			if !isSystemDir(s) {
				break
			}
			run = append(run, strings.TrimRight(s, "/"))
			k += end + 1
		}
		if len(run) > len(best) {
			best = run
		}
		if k > i {
			i = k
		} else {
			i++
		}
	}
	return best
}

func isSystemDir(s string) bool {
	if s[0] != '/' || s[len(s)-1] != '/' || !strings.Contains(s, "lib") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// fallbackSystemDirs is used when the loader binary cannot be read: Debian's multiarch layout if
// the tree has it, upstream glibc's slibdir and libdir otherwise.
func fallbackSystemDirs(t target, fsys rootFS) []string {
	if fi, err := fsys.stat("/usr/lib/" + t.triplet); err == nil && fi.IsDir() {
		return []string{"/lib/" + t.triplet, "/usr/lib/" + t.triplet, "/lib", "/usr/lib"}
	}
	return []string{"/lib64", "/usr/lib64"}
}
