// Package candidate checks what a plugin proposes before the host uses it: the response, read
// within bounds, and each path it names — absolute, clean, inside a directory granted to the step,
// never under stubs/, a regular file (a directory, for headers) of the kind and platform asked for.
// A file that passes is kept open, so that what is loaded is the very file that was checked.
package candidate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/binfmt"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/guestpath"
	"github.com/pathfinder-dev/pathfinder/internal/loadermodel"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/printable"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
)

// Dir is a directory granted to a step.
type Dir struct {
	Path  string   // the host path
	Root  *os.Root // the directory, opened confined: what is read through it lies inside
	Label string   // the found_via of what lies in it (config.Plugin.FoundViaFor)
}

// Granted is the directories granted to one step, as validation needs them.
type Granted struct {
	Dirs  []Dir
	Paths guestpath.Map     // the host's path mapping (the zero value: a Unix host's identity)
	Rec   *observe.Recorder // what validation looks at is recorded here
	// Deadline is the step's: the plugin's timeout from when the grants were made. Checking the
	// candidates is part of the step's cost, so a candidate met after it is not checked. Zero for none.
	Deadline time.Time
	Now      func() time.Time // the clock Deadline is read by; nil: time.Now
}

func (g *Granted) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// File is a candidate validation accepted, still open: what is loaded is this very file.
type File struct {
	Host  string        // its host path: the path loaded and printed
	Real  string        // where the links on its way lead, when there are any: as the walk that opened File went
	Links []search.Link // those links, in order
	File  *os.File      // open; nil for a header directory
	Info  fs.FileInfo   // as validation saw it
	Needs binfmt.Needs  // what an ELF shared object asks of the loader
}

// Close closes the file, if one is open.
func (c *File) Close() {
	if c.File != nil {
		c.File.Close()
	}
}

// FoundVia is the found_via of the candidate p (a guest path) of the step named step: the label of
// the granted directory it lies in, whatever the plugin said, so that no plugin can claim another
// origin ("was-already-loaded-from-elsewhere"); the step's name for a path outside them all.
func (g *Granted) FoundVia(p, step string) string {
	if _, i := g.DirOf(p); i >= 0 {
		return g.Dirs[i].Label
	}
	return step
}

// TracePath is how the candidate p (a guest path) is shown: in host form, escaped. What is checked
// and loaded is p itself, never this.
func (g *Granted) TracePath(p string) string {
	if h, err := g.Paths.ToHost(p); err == nil {
		p = h
	}
	return printable.String(p)
}

// guestOf is where the plugin sees the granted directory d.
func (g *Granted) guestOf(d *Dir) string {
	gp, err := g.Paths.ToGuest(d.Path)
	if err != nil {
		return "" // never granted: the host maps every directory it grants
	}
	return gp
}

// DirOf is the granted directory (in host form) that the guest path p is in, the innermost one, and
// its index in g.Dirs; "", -1 for none.
func (g *Granted) DirOf(p string) (string, int) {
	root, at, best := "", -1, -1
	for i := range g.Dirs {
		d := &g.Dirs[i]
		gd := g.guestOf(d)
		if gd != "" && strictlyUnder(p, gd) && len(gd) > best {
			root, at, best = d.Path, i, len(gd)
		}
	}
	return root, at
}

// Covers reports whether the guest path p is a granted directory or lies inside one: what the
// step's sandbox can show at all.
func (g *Granted) Covers(p string) bool {
	for i := range g.Dirs {
		if gd := g.guestOf(&g.Dirs[i]); gd != "" && (p == gd || strictlyUnder(p, gd)) {
			return true
		}
	}
	return false
}

// strictlyUnder reports whether the clean guest path p lies inside the directory dir, not at it:
// "/" holds every other absolute path.
func strictlyUnder(p, dir string) bool {
	if dir == "/" {
		return len(p) > 1 && p[0] == '/'
	}
	return len(p) > len(dir)+1 && strings.HasPrefix(p, dir) && p[len(dir)] == '/'
}

// relTo is the guest path p relative to the directory dir it lies in (strictlyUnder).
func relTo(p, dir string) string {
	if dir == "/" {
		return p[1:]
	}
	return p[len(dir)+1:]
}

// IsStubFile is loadermodel.IsStub of the host path p and of where the links on its way lead: a soname link to
// a toolkit's stubs/libcuda.so is a stub too.
func IsStubFile(p string) bool {
	if loadermodel.IsStub(p) {
		return true
	}
	real, err := filepath.EvalSymlinks(p)
	return err == nil && loadermodel.IsStub(filepath.ToSlash(real))
}

// errStub refuses a stub library.
var errStub = errors.New("a stubs/ library: for linking only, never loaded")

// Check checks a candidate, the guest path p, before anything uses it: its host path (the path
// loaded and printed), or why it is refused.
func (g *Granted) Check(p string, e *catalog.Entry, plat abi.Platform) (string, error) {
	c, err := g.open(p, e, plat, false)
	if err != nil {
		return "", err
	}
	c.Close()
	return c.Host, nil
}

// Open is Check that keeps the file open for what comes next: a load, a look at what it needs.
func (g *Granted) Open(p string, e *catalog.Entry, plat abi.Platform) (*File, error) {
	return g.open(p, e, plat, true)
}

// RefusedError is a candidate refused after links were met on its way: the links, in order, and
// why it was refused.
type RefusedError struct {
	Links []search.Link
	Err   error
}

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// LinksOf are the links on the way to a candidate that err refused, if any were met.
func LinksOf(err error) []search.Link {
	var re *RefusedError
	if errors.As(err, &re) {
		return re.Links
	}
	return nil
}

// open is Open; without keep, a file whose content this process judged already (checked) is not
// opened again. A refusal after links were met says which (RefusedError).
func (g *Granted) open(p string, e *catalog.Entry, plat abi.Platform, keep bool) (_ *File, err error) {
	var reached sandboxfs.Reached
	defer func() {
		if err != nil && len(reached.Links) > 0 {
			err = &RefusedError{Links: reached.Links, Err: err}
		}
	}()
	if !g.Deadline.IsZero() && g.now().After(g.Deadline) {
		return nil, errors.New("not checked: the step's timeout had passed")
	}
	switch {
	case p == "":
		return nil, errors.New("empty path")
	case len(p) > abi.MaxPathBytes:
		return nil, fmt.Errorf("path longer than %d bytes", abi.MaxPathBytes)
	case strings.ContainsRune(p, 0):
		return nil, errors.New("path contains a NUL byte")
	case !utf8.ValidString(p):
		return nil, errors.New("path is not valid UTF-8")
	case !printable.Is(p):
		return nil, errors.New("path contains a control character (a newline, an escape, a bidirectional override)")
	case !path.IsAbs(p):
		return nil, errors.New("not an absolute path")
	case path.Clean(p) != p:
		return nil, fmt.Errorf("not a clean path (clean: %s)", path.Clean(p))
	case loadermodel.IsStub(p):
		return nil, errStub
	}
	_, i := g.DirOf(p)
	if i < 0 {
		return nil, errors.New("outside every directory granted to the step")
	}
	h, err := g.Paths.ToHost(p) // on a Windows host, a name that has no host form is refused here
	if err != nil {
		return nil, err
	}
	dir := &g.Dirs[i]
	rel := relTo(p, g.guestOf(dir))
	var fi fs.FileInfo
	fi, reached, err = g.stat(dir, rel)
	if err != nil {
		if len(reached.Links) > 0 {
			return nil, fmt.Errorf("%s: %v", reached, unwrapPath(err))
		}
		return nil, fmt.Errorf("cannot stat inside %s: %v", dir.Path, unwrapPath(err))
	}
	verdict, isJudged := judged(fi, e, plat)
	c := &File{Host: h, Info: fi}
	var now fs.FileInfo // the open file's own stat
	switch {
	case isJudged && !keep:
		// A re-check of a file this process judged already (a cached answer's) opens nothing and
		// walks nothing: its observations would have changed with any link, and its real path is
		// in the entry.
	case fi.Mode().IsRegular() && e.Kind != abi.KindHeaderDir:
		// Where the links on its way lead (a stub behind a soname link, the real path) is told by
		// the walk that opens it: what is reported is the file checked and loaded, however another
		// user re-points the links meanwhile. The open cannot block: a FIFO swapped in since the
		// stat is refused.
		// A Windows host's paths (guestpath) follow no link that leads out.
		if c.File, now, reached, err = sandboxfs.OpenReached(dir.Root, dir.Path, rel, fi, !g.Paths.Windows()); err != nil {
			if len(reached.Links) > 0 {
				return nil, fmt.Errorf("%s: %v", reached, unwrapPath(err))
			}
			return nil, unwrapPath(err)
		}
	case !reached.Out:
		if _, r, err := sandboxfs.Follow(dir.Path, rel); err == nil {
			reached = r
		}
	}
	c.Links = reached.Links
	if len(reached.Links) > 0 {
		c.Real = reached.Path
	}
	if loadermodel.IsStub(reached.Path) {
		c.Close()
		return nil, fmt.Errorf("%s: %w", reached, errStub)
	}
	if e.Kind == abi.KindHeaderDir {
		if !fi.IsDir() {
			return nil, errors.New("not a directory")
		}
		for _, name := range e.FileNames(plat) {
			if hf, _, err := g.stat(dir, rel+"/"+name); err == nil && hf.Mode().IsRegular() {
				return c, nil
			}
		}
		return nil, errors.New("holds none of " + strings.Join(e.FileNames(plat), ", "))
	}
	if !fi.Mode().IsRegular() {
		if len(reached.Links) > 0 {
			return nil, fmt.Errorf("%s: not a regular file (%s)", reached, fi.Mode().Type())
		}
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if isJudged && !keep {
		c.Needs = verdict.needs
		return c, verdict.err
	}
	// The checks read the open file, which is what a load maps: it must be the file stat'ed.
	if !os.SameFile(now, fi) {
		c.Close()
		return nil, errors.New("changed while it was being checked")
	}
	if c.Needs, err = checkContentOnce(c.File, now, e, plat); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// checked holds CheckContent's verdicts of this process, by the file's identity and its change time:
// a file written since has another ctime, which the kernel sets and no user can, so a verdict is
// reused only for the very content it judged. Re-validating a cached answer is then one open and
// one fstat, where reading its ELF headers again was a fifth of a warm find of every library.
// It is emptied when it holds maxChecked verdicts: a long-lived process whose files keep changing
// would otherwise keep every old one.
var (
	checked  sync.Map // contentKey -> contentVerdict
	nChecked atomic.Int64
)

const maxChecked = 4096

type contentKey struct {
	id    fileID
	entry *catalog.Entry // the declared names a DT_SONAME is judged against
	plat  abi.Platform
}

type contentVerdict struct {
	needs binfmt.Needs
	err   error
}

// checkContentOnce is CheckContent, remembered for the open file f that fi (its fstat) describes.
func checkContentOnce(f *os.File, fi fs.FileInfo, e *catalog.Entry, plat abi.Platform) (binfmt.Needs, error) {
	id, ok := identify(fi)
	if !ok {
		return CheckContent(f, fi, e, plat)
	}
	if v, ok := judged(fi, e, plat); ok {
		return v.needs, v.err
	}
	needs, err := CheckContent(f, fi, e, plat)
	if nChecked.Add(1) > maxChecked {
		checked.Clear()
		nChecked.Store(1)
	}
	checked.Store(contentKey{id, e, plat}, contentVerdict{needs, err})
	return needs, err
}

// judged is the verdict this process gave the content fi describes, if it gave one.
func judged(fi fs.FileInfo, e *catalog.Entry, plat abi.Platform) (contentVerdict, bool) {
	id, ok := identify(fi)
	if !ok {
		return contentVerdict{}, false
	}
	v, ok := checked.Load(contentKey{id, e, plat})
	if !ok {
		return contentVerdict{}, false
	}
	return v.(contentVerdict), true
}

// stat stats rel inside dir as the step saw it (sandboxfs.StatIn), and records what it saw:
// validation's verdict depends on it.
func (g *Granted) stat(dir *Dir, rel string) (fs.FileInfo, sandboxfs.Reached, error) {
	fi, reached, seen, err := sandboxfs.StatIn(dir.Root, dir.Path, rel)
	g.Rec.Add(observe.Observation{Root: dir.Path, Path: path.Clean(rel), What: observe.Stat, Seen: seen})
	return fi, reached, err
}

// OpenSystem opens and checks a file the system loader would load, as Open does a step's candidate
// (the loader's search is no step's grant, so there is no directory to confine it to).
func OpenSystem(p string, e *catalog.Entry, plat abi.Platform) (*File, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, unwrapPath(err)
	}
	c := &File{Host: p, File: f}
	if c.Info, err = f.Stat(); err != nil || !c.Info.Mode().IsRegular() {
		c.Close()
		return nil, errors.New("not a regular file")
	}
	if c.Needs, err = CheckContent(f, c.Info, e, plat); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// CheckContent refuses what would not work as e's kind on plat: the loader's own checks for
// libraries and binaries (format, class, machine, type), the magic of archives and bitcode, and a
// shared object that is not the library declared (another DT_SONAME) or is an executable. For an
// ELF shared object it also returns what it needs of the loader.
func CheckContent(f *os.File, fi fs.FileInfo, e *catalog.Entry, plat abi.Platform) (binfmt.Needs, error) {
	var magic [4]byte
	n, _ := f.ReadAt(magic[:], 0)
	head := string(magic[:n])
	switch e.Kind {
	case abi.KindStaticLib:
		var ar [8]byte
		if n, _ := f.ReadAt(ar[:], 0); string(ar[:n]) != "!<arch>\n" {
			return binfmt.Needs{}, errors.New("not an ar archive")
		}
		return binfmt.Needs{}, nil
	case abi.KindBitcode:
		if head != "BC\xc0\xde" && head != "\xde\xc0\x17\x0b" {
			return binfmt.Needs{}, errors.New("not LLVM bitcode")
		}
		return binfmt.Needs{}, nil
	case abi.KindBinary:
		if plat.OS == "windows" {
			lower := strings.ToLower(fi.Name())
			if strings.HasSuffix(lower, ".bat") || strings.HasSuffix(lower, ".cmd") {
				return binfmt.Needs{}, nil
			}
			return binfmt.Needs{}, checkPE(f, plat, false)
		}
		if fi.Mode()&0o111 == 0 {
			return binfmt.Needs{}, errors.New("not executable")
		}
		if strings.HasPrefix(head, "#!") {
			return binfmt.Needs{}, nil
		}
		_, err := checkELF(f, plat, binfmt.TypeExec, binfmt.TypeDyn)
		return binfmt.Needs{}, err
	}
	if plat.OS == "windows" {
		return binfmt.Needs{}, checkPE(f, plat, true)
	}
	ef, err := checkELF(f, plat, binfmt.TypeDyn)
	if err != nil {
		return binfmt.Needs{}, err
	}
	needs, err := ef.Needs()
	switch {
	case err != nil:
		return needs, errors.New("unreadable dynamic section: " + strings.TrimPrefix(err.Error(), "elf: "))
	case needs.PIE:
		return needs, errors.New("a position-independent executable, not a shared library (dlopen refuses those)")
	case needs.Soname != "" && !slices.Contains(e.FileNames(plat), needs.Soname):
		return needs, fmt.Errorf("its DT_SONAME is %q, not one of the names declared for %q (%s)", needs.Soname, e.Name, strings.Join(e.FileNames(plat), ", "))
	}
	return needs, nil
}

// checkELF refuses what the loader would refuse: not ELF, another class or machine, another type.
func checkELF(r io.ReaderAt, plat abi.Platform, types ...binfmt.Type) (*binfmt.ELF, error) {
	ef, err := binfmt.NewELF(r)
	if err != nil {
		return nil, errors.New("not an ELF file: " + strings.TrimPrefix(err.Error(), "elf: "))
	}
	want := binfmt.MachineOf(plat.Arch)
	switch {
	case ef.Class != binfmt.Class64:
		return nil, fmt.Errorf("a %s file: the process is 64-bit", ef.Class)
	case want != 0 && ef.Machine != want:
		return nil, fmt.Errorf("built for %s, not %s", ef.Machine, plat.Arch)
	case !slices.Contains(types, ef.Type):
		if len(types) == 1 && types[0] == binfmt.TypeDyn {
			return nil, fmt.Errorf("not a shared object (%s)", ef.Type)
		}
		return nil, fmt.Errorf("not an executable (%s)", ef.Type)
	}
	return ef, nil
}

// checkPE refuses a file Windows would not load on plat: not PE, another machine, an EXE for a DLL.
func checkPE(r io.ReaderAt, plat abi.Platform, dll bool) error {
	pf, err := binfmt.ReadPE(r)
	if err != nil {
		return errors.New("not a PE file: " + err.Error())
	}
	want := binfmt.PEMachineOf(plat.Arch)
	switch {
	case want != 0 && pf.Machine != want:
		return fmt.Errorf("built for PE machine %#x, not %s", pf.Machine, plat.Arch)
	case dll && !pf.DLL:
		return errors.New("not a DLL")
	}
	return nil
}
