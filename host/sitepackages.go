package host

import (
	"bufio"
	"github.com/pathfinder-dev/pathfinder/host/internal/observe"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// sitePackages returns the site-packages directories for the wheels step, in search order: configured,
// $PATHFINDER_SITE_PACKAGES, $VIRTUAL_ENV, $CONDA_PREFIX, the python3 on PATH, the user site. Only
// existing directories are kept, each once; relative paths are never resolved against the working
// directory.
// What discovery looked at is added to rec: a new venv is a new answer.
func (f *Finder) sitePackages(rec *observe.Recorder) []string {
	f.sitesOnce.Do(func() {
		own := &observe.Recorder{}
		f.sites = discoverSitePackages(f.cfg.sitePackages, own.Getenv(f.opts.getenv), own)
		f.sitesSeen = own.List()
	})
	rec.AddAll(f.sitesSeen)
	return f.sites
}

// SitePackages is what sitePackages discovered, for doctor and explain.
func (f *Finder) SitePackages() []string { return append([]string(nil), f.sitePackages(nil)...) }

func discoverSitePackages(configured []string, getenv func(string) string, rec *observe.Recorder) []string {
	var dirs []string
	dirs = append(dirs, configured...)
	dirs = append(dirs, filepath.SplitList(getenv("PATHFINDER_SITE_PACKAGES"))...)
	if venv := getenv("VIRTUAL_ENV"); venv != "" {
		dirs = append(dirs, prefixSites(venv, rec)...)
	}
	if conda := getenv("CONDA_PREFIX"); conda != "" {
		dirs = append(dirs, prefixSites(conda, rec)...)
	}
	if py := lookPath("python3", getenv("PATH"), rec); py != "" {
		dirs = append(dirs, pythonSites(py, rec)...)
	}
	if home := getenv("HOME"); home != "" {
		base := getenv("PYTHONUSERBASE")
		if base == "" {
			base = filepath.Join(home, ".local")
		}
		dirs = append(dirs, prefixSites(base, rec)...)
	}
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

// prefixSites lists <prefix>/lib/python3.*/site-packages, newest Python first.
func prefixSites(prefix string, rec *observe.Recorder) []string {
	if !filepath.IsAbs(prefix) {
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
	v := strings.TrimPrefix(filepath.Base(filepath.Dir(site)), "python3.")
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// pythonSites derives the site-packages of the interpreter at py without running it: a venv is told
// by the pyvenv.cfg beside its bin directory; otherwise the prefix is two levels above the real binary.
func pythonSites(py string, rec *observe.Recorder) []string {
	bin := filepath.Dir(py)
	if cfg := filepath.Join(filepath.Dir(bin), "pyvenv.cfg"); fileExists(cfg, rec) {
		return prefixSites(filepath.Dir(bin), rec)
	}
	real, err := filepath.EvalSymlinks(py)
	if err != nil {
		return nil
	}
	rec.Stat(real)
	if isScript(real) {
		return nil // a shim (pyenv, asdf): its prefix is not beside it
	}
	prefix := filepath.Dir(filepath.Dir(real))
	sites := prefixSites(prefix, rec)
	// Debian's system Python keeps packages in dist-packages.
	if d := filepath.Join(prefix, "lib", "python3", "dist-packages"); fileExists(d, rec) {
		sites = append(sites, d)
	}
	return sites
}

func isScript(p string) bool {
	f, err := os.Open(p)
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
