package search

import (
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/report"
	"github.com/pathfinder-dev/pathfinder/internal/sitepackages"
)

// ignoredFor lists the directory variables that the searches for e (every step and library for nil)
// would use but pass over, and why: a relative path (never resolved against the working directory),
// one that does not exist or is no directory, a venv without site-packages, a CUDA_HOME that
// CUDA_PATH overrides.
func (f *Engine) ignoredFor(e *catalog.Entry) []IgnoredInput {
	var out []IgnoredInput
	seen := map[string]bool{}
	check := func(name string, list bool) {
		v := f.getenv(name)
		if v == "" || seen[name] {
			return
		}
		seen[name] = true
		values := []string{v}
		if list {
			values = filepath.SplitList(v)
		}
		for _, val := range values {
			if !filepath.IsAbs(val) {
				out = append(out, report.RelativePath(name, val))
			} else if err := unusableDir(val); err != nil {
				out = append(out, IgnoredInput{Name: name, Value: val, Reason: err.Error()})
			} else if name == "VIRTUAL_ENV" && len(sitepackages.Host.PrefixSites(val, nil)) == 0 {
				out = append(out, IgnoredInput{Name: name, Value: val, Reason: "holds no site-packages directory"})
			}
		}
	}
	for _, step := range f.stepsFor(e) {
		p := f.cfg.Plugins[step]
		if p == nil {
			continue
		}
		// envroots reads CUDA_HOME only when CUDA_PATH is unset, as cuda.pathfinder does: a CUDA_HOME
		// naming another directory is passed over, whatever CUDA_PATH's own fate.
		cudaPath, cudaHome := f.getenv("CUDA_PATH"), f.getenv("CUDA_HOME")
		homePassedOver := p.Source.Builtin == "envroots" && !seen["CUDA_HOME"] && cudaPath != "" && cudaHome != "" && !sameDir(cudaPath, cudaHome)
		if homePassedOver {
			seen["CUDA_HOME"] = true
		}
		for _, r := range p.Read {
			switch r.Kind {
			case config.GrantSitePackages:
				check("PATHFINDER_SITE_PACKAGES", true)
				check("VIRTUAL_ENV", false)
				check("CONDA_PREFIX", false)
				// Read on the way to a user site or a pyenv python; only a relative one is
				// passed over for itself (an absent user base is the usual case).
				for _, name := range []string{"PYTHONUSERBASE", "PYENV_ROOT", "PYENV_DIR"} {
					if v := f.getenv(name); v != "" && !seen[name] && !filepath.IsAbs(v) {
						seen[name] = true
						out = append(out, report.RelativePath(name, v))
					}
				}
			case config.GrantInstallRoots:
				for _, v := range f.installRootVars(e) {
					check(v, false)
				}
			case config.GrantVar:
				check(r.Name, false)
			}
		}
		if homePassedOver {
			out = append(out, IgnoredInput{Name: "CUDA_HOME", Value: cudaHome, Reason: "CUDA_PATH is set, and CUDA_HOME is read only when CUDA_PATH is not", Why: report.Overridden})
		}
	}
	return out
}

// stepsFor is the step order for e, or every step any library uses for nil.
func (f *Engine) stepsFor(e *catalog.Entry) []string {
	if e != nil {
		return f.cfg.OrderFor(e.Name)
	}
	steps := slices.Clone(f.cfg.Order)
	for _, o := range f.cfg.LibraryOrder {
		for _, s := range o {
			if !slices.Contains(steps, s) {
				steps = append(steps, s)
			}
		}
	}
	return steps
}

// installRootVars is e's install-root variables, or every library's for nil.
func (f *Engine) installRootVars(e *catalog.Entry) []string {
	if e != nil {
		return e.InstallRootEnvVars
	}
	var out []string
	for _, n := range f.catalog.Names(abi.KindDynamicLib) {
		le, _ := f.catalog.Lookup(abi.KindDynamicLib, n)
		for _, v := range le.InstallRootEnvVars {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// sameDir reports whether two directory variables name one directory: the same absolute path, or
// two paths to one directory.
func sameDir(a, b string) bool {
	if !filepath.IsAbs(a) || !filepath.IsAbs(b) {
		return false
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// unusableDir refuses an absolute directory that cannot be searched.
func unusableDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return observe.Cause(err)
	case !fi.IsDir():
		return errors.New("not a directory")
	}
	return nil
}
