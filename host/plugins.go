package host

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"debug/pe"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/host/internal/guestpath"
	"github.com/pathfinder-dev/pathfinder/host/internal/ldso"
	"github.com/pathfinder-dev/pathfinder/host/internal/observe"
	"github.com/pathfinder-dev/pathfinder/host/internal/wasm"
)

// module returns the compiled module of plugin p, compiling it on first use, and the entry to call
// in it ("" for a plugin file, which registers one search).
func (f *Finder) module(ctx context.Context, p *pluginConfig, rec *observe.Recorder) (*wasm.Module, string, error) {
	entry, isBuiltin := strings.CutPrefix(p.source, "builtin:")
	if !isBuiltin {
		entry = ""
		rec.Stat(p.source) // a changed plugin file is a changed search
	}
	f.mu.Lock()
	m := f.modules[p.name]
	f.mu.Unlock()
	if m != nil {
		return m, entry, nil
	}
	eng, err := f.wasmEngine()
	if err != nil {
		return nil, "", err
	}
	code, err := pluginCode(p)
	if err != nil {
		return nil, "", fmt.Errorf("pathfinder: plugin %q: %w", p.name, err)
	}
	if p.sha256 != "" {
		sum := sha256.Sum256(code)
		if got := hex.EncodeToString(sum[:]); got != p.sha256 {
			return nil, "", fmt.Errorf("pathfinder: plugin %q: %s has sha256 %s, but the config (%s) pins %s", p.name, p.source, got, p.definedIn, p.sha256)
		}
	}
	if m, err = eng.Load(ctx, p.name, code, p.memory); err != nil {
		return nil, "", err
	}
	if !isBuiltin { // a site plugin that wants more than it is granted is refused, not half-run
		if d, err := m.Describe(ctx, p.timeout); err != nil {
			return nil, "", err
		} else if d != nil {
			if probs := describeProblems(p, d, f.catalog); len(probs) > 0 {
				return nil, "", fmt.Errorf("pathfinder: plugin %q: %s", p.name, strings.Join(probs, "; "))
			}
		}
	}
	f.mu.Lock()
	f.modules[p.name] = m
	f.mu.Unlock()
	return m, entry, nil
}

func (f *Finder) wasmEngine() (*wasm.Engine, error) {
	f.engineOnce.Do(func() {
		f.ownEngine = true
		f.engine, f.engineErr = wasm.NewEngine(f.cacheDir)
		if f.engineErr != nil { // an unusable cache dir costs speed, never the search
			f.cacheDir = ""
			f.engine, f.engineErr = wasm.NewEngine("")
		}
	})
	return f.engine, f.engineErr
}

// granted is what one plugin call may see: the mounts and env for the runtime, the roots for the
// request, and notes on grants that were refused.
type granted struct {
	wasm   wasm.Grants
	roots  []abi.Root
	mounts []grantedDir
	notes  []string
	rec    *observe.Recorder // what validation looks at is recorded here too
	paths  guestpath.Map     // the host's path mapping (the zero value: a Unix host's identity)
	// deadline is the step's: the plugin's timeout from when the grants were made. Checking the
	// candidates is part of the step's cost, so a candidate met after it is not checked.
	deadline time.Time
}

type grantedDir struct {
	path  string // the host path
	root  *os.Root
	label string // found_via of what lies in it: foundVia
}

// grant resolves plugin p's env and read grants for library e, recording what it looks at in rec.
func (f *Finder) grant(p *pluginConfig, e *catalog.Entry, rec *observe.Recorder) (*granted, error) {
	return f.grantWith(p, e, rec, hostPaths, f.openRoot)
}

// grantWith is grant with the host's path mapping and its way of opening a granted directory as
// parameters: tests run a Windows host's mapping over fake trees on any host.
func (f *Finder) grantWith(p *pluginConfig, e *catalog.Entry, rec *observe.Recorder, paths guestpath.Map, openRoot func(string, *observe.Recorder) (*os.Root, error)) (*granted, error) {
	getenv := rec.Getenv(f.opts.getenv)
	g := &granted{wasm: wasm.Grants{Env: map[string]string{}, Record: rec}, rec: rec, paths: paths, deadline: time.Now().Add(p.timeout)}
	for _, name := range expand(p.env, e) {
		if v := getenv(name); v != "" {
			// A value holding an absolute host path is given in the guest's form (the same as the
			// host's on Unix): the plugin joins and checks it as it would a Unix path.
			gv, err := paths.EnvToGuest(v)
			if err != nil {
				g.note(fmt.Sprintf("not granted $%s: %v", name, err))
				continue
			}
			g.wasm.Env[name] = gv
		}
	}
	add := func(dir, role string) {
		if dir == "" {
			return
		}
		// The guest sees dir at its guest path; the host keeps the canonical host form (cleaned,
		// without a \\?\ prefix), which is what candidates map back to. A relative path is refused
		// here, never resolved against the working directory.
		guest, err := paths.ToGuest(dir)
		if err == nil {
			dir, err = paths.ToHost(guest)
		}
		if err != nil {
			g.note(fmt.Sprintf("not granted (%s): %v", role, err))
			return
		}
		if slices.ContainsFunc(g.mounts, func(m grantedDir) bool { return m.path == dir }) {
			g.roots = append(g.roots, abi.Root{Path: guest, Role: role})
			return
		}
		if why := overBroad(paths, dir); why != "" {
			g.note(fmt.Sprintf("not granted %s (%s): %s", dir, role, why))
			return
		}
		root, err := openRoot(dir, rec)
		if err != nil {
			g.note(fmt.Sprintf("not granted %s (%s): %v", dir, role, err))
			return
		}
		g.mounts = append(g.mounts, grantedDir{dir, root, rootLabel(role, p.name)})
		g.wasm.Mounts = append(g.wasm.Mounts, wasm.Mount{Path: dir, Guest: guest, Root: root})
		g.roots = append(g.roots, abi.Root{Path: guest, Role: role})
	}
	if slices.Contains(p.caps, abi.CapabilitySystemResolve) {
		g.wasm.SystemResolve = func(name string) (string, error) {
			p, _, err := f.systemResolve(name, rec) // the note is the @canary-roots grant's
			if err != nil {
				return "", err
			}
			return paths.ToGuest(p)
		}
	}
	for _, r := range p.read {
		switch {
		case r == grantCanaryRoots:
			for _, c := range e.CanaryAnchors {
				p, note, err := f.systemResolve(c, rec)
				if note != "" {
					g.note(note)
				}
				if err != nil {
					g.note(fmt.Sprintf("canary %q: %v", c, err))
					continue
				}
				if root, ok := hostToolkitRoot(paths, p); ok {
					add(root, roleCanaryRoot)
				}
			}
		case r == grantSitePackages:
			for _, s := range f.sitePackages(rec) {
				add(s, abi.RoleSitePackages)
			}
		case r == grantInstallRoots:
			for _, v := range e.InstallRootEnvVars {
				add(getenv(v), "env:"+v)
			}
		case strings.HasPrefix(r, "$"):
			add(getenv(r[1:]), "env:"+r[1:])
		default:
			add(r, "")
		}
	}
	return g, nil
}

// roleCanaryRoot marks a toolkit root derived from where the loader finds a canary library.
const roleCanaryRoot = "canary-root"

// note adds a line about the grants to the step's log, escaped: it may hold a directory's name.
func (g *granted) note(line string) { g.notes = append(g.notes, wasm.Printable(line)) }

// rootLabel is the found_via label of what lies in a directory granted in role to the step named
// step: cuda.pathfinder's label for the built-in roles, the variable's name for a directory a
// variable names, the step's name for a directory the config names.
func rootLabel(role, step string) string {
	switch role {
	case abi.RoleSitePackages:
		return "site-packages"
	case roleCanaryRoot:
		return "system-ctk-root"
	case "env:CONDA_PREFIX":
		return "conda"
	case "env:ProgramW6432", "env:ProgramFiles":
		return "ProgramFiles"
	}
	if v, ok := strings.CutPrefix(role, "env:"); ok {
		return v
	}
	return step
}

// foundVia is the found_via of the candidate p (a guest path) of the step named step: the label of
// the granted directory it lies in, whatever the plugin said, so that no plugin can claim another
// origin ("was-already-loaded-from-elsewhere"); the step's name for a path outside them all.
func (g *granted) foundVia(p, step string) string {
	if _, i := g.mountOf(p); i >= 0 {
		return g.mounts[i].label
	}
	return step
}

// tracePath is how the candidate p (a guest path) is shown: in host form, escaped. What is checked
// and loaded is p itself, never this.
func (g *granted) tracePath(p string) string {
	if h, err := g.paths.ToHost(p); err == nil {
		p = h
	}
	return wasm.Printable(p)
}

// overBroad says why the directory dir (host form) is not a directory a plugin may be granted: the
// whole file system, a whole Windows volume, or the kernel's and devices' files (/proc, /sys, /dev:
// the process's environment and memory are there). A symlink to one of them is judged by where it
// leads. "" for any other.
func overBroad(paths guestpath.Map, dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if g, err := paths.ToGuest(dir); err == nil && (g == "/" || guestpath.IsVolumeRoot(g)) {
		return "the whole file system is never granted: grant the directories the plugin searches"
	}
	if !paths.Windows() {
		for _, sys := range []string{"/proc", "/sys", "/dev"} {
			if dir == sys || strings.HasPrefix(dir, sys+"/") {
				return sys + " is never granted: it holds the process's and the kernel's state, not libraries"
			}
		}
	}
	return ""
}

func expand(list []string, e *catalog.Entry) []string {
	var out []string
	for _, s := range list {
		if s == grantInstallRoots {
			out = append(out, e.InstallRootEnvVars...)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// openRoot opens dir as a confined root once per Finder: symlinks inside it cannot lead out.
func (f *Finder) openRoot(dir string, rec *observe.Recorder) (*os.Root, error) {
	fi, err := rec.Stat(dir)
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.roots[dir]; ok {
		// Still the same directory? One deleted and made again (a rebuilt venv) is opened anew.
		if cur, err2 := r.Stat("."); err == nil && err2 == nil && os.SameFile(fi, cur) {
			return r, nil
		}
		r.Close()
		delete(f.roots, dir)
	}
	if err != nil {
		return nil, errors.Unwrap(err)
	}
	if !fi.IsDir() {
		return nil, errors.New("not a directory")
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	f.roots[dir] = r
	return r, nil
}

// guestOf is where the plugin sees the granted directory m.
func (g *granted) guestOf(m *grantedDir) string {
	gp, err := g.paths.ToGuest(m.path)
	if err != nil {
		return "" // never granted: grant maps every directory it mounts
	}
	return gp
}

// rootOf is the granted directory (in host form) that the guest path p is in, the innermost one.
func (g *granted) rootOf(p string) string {
	root, _ := g.mountOf(p)
	return root
}

// mountOf is rootOf, with the index of that directory in g.mounts (-1 for none).
func (g *granted) mountOf(p string) (string, int) {
	root, at, best := "", -1, -1
	for i := range g.mounts {
		m := &g.mounts[i]
		gm := g.guestOf(m)
		if gm != "" && strictlyUnder(p, gm) && len(gm) > best {
			root, at, best = m.path, i, len(gm)
		}
	}
	return root, at
}

// candidate is a file validation accepted, still open: what is loaded is this very file.
type candidate struct {
	host  string      // its host path: the path loaded and printed
	file  *os.File    // open; nil for a header directory
	info  fs.FileInfo // as validation saw it
	needs ldso.Needs  // what an ELF shared object asks of the loader
}

func (c *candidate) close() {
	if c.file != nil {
		c.file.Close()
	}
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

// check checks a candidate, the guest path p, before anything uses it: its host path (the path
// loaded and printed), or why it is refused.
func (g *granted) check(p string, e *catalog.Entry, plat abi.Platform) (host, why string) {
	c, why := g.open(p, e, plat)
	if why != "" {
		return "", why
	}
	c.close()
	return c.host, ""
}

// open is check that keeps the file open for what comes next: a load, a look at what it needs.
func (g *granted) open(p string, e *catalog.Entry, plat abi.Platform) (*candidate, string) {
	if !g.deadline.IsZero() && time.Now().After(g.deadline) {
		return nil, "not checked: the step's timeout had passed"
	}
	switch {
	case p == "":
		return nil, "empty path"
	case len(p) > 4096:
		return nil, "path longer than 4096 bytes"
	case strings.ContainsRune(p, 0):
		return nil, "path contains a NUL byte"
	case !utf8.ValidString(p):
		return nil, "path is not valid UTF-8"
	case wasm.Unprintable(p):
		return nil, "path contains a control character (a newline, an escape, a bidirectional override)"
	case !path.IsAbs(p):
		return nil, "not an absolute path"
	case path.Clean(p) != p:
		return nil, fmt.Sprintf("not a clean path (clean: %s)", path.Clean(p))
	case slices.Contains(strings.Split(p, "/"), "stubs"):
		return nil, "a stubs/ library: for linking only, never loaded"
	}
	_, i := g.mountOf(p)
	if i < 0 {
		return nil, "outside every directory granted to the step"
	}
	h, err := g.paths.ToHost(p) // on a Windows host, a name that has no host form is refused here
	if err != nil {
		return nil, err.Error()
	}
	dir := &g.mounts[i]
	rel := relTo(p, g.guestOf(dir))
	fi, err := g.stat(dir, rel)
	if err != nil {
		return nil, fmt.Sprintf("cannot stat inside %s: %v", dir.path, unwrapPath(err))
	}
	if e.Kind == abi.KindHeaderDir {
		if !fi.IsDir() {
			return nil, "not a directory"
		}
		for _, name := range e.FileNames(plat) {
			if hf, err := g.stat(dir, rel+"/"+name); err == nil && hf.Mode().IsRegular() {
				return &candidate{host: h, info: fi}, ""
			}
		}
		return nil, "holds none of " + strings.Join(e.FileNames(plat), ", ")
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Sprintf("not a regular file (%s)", fi.Mode().Type())
	}
	file, now, err := observe.OpenIn(dir.root, rel, fi) // a FIFO swapped in since the stat would block a plain open
	if err != nil {
		return nil, unwrapPath(err).Error()
	}
	c := &candidate{host: h, file: file, info: fi}
	// The checks read the open file, which is what a load maps: it must be the file stat'ed.
	if !os.SameFile(now, fi) {
		c.close()
		return nil, "changed while it was being checked"
	}
	var why string
	if c.needs, why = checkContent(file, fi, e, plat); why != "" {
		c.close()
		return nil, why
	}
	return c, ""
}

// stat stats rel inside dir, confined, and records what it saw: validation's verdict depends on it.
func (g *granted) stat(dir *grantedDir, rel string) (fs.FileInfo, error) {
	fi, err := dir.root.Stat(rel)
	g.rec.Add(observe.Observation{Root: dir.path, Path: path.Clean(rel), What: observe.Stat, Seen: observe.StatSeen(fi, err)})
	return fi, err
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkContent refuses what would not work as e's kind on plat: the loader's own checks for
// libraries and binaries (format, class, machine, type), the magic of archives and bitcode, and a
// shared object that is not the library declared (another DT_SONAME) or is an executable. For an
// ELF shared object it also returns what it needs of the loader.
func checkContent(f *os.File, fi fs.FileInfo, e *catalog.Entry, plat abi.Platform) (ldso.Needs, string) {
	var magic [4]byte
	n, _ := f.ReadAt(magic[:], 0)
	head := string(magic[:n])
	switch e.Kind {
	case abi.KindStaticLib:
		var ar [8]byte
		if n, _ := f.ReadAt(ar[:], 0); string(ar[:n]) != "!<arch>\n" {
			return ldso.Needs{}, "not an ar archive"
		}
		return ldso.Needs{}, ""
	case abi.KindBitcode:
		if head != "BC\xc0\xde" && head != "\xde\xc0\x17\x0b" {
			return ldso.Needs{}, "not LLVM bitcode"
		}
		return ldso.Needs{}, ""
	case abi.KindBinary:
		if plat.OS == "windows" {
			lower := strings.ToLower(fi.Name())
			if strings.HasSuffix(lower, ".bat") || strings.HasSuffix(lower, ".cmd") {
				return ldso.Needs{}, ""
			}
			return ldso.Needs{}, checkPE(f, plat, false)
		}
		if fi.Mode()&0o111 == 0 {
			return ldso.Needs{}, "not executable"
		}
		if strings.HasPrefix(head, "#!") {
			return ldso.Needs{}, ""
		}
		_, why := checkELF(f, plat, elf.ET_EXEC, elf.ET_DYN)
		return ldso.Needs{}, why
	}
	if plat.OS == "windows" {
		return ldso.Needs{}, checkPE(f, plat, true)
	}
	ef, why := checkELF(f, plat, elf.ET_DYN)
	if why != "" {
		return ldso.Needs{}, why
	}
	needs, err := ldso.ReadNeeds(ef)
	switch {
	case err != nil:
		return needs, "unreadable dynamic section: " + strings.TrimPrefix(err.Error(), "elf: ")
	case needs.PIE:
		return needs, "a position-independent executable, not a shared library (dlopen refuses those)"
	case needs.Soname != "" && !slices.Contains(e.FileNames(plat), needs.Soname):
		return needs, fmt.Sprintf("its DT_SONAME is %q, not one of the names declared for %q (%s)", needs.Soname, e.Name, strings.Join(e.FileNames(plat), ", "))
	}
	return needs, ""
}

// checkELF refuses what the loader would refuse: not ELF, another class or machine, another type.
func checkELF(r io.ReaderAt, plat abi.Platform, types ...elf.Type) (*elf.File, string) {
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, "not an ELF file: " + strings.TrimPrefix(err.Error(), "elf: ")
	}
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "ppc64le": elf.EM_PPC64, "riscv64": elf.EM_RISCV}[plat.Arch]
	switch {
	case ef.Class != elf.ELFCLASS64:
		return nil, fmt.Sprintf("a %s file: the process is 64-bit", ef.Class)
	case want != 0 && ef.Machine != want:
		return nil, fmt.Sprintf("built for %s, not %s", ef.Machine, plat.Arch)
	case !slices.Contains(types, ef.Type):
		if len(types) == 1 && types[0] == elf.ET_DYN {
			return nil, fmt.Sprintf("not a shared object (%s)", ef.Type)
		}
		return nil, fmt.Sprintf("not an executable (%s)", ef.Type)
	}
	return ef, ""
}

// checkPE refuses a file Windows would not load on plat: not PE, another machine, an EXE for a DLL.
func checkPE(r io.ReaderAt, plat abi.Platform, dll bool) string {
	pf, err := pe.NewFile(r)
	if err != nil {
		return "not a PE file: " + err.Error()
	}
	want := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[plat.Arch]
	switch {
	case want != 0 && pf.Machine != want:
		return fmt.Sprintf("built for PE machine %#x, not %s", pf.Machine, plat.Arch)
	case dll && pf.Characteristics&pe.IMAGE_FILE_DLL == 0:
		return "not a DLL"
	}
	return ""
}
