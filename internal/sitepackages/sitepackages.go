// Package sitepackages finds the site-packages directories the wheels step searches, without running
// Python: configured directories, $PATHFINDER_SITE_PACKAGES, $VIRTUAL_ENV, $CONDA_PREFIX, the python3
// (Windows: python.exe) on PATH with its venv or prefix (a pyenv shim stands for the version pyenv
// would run), and the user site. Relative paths are never resolved against the working directory.
package sitepackages

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// Layout is where a Python installation keeps its packages on one OS. A Unix prefix has
// lib/python3.X/site-packages and bin/python3; a Windows one has Lib\site-packages and python.exe
// at the prefix (Scripts\python.exe in a venv), and the user site is
// %APPDATA%\Python\Python3XY\site-packages. The layout is a parameter so that tests lay out either
// on any host.
type Layout struct{ Windows bool }

// Host is the layout of the OS this process runs on.
var Host = Layout{Windows: runtime.GOOS == "windows"}

// Discover returns the site-packages directories in search order: configured,
// $PATHFINDER_SITE_PACKAGES, $VIRTUAL_ENV, $CONDA_PREFIX, the python3 (Windows: python.exe) on PATH,
// the user site. Only existing directories are kept, each once; relative paths are never resolved
// against the working directory. What discovery looked at is added to rec: a new venv is a new answer.
func (py Layout) Discover(configured []string, getenv func(string) string, rec *observe.Recorder) []string {
	var dirs []string
	dirs = append(dirs, configured...)
	dirs = append(dirs, filepath.SplitList(getenv("PATHFINDER_SITE_PACKAGES"))...)
	if venv := getenv("VIRTUAL_ENV"); venv != "" {
		dirs = append(dirs, py.PrefixSites(venv, rec)...)
	}
	if conda := getenv("CONDA_PREFIX"); conda != "" {
		dirs = append(dirs, py.PrefixSites(conda, rec)...)
	}
	if exe := py.lookPython(getenv("PATH"), rec); exe != "" {
		dirs = append(dirs, py.pythonSites(exe, getenv, rec)...)
	}
	dirs = append(dirs, py.userSites(getenv, rec)...)
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if seen[d] {
			continue
		}
		seen[d] = true
		if fi, err := rec.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// userSites is the user site: $PYTHONUSERBASE, else ~/.local (Unix) or %APPDATA%\Python (Windows).
func (py Layout) userSites(getenv func(string) string, rec *observe.Recorder) []string {
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
	lib := filepath.Join(prefix, "lib")
	entries, err := os.ReadDir(lib)
	rec.Add(observe.Observation{Path: lib, What: observe.Dir, Seen: observe.DirSeen(entryNames(entries), err)})
	var matches []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "python3") {
			site := filepath.Join(lib, e.Name(), "site-packages")
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

// pythonSites derives the site-packages of the interpreter at exe without running it: a venv is told
// by the pyvenv.cfg beside its bin (Scripts) directory; otherwise the prefix is two levels above the
// real binary on Unix, and the binary's own directory on Windows. A pyenv shim stands for the
// version pyenv would run (pyenvPython).
func (py Layout) pythonSites(exe string, getenv func(string) string, rec *observe.Recorder) []string {
	bin := filepath.Dir(exe)
	if cfg := filepath.Join(filepath.Dir(bin), "pyvenv.cfg"); fileExists(cfg, rec) {
		return py.PrefixSites(filepath.Dir(bin), rec)
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return nil
	}
	rec.Stat(real)
	if py.Windows {
		return py.PrefixSites(filepath.Dir(real), rec)
	}
	if isScript(real) {
		// A shim (pyenv, asdf): its prefix is not beside it.
		if p := py.pyenvPython(exe, getenv, rec); p != "" {
			return py.pythonSites(p, getenv, rec)
		}
		return nil
	}
	prefix := filepath.Dir(filepath.Dir(real))
	sites := py.PrefixSites(prefix, rec)
	// Debian's system Python keeps packages in dist-packages.
	if d := filepath.Join(prefix, "lib", "python3", "dist-packages"); fileExists(d, rec) {
		sites = append(sites, d)
	}
	return sites
}

func isScript(p string) bool {
	f, _, err := observe.Open(p) // never a FIFO put where python3 was
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
