package host

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// sitePackages returns the site-packages directories for the wheels step, in search order: configured,
// $PATHFINDER_SITE_PACKAGES, $VIRTUAL_ENV, $CONDA_PREFIX, the python3 on PATH, the user site. Only
// existing directories are kept, each once; relative paths are never resolved against the working
// directory.
func (f *Finder) sitePackages() []string {
	f.sitesOnce.Do(func() { f.sites = discoverSitePackages(f.cfg.sitePackages, f.opts.getenv) })
	return f.sites
}

// SitePackages is what sitePackages discovered, for doctor and explain.
func (f *Finder) SitePackages() []string { return append([]string(nil), f.sitePackages()...) }

func discoverSitePackages(configured []string, getenv func(string) string) []string {
	var dirs []string
	dirs = append(dirs, configured...)
	dirs = append(dirs, filepath.SplitList(getenv("PATHFINDER_SITE_PACKAGES"))...)
	if venv := getenv("VIRTUAL_ENV"); venv != "" {
		dirs = append(dirs, prefixSites(venv)...)
	}
	if conda := getenv("CONDA_PREFIX"); conda != "" {
		dirs = append(dirs, prefixSites(conda)...)
	}
	if py := lookPath("python3", getenv("PATH")); py != "" {
		dirs = append(dirs, pythonSites(py)...)
	}
	if home := getenv("HOME"); home != "" {
		base := getenv("PYTHONUSERBASE")
		if base == "" {
			base = filepath.Join(home, ".local")
		}
		dirs = append(dirs, prefixSites(base)...)
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
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// prefixSites lists <prefix>/lib/python3.*/site-packages, newest Python first.
func prefixSites(prefix string) []string {
	if !filepath.IsAbs(prefix) {
		return nil
	}
	matches, _ := filepath.Glob(filepath.Join(prefix, "lib", "python3*", "site-packages"))
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
func pythonSites(py string) []string {
	bin := filepath.Dir(py)
	if cfg := filepath.Join(filepath.Dir(bin), "pyvenv.cfg"); fileExists(cfg) {
		return prefixSites(filepath.Dir(bin))
	}
	real, err := filepath.EvalSymlinks(py)
	if err != nil {
		return nil
	}
	if isScript(real) {
		return nil // a shim (pyenv, asdf): its prefix is not beside it
	}
	prefix := filepath.Dir(filepath.Dir(real))
	sites := prefixSites(prefix)
	// Debian's system Python keeps packages in dist-packages.
	if d := filepath.Join(prefix, "lib", "python3", "dist-packages"); fileExists(d) {
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

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// lookPath finds an executable in PATH, skipping relative entries (never the working directory).
func lookPath(name, pathEnv string) string {
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
