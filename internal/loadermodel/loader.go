package loadermodel

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/binfmt"
)

// Where a Resolution was found, named as pathfinder's found_via labels.
const (
	ViaPath          = "path" // the name has a '/', so the loader opens it as it is
	ViaLDLibraryPath = "LD_LIBRARY_PATH"
	ViaRPath         = "DT_RPATH"   // a needing object's own search path (ResolveNeeded)
	ViaRunPath       = "DT_RUNPATH" // likewise, searched after LD_LIBRARY_PATH
	ViaCache         = "ld.so.cache"
	ViaDefaultDirs   = "default-dirs"
)

// DefaultCachePath is the cache glibc's loader reads.
const DefaultCachePath = "/etc/ld.so.cache"

// Loader models the search of glibc's dynamic loader for dlopen(name) in a process of one machine
// and class. The zero value models this process on this machine.
type Loader struct {
	// Root is the directory the loader's "/" is; "" means "/". Every path — the cache, the default
	// directories, LD_LIBRARY_PATH entries, symlink targets — is read under it, as in a chroot.
	Root string

	// Getenv reads LD_LIBRARY_PATH; nil means os.Getenv. The real loader reads it once, at process
	// start: a process that changed its environment since should pass the value it started with.
	Getenv func(string) string

	// CachePath is the ld.so.cache to read, a path under Root; "" means /etc/ld.so.cache.
	CachePath string

	// DefaultDirs are the directories searched last; nil means the ones compiled into the loader
	// under Root (what `ld.so --help` lists as "system search path"), or, when it cannot be read,
	// Debian's multiarch directories where the tree has them and /lib64, /usr/lib64 otherwise.
	DefaultDirs []string

	// HWCapsSubdirs are the subdirectories tried in each directory before the directory itself,
	// most preferred first (e.g. "glibc-hwcaps/x86-64-v3", "tls/x86_64"); they also decide which
	// hwcaps entries of the cache apply. nil means what the loader under Root does on this CPU:
	// glibc-hwcaps/ subdirectories from glibc 2.33, the legacy tls/, platform and hwcap ones
	// before 2.37 (the version is read from the loader; unknown counts as current), none for a
	// Machine that is not this CPU's. An empty, non-nil slice means none.
	HWCapsSubdirs []string

	// Machine and Class are the process's; zero values mean this process (GOARCH, 64-bit).
	// Supported: EM_X86_64 and EM_AARCH64, ELFCLASS64.
	Machine binfmt.Machine
	Class   binfmt.Class

	// Refuse, when set, passes over a usable file for which it gives a reason, as the loader passes
	// over a file of another class, with the reason in Tried: what the next place would give.
	// pathfinder refuses stub libraries this way.
	Refuse func(path string) string

	// read keeps what the Loader read of the interpreter and the cache, for its later searches: a
	// Loader answers as of its first search, like the loader of one process, and is for one
	// goroutine at a time.
	read *readOnce
}

type readOnce struct {
	interp      bool
	facts       interpreterFacts
	cacheErr    error
	cacheParsed *cacheFile
}

// Resolution is where the loader would find a library.
type Resolution struct {
	Path     string           // the path the loader opens (and reports as the link map's l_name)
	RealPath string           // Path with every symlink resolved under Root
	Via      string           // ViaPath, ViaLDLibraryPath, ViaCache or ViaDefaultDirs
	Tried    []search.Attempt // the places looked at before, in order, with why not (hwcaps subdirectories that do not exist are left out)
}

// Resolve returns where dlopen(soname) would find the library, following glibc's _dl_map_object:
// a name with a '/' is opened as it is; otherwise LD_LIBRARY_PATH, then the ld.so.cache, then the
// default directories, trying the hwcaps subdirectories of every directory first. A file of the
// wrong class or machine is skipped as the loader skips it; a file the loader would fail on (not
// ELF, truncated) ends the search with ErrBadLibrary. Unlike the loader, Resolve never looks in
// the working directory: an empty or relative LD_LIBRARY_PATH entry is recorded in Tried and
// skipped, a relative name is ErrRelative. An entry with $ORIGIN, $LIB or $PLATFORM ends the
// search with ErrUnmodeled rather than a guess. Errors are *ResolveError. A malformed cache is
// no error but an Attempt: the search reads what the loader would still read of it, or goes on
// without it where the loader ignores the whole file.
//
// Not modeled: libraries already loaded (matched by soname before any search), DT_RPATH and
// DT_RUNPATH of the caller, secure-execution mode, LD_PRELOAD, GLIBC_TUNABLES and LD_HWCAP_MASK.
func (l *Loader) Resolve(soname string) (Resolution, error) {
	s, err := l.newSearch(soname)
	if err != nil {
		return Resolution{}, err
	}
	return s.run()
}

// ResolveNeeded returns where the loader would find name as a DT_NEEDED entry of an object whose
// DT_RPATH (searched before LD_LIBRARY_PATH, only when it has no DT_RUNPATH) and DT_RUNPATH
// (searched after it) are given, with $ORIGIN already expanded: see SearchDirs.
func (l *Loader) ResolveNeeded(name string, rpath, runpath []string) (Resolution, error) {
	s, err := l.newSearch(name)
	if err != nil {
		return Resolution{}, err
	}
	s.rpath, s.runpath = rpath, runpath
	return s.run()
}

// lookup is one Resolve call.
type lookup struct {
	name    string
	t       target
	fsys    rootFS
	env     func(string) string
	cache   string
	dirs    []string
	caps    hwcaps
	refuse  func(string) string
	read    *readOnce
	rpath   []string // searched first, as the needing object's DT_RPATH
	runpath []string // searched after LD_LIBRARY_PATH, as its DT_RUNPATH
	tried   []search.Attempt
}

func (l *Loader) newSearch(name string) (*lookup, error) {
	t, err := findTarget(l.Machine, l.Class)
	if err != nil {
		return nil, err
	}
	if l.read == nil {
		l.read = &readOnce{}
	}
	s := &lookup{name: name, t: t, fsys: newRootFS(l.Root), env: l.Getenv, cache: l.CachePath, dirs: l.DefaultDirs, refuse: l.Refuse, read: l.read}
	if s.env == nil {
		s.env = os.Getenv
	}
	if s.cache == "" {
		s.cache = DefaultCachePath
	}
	var facts interpreterFacts
	if s.dirs == nil || l.HWCapsSubdirs == nil {
		if !l.read.interp {
			if data, err := s.fsys.readFile(t.interp); err == nil {
				l.read.facts = readInterpreter(data)
			}
			l.read.interp = true
		}
		facts = l.read.facts
	}
	if s.dirs == nil {
		s.dirs = facts.systemDirs
		if s.dirs == nil {
			s.dirs = fallbackSystemDirs(t, s.fsys)
		}
	}
	subdirs := l.HWCapsSubdirs
	if subdirs == nil {
		subdirs = detectHWCapsSubdirs(t.Machine, facts.version)
	}
	s.caps = newHWCaps(t.Machine, subdirs)
	return s, nil
}

func (s *lookup) run() (Resolution, error) {
	if s.name == "" {
		return Resolution{}, s.fail(errors.New("empty library name"), "", "empty name")
	}
	if strings.Contains(s.name, "/") {
		if dynamicStringToken().MatchString(s.name) {
			return Resolution{}, s.fail(ErrUnmodeled, s.name, "a name with a dynamic string token ($ORIGIN, $LIB, $PLATFORM), which this model does not expand")
		}
		if !strings.HasPrefix(s.name, "/") {
			return Resolution{}, s.fail(ErrRelative, s.name, "a relative path is opened from the working directory")
		}
		if res, done, err := s.outcome(s.name, ViaPath, s.open(s.name)); done {
			return res, err
		}
		return s.notFound()
	}

	for _, dir := range s.rpath {
		if res, done, err := s.searchDir(dir, ViaRPath); done {
			return res, err
		}
	}
	for _, dir := range splitPath(s.env("LD_LIBRARY_PATH")) {
		if res, done, err := s.searchDir(dir, ViaLDLibraryPath); done {
			return res, err
		}
	}
	for _, dir := range s.runpath {
		if res, done, err := s.searchDir(dir, ViaRunPath); done {
			return res, err
		}
	}

	if res, done, err := s.searchCache(); done {
		return res, err
	}

	for _, dir := range s.dirs {
		if res, done, err := s.searchDir(dir, ViaDefaultDirs); done {
			return res, err
		}
	}
	return s.notFound()
}

func (s *lookup) notFound() (Resolution, error) {
	return Resolution{Tried: s.tried}, &ResolveError{Soname: s.name, Tried: s.tried, Err: ErrNotFound}
}

// splitPath splits LD_LIBRARY_PATH as glibc's fillin_rpath does: on ':' and ';', trailing slashes
// dropped, repeats searched once. Empty entries stay (they mean the working directory).
func splitPath(v string) []string {
	if v == "" {
		return nil
	}
	var dirs []string
	seen := map[string]bool{}
	for _, d := range splitAny(v, ":;") {
		for len(d) > 1 && strings.HasSuffix(d, "/") {
			d = d[:len(d)-1]
		}
		if seen[d] {
			continue
		}
		seen[d] = true
		dirs = append(dirs, d)
	}
	return dirs
}

// dynamicStringToken matches what glibc's is_dst recognizes; any other '$' is a literal character.
var dynamicStringToken = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$(ORIGIN|PLATFORM|LIB)(/|$)|\$\{(ORIGIN|PLATFORM|LIB)\}`)
})

func splitAny(s, seps string) []string {
	var out []string
	for {
		i := strings.IndexAny(s, seps)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}

// searchDir tries the hwcaps subdirectories of dir, then dir. done is true when the search ends
// here, found or failed.
func (s *lookup) searchDir(dir, via string) (res Resolution, done bool, err error) {
	switch {
	case dir == "":
		s.record("", "empty LD_LIBRARY_PATH entry: the loader would search the working directory; pathfinder never does")
		return res, false, nil
	case dynamicStringToken().MatchString(dir):
		// $ORIGIN is the main program's directory, $LIB and $PLATFORM are compiled into the
		// loader: guessing them could give a wrong answer, skipping them too.
		return res, true, s.fail(ErrUnmodeled, dir, via+" entry with a dynamic string token ($ORIGIN, $LIB, $PLATFORM), which this model does not expand")
	case !strings.HasPrefix(dir, "/"):
		s.record(dir, fmt.Sprintf("relative %s entry %q: the loader would resolve it against the working directory; pathfinder never does", via, dir))
		return res, false, nil
	}
	base := strings.TrimSuffix(dir, "/") + "/"
	for _, sub := range s.caps.subdirs {
		p := base + sub + "/" + s.name
		o := s.open(p)
		if o.missing {
			// Leave out the many subdirectories that do not exist; a missing file in one that
			// does is worth telling.
			if fi, err := s.fsys.stat(base + sub); err != nil || !fi.IsDir() {
				continue
			}
		}
		if res, done, err := s.outcome(p, via, o); done {
			return res, true, err
		}
	}
	p := base + s.name
	return s.outcome(p, via, s.open(p))
}

func (s *lookup) searchCache() (res Resolution, done bool, err error) {
	if s.read.cacheParsed == nil && s.read.cacheErr == nil {
		data, err := s.fsys.readFile(s.cache)
		if err != nil {
			s.read.cacheErr = err
		} else {
			c := readCache(data)
			s.read.cacheParsed = &c
		}
	}
	if s.read.cacheErr != nil {
		s.record(s.cache, "cache not read: "+errReason(s.read.cacheErr))
		return res, false, nil
	}
	c := s.read.cacheParsed
	if c.err != nil {
		var ce *CacheError
		if errors.As(c.err, &ce) {
			ce.Path = s.cache
		}
		reason := c.err.Error()
		if !c.ignored {
			reason += " (the loader still reads the entries it can, and so does this model)"
		}
		s.record(s.cache, reason)
	}
	if c.ignored {
		return res, false, nil
	}
	p, ok := lookupCache(c.slots, s.name, s.t, s.caps)
	if !ok {
		s.record(s.cache, fmt.Sprintf("no entry for %q with flags %#04x", s.name, s.t.cacheID))
		return res, false, nil
	}
	return s.outcome(p, ViaCache, s.open(p))
}

type opened struct {
	v       binfmt.Verdict
	reason  string
	missing bool // there was no file to open: the loader searches on
}

// open opens p the way open_verify does and judges its header.
func (s *lookup) open(p string) opened {
	f, err := s.fsys.open(p)
	if err != nil {
		return opened{binfmt.Skipped, errReason(err), true}
	}
	defer f.Close()
	v, reason := binfmt.VerifyHeader(f, s.t.Arch)
	return opened{v: v, reason: reason}
}

func (s *lookup) outcome(p, via string, o opened) (Resolution, bool, error) {
	if o.v == binfmt.Usable && s.refuse != nil {
		if why := s.refuse(p); why != "" {
			o = opened{v: binfmt.Skipped, reason: why}
		}
	}
	switch o.v {
	case binfmt.Usable:
		res := Resolution{Path: p, Via: via, Tried: s.tried}
		if real, err := s.fsys.realPath(p); err == nil {
			res.RealPath = real
		}
		return res, true, nil
	case binfmt.Fatal:
		return Resolution{Tried: s.tried}, true, s.fail(ErrBadLibrary, p, o.reason)
	default:
		s.record(p, o.reason)
		return Resolution{}, false, nil
	}
}

func (s *lookup) record(p, reason string) {
	s.tried = append(s.tried, search.Attempt{Path: p, Reason: reason})
}

func (s *lookup) fail(err error, p, reason string) error {
	return &ResolveError{Soname: s.name, Path: p, Reason: reason, Tried: s.tried, Err: err}
}

func errReason(err error) string {
	var errno syscall.Errno
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.As(err, &errno):
		return errno.Error()
	}
	return err.Error()
}

// lookupCache is glibc's search_cache (elf/dl-cache.c, 2.33 and later): a binary search with
// libcmp for the first entry of the name, then a walk over its entries in order. glibc-hwcaps
// entries come first; the usable one of the most preferred subdirectory wins over a plain entry.
// A key offset out of range ends the lookup, a value offset out of range skips the entry, as there.
func lookupCache(slots []cacheSlot, name string, t target, h hwcaps) (string, bool) {
	hwcapExclude := ^(h.legacyMask | h.platformMask | 1<<63)
	left, right := 0, len(slots)-1
	for left <= right {
		middle := (left + right) / 2
		if !slots[middle].keyOK {
			return "", false
		}
		// ldconfig sorts in descending libcmp order.
		cmp := libcmp(name, slots[middle].Name, t.signedChar)
		if cmp < 0 {
			left = middle + 1
			continue
		}
		if cmp > 0 {
			right = middle - 1
			continue
		}
		left = middle
		for middle > 0 && slots[middle-1].keyOK && libcmp(name, slots[middle-1].Name, t.signedChar) == 0 {
			middle--
		}
		best, bestPriority := "", 0
		for ; middle <= right; middle++ {
			e := slots[middle]
			if middle > left && (!e.keyOK || libcmp(name, e.Name, t.signedChar) != 0) {
				break
			}
			if e.Flags != t.cacheID || !e.valueOK {
				continue
			}
			named := e.isHWCapsEntry()
			if named && h.checkISA && h.isaLevels&(1<<e.isaLevel()) == 0 {
				continue
			}
			if !named && best != "" {
				break // the glibc-hwcaps entries are over; the best of them wins
			}
			if !named && e.HWCap&hwcapExclude != 0 {
				continue
			}
			if h.platformMask != 0 && e.HWCap&h.platformMask != 0 && e.HWCap&h.platformMask != h.platform {
				continue
			}
			if named {
				priority := 0
				if e.hwcapsOK {
					priority = h.priority(e.HWCapsSubdir)
				}
				if priority == 0 || best != "" && priority >= bestPriority {
					continue
				}
				bestPriority = priority
			}
			best = e.Path
			if !named {
				break // flags are exactly the expected ones: no better entry can follow
			}
		}
		return best, best != ""
	}
	return "", false
}

// priority is 1 for the most preferred active glibc-hwcaps subdirectory, 0 for an inactive one.
func (h hwcaps) priority(name string) int {
	for i, n := range h.named {
		if n == name {
			return i + 1
		}
	}
	return 0
}
