// Package sitepackages finds the site-packages directories the wheels step searches, without running
// Python: configured directories, $PATHFINDER_SITE_PACKAGES, then the Pythons that would run
// ($VIRTUAL_ENV's venv, $CONDA_PREFIX's, the python3 on PATH) with their directories and the user
// site in the order CPython's site module adds them. Relative paths are never resolved against the
// working directory.
package sitepackages

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
)

// Layout is where a Python installation keeps its packages on one OS. A Unix prefix has
// lib/python3.X/site-packages and bin/python3; a Windows one has Lib\site-packages and python.exe
// at the prefix (Scripts\python.exe in a venv), and the user site is
// %APPDATA%\Python\Python3XY\site-packages. The layout is a parameter so that tests lay out either
// on any host.
type Layout struct{ Windows bool }

// Host is the layout of the OS this process runs on.
var Host = Layout{Windows: runtime.GOOS == "windows"}

// Site is a site-packages directory discovery found: searched, or left out as the Python that would
// run leaves it out.
type Site struct {
	Dir  string
	From string // where it comes from: "$VIRTUAL_ENV's venv", "the user site", ...
	Off  string // why it is not searched; "" when it is
}

// Searched is the directories of sites that are searched, in order.
func Searched(sites []Site) []string {
	var out []string
	for _, s := range sites {
		if s.Off == "" {
			out = append(out, s.Dir)
		}
	}
	return out
}

// Discover returns the site-packages directories in search order, and those Python's own rules
// leave out: configured, $PATHFINDER_SITE_PACKAGES, then each Python that would run — the venv
// $VIRTUAL_ENV names, the conda env $CONDA_PREFIX names, the python3 (Windows: python.exe) on PATH —
// with its site-packages in the order its site module adds them (python.sites); the first of them
// decides where the user site goes, or that it is off; with none, it comes last. Only existing
// directories are kept, each once; relative paths are never resolved against the working
// directory. What discovery looked at is added to rec: a new venv is a new answer.
func (py Layout) Discover(configured []string, getenv func(string) string, rec *observe.Recorder) []Site {
	var sites []Site
	for _, d := range configured {
		sites = append(sites, Site{Dir: d, From: "search.site_packages"})
	}
	for _, d := range filepath.SplitList(getenv("PATHFINDER_SITE_PACKAGES")) {
		sites = append(sites, Site{Dir: d, From: "$PATHFINDER_SITE_PACKAGES"})
	}
	user := py.userSites(getenv, rec)
	decided := false
	for _, p := range py.pythons(getenv, rec) {
		sites = append(sites, p.sites(user, !decided)...)
		decided = true
	}
	if !decided {
		sites = append(sites, user...)
	}
	return kept(sites, rec)
}

// kept is sites without duplicates, relative paths and directories that do not exist; a directory
// left out in one place but searched in another is searched.
func kept(sites []Site, rec *observe.Recorder) []Site {
	searched := map[string]bool{}
	for _, s := range sites {
		if s.Off == "" {
			searched[filepath.Clean(s.Dir)] = true
		}
	}
	seen := map[string]bool{}
	var out []Site
	for _, s := range sites {
		if s.Dir == "" || !filepath.IsAbs(s.Dir) {
			continue
		}
		s.Dir = filepath.Clean(s.Dir)
		if seen[s.Dir] || s.Off != "" && searched[s.Dir] {
			continue
		}
		seen[s.Dir] = true
		if fi, err := rec.Stat(s.Dir); err == nil && fi.IsDir() {
			out = append(out, s)
		}
	}
	return out
}

// python is a Python installation or venv as its site module (CPython's Lib/site.py) sees it.
type python struct {
	from string   // what it is: "$VIRTUAL_ENV's venv", "/usr/bin/python3 on PATH"
	own  []string // its site-packages: the venv's, or the installation's
	cfg  string   // a venv's pyvenv.cfg; "" for an installation
	// system is a venv's include-system-site-packages: its base installation's site-packages (base)
	// come after its own, and the user site stays on.
	system bool
	base   []string
}

// sites is p's site-packages in the order site.py adds them, the user site included where p decides
// it: a venv's own, then, with system site packages, the user site and the base installation's
// (without, Python turns the user site off); an installation's after the user site (PEP 370).
func (p python) sites(user []Site, decides bool) []Site {
	own := label(p.own, p.from)
	base := label(p.base, "the base Python of "+p.from+", as "+p.cfg+" includes the system site packages")
	switch {
	case !decides:
		return slices.Concat(own, base)
	case p.cfg == "":
		return slices.Concat(user, own)
	case !p.system:
		off := slices.Clone(user)
		for i := range off {
			if off[i].Off == "" {
				off[i].Off = "Python leaves the user site out of a venv without system site packages (" + p.cfg + ")"
			}
		}
		return slices.Concat(own, off)
	}
	return slices.Concat(own, user, base)
}

// label is dirs as sites, each from from.
func label(dirs []string, from string) []Site {
	out := make([]Site, len(dirs))
	for i, d := range dirs {
		out[i] = Site{Dir: d, From: from}
	}
	return out
}

// pythons are the Pythons that would run, in the order they count: the venv $VIRTUAL_ENV names, the
// conda env $CONDA_PREFIX names, the python3 on PATH. One without site-packages counts for nothing.
func (py Layout) pythons(getenv func(string) string, rec *observe.Recorder) []python {
	var out []python
	if venv := getenv("VIRTUAL_ENV"); venv != "" {
		out = append(out, py.atPrefix(venv, "$VIRTUAL_ENV's venv", rec))
	}
	if conda := getenv("CONDA_PREFIX"); conda != "" {
		out = append(out, py.atPrefix(conda, "$CONDA_PREFIX's Python", rec))
	}
	if exe := py.lookPython(getenv("PATH"), rec); exe != "" {
		out = append(out, py.interpreter(exe, exe+" on PATH", getenv, rec))
	}
	return slices.DeleteFunc(out, func(p python) bool { return len(p.own) == 0 })
}

// atPrefix is the Python whose sys.prefix is prefix: a venv when its pyvenv.cfg is there, else an
// installation.
func (py Layout) atPrefix(prefix, from string, rec *observe.Recorder) python {
	if p, ok := py.venv(prefix, from, rec, filepath.Join(prefix, "pyvenv.cfg")); ok {
		return p
	}
	return python{from: from, own: py.PrefixSites(prefix, rec)}
}

// venv is the venv at prefix when the first of cfgs (where site.py looks for pyvenv.cfg) is there.
func (py Layout) venv(prefix, from string, rec *observe.Recorder, cfgs ...string) (python, bool) {
	for _, cfg := range cfgs {
		home, system, ok := readPyvenvCfg(cfg, rec)
		if !ok {
			continue
		}
		p := python{from: from, own: py.PrefixSites(prefix, rec), cfg: cfg, system: system}
		if system && filepath.IsAbs(home) {
			p.base = py.installSites(home, rec)
		}
		return p, true
	}
	return python{}, false
}

// readPyvenvCfg reads a venv's pyvenv.cfg as site.py does: key = value lines, keys case-insensitive;
// home is the base interpreter's directory, and the system site packages are included unless
// include-system-site-packages says other than true (any case).
func readPyvenvCfg(p string, rec *observe.Recorder) (home string, system, ok bool) {
	rec.Stat(p)
	f, fi, err := sandboxfs.Open(p)
	if err != nil {
		return "", false, false
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return "", false, false
	}
	system = true
	for sc := bufio.NewScanner(f); sc.Scan(); {
		key, value, found := strings.Cut(sc.Text(), "=")
		if !found {
			continue
		}
		switch value = strings.TrimSpace(value); strings.ToLower(strings.TrimSpace(key)) {
		case "include-system-site-packages":
			system = strings.ToLower(value) == "true"
		case "home":
			home = value
		}
	}
	return home, system, true
}

// installSites is the site-packages of the Python installation whose interpreter is in bin: the
// prefix above it on Unix (with Debian's dist-packages), bin itself on Windows.
func (py Layout) installSites(bin string, rec *observe.Recorder) []string {
	if py.Windows {
		return py.PrefixSites(bin, rec)
	}
	prefix := filepath.Dir(bin)
	sites := py.PrefixSites(prefix, rec)
	// Debian's Python, told by its lib/python3/dist-packages, keeps packages in dist-packages, in
	// the order its site.py lists them: /usr/local/lib/python3.X, /usr/lib/python3, /usr/lib/python3.X.
	if d := filepath.Join(prefix, "lib", "python3", "dist-packages"); fileExists(d, rec) {
		sites = slices.Concat(sites, versioned(filepath.Join(prefix, "local", "lib"), "dist-packages", rec),
			[]string{d}, versioned(filepath.Join(prefix, "lib"), "dist-packages", rec))
	}
	return sites
}

// userSites is the user site: $PYTHONUSERBASE, else ~/.local (Unix) or %APPDATA%\Python (Windows);
// off when $PYTHONNOUSERSITE turns it off.
func (py Layout) userSites(getenv func(string) string, rec *observe.Recorder) []Site {
	sites := label(py.userDirs(getenv, rec), "the user site")
	if v := getenv("PYTHONNOUSERSITE"); noUserSite(v) {
		for i := range sites {
			sites[i].Off = "$PYTHONNOUSERSITE=" + v + " turns the user site off"
		}
	}
	return sites
}

// noUserSite is whether a PYTHONNOUSERSITE of v turns the user site off, as CPython reads the
// variable (_Py_get_env_flag): set, and not a decimal integer 0 ("0", "00", " -0").
func noUserSite(v string) bool {
	if v == "" {
		return false
	}
	n, err := strconv.Atoi(strings.TrimLeft(v, " \t\n\v\f\r"))
	return err != nil || n != 0
}

// userDirs is the user site's directories, one a Python version, newest first.
func (py Layout) userDirs(getenv func(string) string, rec *observe.Recorder) []string {
	base := getenv("PYTHONUSERBASE")
	if !py.Windows {
		if home := getenv("HOME"); home != "" {
			if base == "" {
				base = filepath.Join(home, ".local")
			}
			return py.PrefixSites(base, rec)
		}
		return nil
	}
	if base == "" {
		if appdata := getenv("APPDATA"); appdata != "" {
			base = filepath.Join(appdata, "Python")
		}
	}
	if !filepath.IsAbs(base) {
		return nil
	}
	// One Python3XY directory per Python version, newest first.
	entries, err := os.ReadDir(base)
	rec.Add(observe.Observation{Path: base, What: observe.Dir, Seen: observe.DirSeen(entryNames(entries), err)})
	var sites []string
	for _, e := range entries {
		if len(e.Name()) > len("Python3") && strings.EqualFold(e.Name()[:len("Python3")], "Python3") {
			site := filepath.Join(base, e.Name(), "site-packages")
			if fi, err := rec.Stat(site); err == nil && fi.IsDir() {
				sites = append(sites, site)
			}
		}
	}
	sort.SliceStable(sites, func(i, j int) bool {
		return leadingNumber(filepath.Base(filepath.Dir(sites[i]))[len("Python3"):]) > leadingNumber(filepath.Base(filepath.Dir(sites[j]))[len("Python3"):])
	})
	return sites
}

// PrefixSites lists a prefix's site-packages: <prefix>/lib/python3.*/site-packages, newest Python
// first, or <prefix>\Lib\site-packages on Windows.
func (py Layout) PrefixSites(prefix string, rec *observe.Recorder) []string {
	if !filepath.IsAbs(prefix) {
		return nil
	}
	if py.Windows {
		site := filepath.Join(prefix, "Lib", "site-packages")
		if fi, err := rec.Stat(site); err == nil && fi.IsDir() {
			return []string{site}
		}
		return nil
	}
	return versioned(filepath.Join(prefix, "lib"), "site-packages", rec)
}

// versioned lists lib/python3.X/leaf, newest Python first.
func versioned(lib, leaf string, rec *observe.Recorder) []string {
	entries, err := os.ReadDir(lib)
	rec.Add(observe.Observation{Path: lib, What: observe.Dir, Seen: observe.DirSeen(entryNames(entries), err)})
	var matches []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "python3.") {
			site := filepath.Join(lib, e.Name(), leaf)
			if fi, err := rec.Stat(site); err == nil && fi.IsDir() {
				matches = append(matches, site)
			}
		}
	}
	sort.Slice(matches, func(i, j int) bool { return pyMinor(matches[i]) > pyMinor(matches[j]) })
	return matches
}

func pyMinor(site string) int {
	return leadingNumber(strings.TrimPrefix(filepath.Base(filepath.Dir(site)), "python3."))
}

// leadingNumber is the number v starts with (0 for none).
func leadingNumber(v string) int {
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// lookPython finds the Python interpreter on PATH: python3 (Unix), python.exe then python3.exe
// (Windows).
func (py Layout) lookPython(pathEnv string, rec *observe.Recorder) string {
	if !py.Windows {
		return lookPath("python3", pathEnv, rec)
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		for _, name := range []string{"python.exe", "python3.exe"} {
			p := filepath.Join(dir, name)
			if fi, err := rec.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p
			}
		}
	}
	return ""
}

// interpreter is the Python at exe (from says what it is), found without running it: a venv is told by its pyvenv.cfg;
// otherwise its installation is the one of the real binary. A pyenv shim stands for the version
// pyenv would run (pyenvPython).
func (py Layout) interpreter(exe, from string, getenv func(string) string, rec *observe.Recorder) python {
	bin := filepath.Dir(exe)
	venv := filepath.Dir(bin)
	if p, ok := py.venv(venv, "the venv of "+from, rec, filepath.Join(bin, "pyvenv.cfg"), filepath.Join(venv, "pyvenv.cfg")); ok {
		return p
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return python{}
	}
	rec.Stat(real)
	if !py.Windows && isScript(real) {
		// A shim (pyenv, asdf): its prefix is not beside it.
		if p := py.pyenvPython(exe, getenv, rec); p != "" {
			return py.interpreter(p, p+", pyenv's for "+from, getenv, rec)
		}
		return python{}
	}
	return python{from: from, own: py.installSites(filepath.Dir(real), rec)}
}

func isScript(p string) bool {
	f, _, err := sandboxfs.Open(p) // never a FIFO put where python3 was
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := bufio.NewReader(f).Peek(2)
	return string(b) == "#!"
}

func fileExists(p string, rec *observe.Recorder) bool {
	_, err := rec.Stat(p)
	return err == nil
}

func entryNames(entries []os.DirEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name()
	}
	return out
}

// lookPath finds an executable in PATH, skipping relative entries (never the working directory).
func lookPath(name, pathEnv string, rec *observe.Recorder) string {
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := rec.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// pyenvPython is the python3 a pyenv shim at exe would run, found as pyenv finds it but without
// running anything: the version named by $PYENV_VERSION, else by the nearest .python-version file
// from $PYENV_DIR (default: the working directory) up, else by $PYENV_ROOT/version; each of those
// may list several, the first that has python3 wins, and "system" means the next python3 on PATH
// after the shims. "" when exe is no pyenv shim or the version has no python3.
func (py Layout) pyenvPython(exe string, getenv func(string) string, rec *observe.Recorder) string {
	shims := filepath.Dir(exe)
	root := getenv("PYENV_ROOT")
	if root == "" {
		root = filepath.Dir(shims)
	}
	if py.Windows || filepath.Base(shims) != "shims" || filepath.Clean(root) != filepath.Dir(shims) {
		return ""
	}
	for _, v := range pyenvVersions(root, getenv, rec) {
		if v == "system" {
			if p := lookPath("python3", pathAfter(getenv("PATH"), shims), rec); p != "" {
				return p
			}
			continue
		}
		p := filepath.Join(root, "versions", v, "bin", "python3")
		if fi, err := rec.Stat(p); err == nil && fi.Mode()&0o111 != 0 && !strings.ContainsAny(v, "/\\") {
			return p
		}
	}
	return ""
}

// pyenvVersions is the list of versions pyenv would try, in order.
func pyenvVersions(root string, getenv func(string) string, rec *observe.Recorder) []string {
	if v := getenv("PYENV_VERSION"); v != "" {
		return strings.Split(v, ":")
	}
	dir := getenv("PYENV_DIR")
	if dir == "" {
		// pyenv looks from the working directory up; the shell's $PWD says which it is, and is
		// recorded, so that a cached answer is not used from another directory.
		dir = getenv("PWD")
	}
	for dir != "" && filepath.IsAbs(dir) {
		if vs := readVersionFile(filepath.Join(dir, ".python-version"), rec); len(vs) > 0 {
			return vs
		}
		if parent := filepath.Dir(dir); parent != dir {
			dir = parent
		} else {
			break
		}
	}
	if vs := readVersionFile(filepath.Join(root, "version"), rec); len(vs) > 0 {
		return vs
	}
	return []string{"system"}
}

// readVersionFile reads a pyenv version file: version names separated by white space, # comments.
func readVersionFile(p string, rec *observe.Recorder) []string {
	data, err := os.ReadFile(p)
	rec.Add(observe.Observation{Path: p, What: observe.Stat, Seen: observe.StatSeen(os.Stat(p))})
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		out = append(out, strings.Fields(line)...)
	}
	return out
}

// pathAfter is the part of the PATH list after the entry dir.
func pathAfter(pathEnv, dir string) string {
	list := filepath.SplitList(pathEnv)
	for i, d := range list {
		if filepath.Clean(d) == dir {
			return strings.Join(list[i+1:], string(filepath.ListSeparator))
		}
	}
	return pathEnv
}
