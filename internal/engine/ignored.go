package engine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/report"
	"github.com/pathfinder-dev/pathfinder/internal/sitepackages"
)

// stepsIgnored is what steps said they passed over (abi.Response.Ignored), by step.
type stepsIgnored map[string][]IgnoredInput

// ignoredBy is what the steps of a trace said they passed over.
func ignoredBy(steps []search.StepTrace) stepsIgnored {
	out := stepsIgnored{}
	for _, st := range steps {
		for _, in := range st.Ignored {
			out.add(st.Step, setAside(in))
		}
	}
	return out
}

// setAside is what a step said it passed over by its own rule, the only kind of input a step names.
func setAside(in search.IgnoredInput) IgnoredInput {
	return IgnoredInput{Name: in.Name, Value: in.Value, Reason: in.Reason, Why: report.SetAside}
}

// add keeps what step said it passed over, each in place of what it said before of that variable.
func (s stepsIgnored) add(step string, ins ...IgnoredInput) {
	for _, in := range ins {
		s[step] = append(slices.DeleteFunc(s[step], func(o IgnoredInput) bool { return o.Name == in.Name }), in)
	}
}

// merge adds what other says each step passed over.
func (s stepsIgnored) merge(other stepsIgnored) {
	for step, ins := range other {
		s.add(step, ins...)
	}
}

// rememberIgnored keeps what a search's steps said they passed over, for IgnoredInputs.
func (f *Engine) rememberIgnored(reported stepsIgnored) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ignored == nil {
		f.ignored = stepsIgnored{}
	}
	f.ignored.merge(reported)
}

// ignoredFor lists the directory variables that the searches for e (every step and library for nil)
// would use but pass over, and why. The host names what is wrong with a variable it grants, whoever
// reads it: a relative path (never resolved against the working directory), one that does not exist
// or is no directory, a venv without site-packages. What a step sets aside by its own rule (a
// CUDA_HOME that CUDA_PATH hides) only the step knows: reported says it, by step, as the steps of a
// search said it (still the variable's value: a search that ran before it changed says nothing of it).
func (f *Engine) ignoredFor(e *catalog.Entry, reported stepsIgnored) []IgnoredInput {
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
		// A variable the step set aside is named for that, whatever else is wrong with it.
		var passed []IgnoredInput
		for _, in := range reported[step] {
			if !seen[in.Name] && f.getenv(in.Name) == in.Value {
				seen[in.Name] = true
				passed = append(passed, in)
			}
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
		out = append(out, passed...)
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
