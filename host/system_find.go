package host

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/host/internal/ldso"
	"github.com/pathfinder-dev/pathfinder/host/internal/observe"
	"github.com/pathfinder-dev/pathfinder/host/internal/trust"
)

// systemModel answers the system step for find: where dlopen would find each soname, from a model of
// the loader's search (LD_LIBRARY_PATH, /etc/ld.so.cache, the default directories), loading nothing.
// Where the search reaches a stub first, the answer is the place it would reach next, as for load.
func (r *run) systemModel(st *StepTrace, names []string) *LoadedLibrary {
	l, err := r.f.loaderModel(r.rec)
	if err != nil {
		st.Outcome, st.Detail = "skipped", err.Error()
		return nil
	}
	st.Outcome = "nothing"
	for _, n := range names {
		res, err := l.Resolve(n)
		observeResolution(r.rec, res, err)
		for _, a := range res.Tried {
			st.Tried = append(st.Tried, abi.Attempt{Path: a.Path, Reason: a.Reason})
		}
		if err != nil {
			st.Tried = append(st.Tried, abi.Attempt{Path: n, Reason: strings.TrimPrefix(err.Error(), "pathfinder: ")})
			continue
		}
		p := res.Path
		if isStub(p) {
			if p = r.pastStub(st, l, n, res); p == "" {
				continue
			}
		}
		ct := CandidateTrace{Path: p, FoundVia: viaSystem}
		lib := &LoadedLibrary{Library: Library{Path: p, FoundVia: viaSystem}}
		if r.f.native() {
			// The loader's own checks passed; what it needs, and what a load would refuse, is
			// looked at as for any candidate.
			c, why := openSystemFile(p, r.e, r.f.platform)
			if why != "" {
				ct.Refused = why
				st.Candidates = append(st.Candidates, ct)
				continue
			}
			r.predictLoad(&ct, lib, c.needs)
			c.close()
		}
		if lib := r.take(st, ct, lib, systemRoot(p)); lib != nil {
			return lib
		}
	}
	return nil
}

// openSystemFile opens and checks a file the system loader would load, as validation does a step's
// candidate (the loader's search is no step's grant, so there is no root to confine it to).
func openSystemFile(p string, e *catalog.Entry, plat abi.Platform) (*candidate, string) {
	f, err := os.Open(p)
	if err != nil {
		return nil, unwrapPath(err).Error()
	}
	c := &candidate{host: p, file: f}
	if c.info, err = f.Stat(); err != nil || !c.info.Mode().IsRegular() {
		c.close()
		return nil, "not a regular file"
	}
	var why string
	if c.needs, why = checkContent(f, c.info, e, plat); why != "" {
		c.close()
		return nil, why
	}
	return c, ""
}

// predictLoad sets what the loader model says would stop a load of the found shared object (a
// DT_NEEDED library it would not find, a glibc too old for it), so that find and explain tell
// what load would: "" when nothing would. The library's own dependencies count as loaded, as
// pathfinder loads them first.
func (r *run) predictLoad(ct *CandidateTrace, lib *LoadedLibrary, needs ldso.Needs) {
	if r.e.Kind != abi.KindDynamicLib || !r.f.native() {
		return
	}
	if loaded := r.alreadyLoaded(); loaded != nil && loaded.Path != lib.Path {
		ct.Note = fmt.Sprintf("a load returns the copy already in this process, %s: a process never gets a second copy", loaded.Path)
	} else if err := trust.Replaceable(lib.Path); err != nil && r.f.platform.OS == "linux" {
		ct.Note = fmt.Sprintf("a load goes through the checked file's descriptor, as %v: $ORIGIN in its DT_RUNPATH then means /proc/self/fd", err)
	}
	l, err := r.f.loaderModel(r.rec)
	if err != nil {
		return
	}
	provided := r.f.dependencySonames(r.e)
	ct.LoadProblem = l.LoadProblem(lib.Path, needs, func(n string) bool { return provided[n] },
		func(res ldso.Resolution, err error) { observeResolution(r.rec, res, err) })
	lib.LoadProblem = ct.LoadProblem
}

// dependencySonames is every file name of e's dependencies, required and optional, and theirs: what
// pathfinder has loaded before it loads e.
func (f *Finder) dependencySonames(e *catalog.Entry) map[string]bool {
	out := map[string]bool{}
	var walk func(e *catalog.Entry)
	walk = func(e *catalog.Entry) {
		for _, d := range append(append([]string(nil), e.Dependencies...), e.OptionalDependencies...) {
			de, ok := f.catalog.Lookup(abi.KindDynamicLib, d)
			if !ok || out["\x00"+d] {
				continue
			}
			out["\x00"+d] = true
			for _, n := range de.FileNames(f.platform) {
				out[n] = true
			}
			walk(de)
		}
	}
	walk(e)
	return out
}

// refuseStub passes over a stub library in the loader model's search.
func refuseStub(p string) string {
	if isStub(p) {
		return "a stubs/ library: for linking only, never loaded"
	}
	return ""
}

func isStub(p string) bool { return slices.Contains(strings.Split(p, "/"), "stubs") }

// observeResolution records every path the loader model looked at, and the one it found.
func observeResolution(rec *observe.Recorder, res ldso.Resolution, err error) {
	var tried []ldso.Attempt
	var re *ldso.ResolveError
	if errors.As(err, &re) {
		tried = re.Tried
	}
	for _, a := range append(res.Tried, tried...) {
		if filepath.IsAbs(a.Path) {
			rec.Stat(a.Path)
		}
	}
	if res.Path != "" {
		rec.Stat(res.Path)
	}
	rec.Stat(ldso.DefaultCachePath)
}

// loaderModel is the model of the OS loader for the Finder's platform; what it reads of the
// environment is recorded in rec.
func (f *Finder) loaderModel(rec *observe.Recorder) (*ldso.Loader, error) {
	if f.platform.OS != "linux" {
		return nil, fmt.Errorf("the %s loader's search is not modeled; load on that platform to use it", f.platform.OS)
	}
	l := &ldso.Loader{Getenv: rec.Getenv(f.opts.getenv)}
	if f.platform.Arch == "arm64" {
		l.Machine = elf.EM_AARCH64
	}
	return l, nil
}

// systemResolve says where the OS loader would find the catalog library name, newest soname first,
// never a stub: the system_resolve capability, and the canary roots' grant. The loader model answers,
// loading nothing, or with [system] resolve = "dlopen" the loader itself in a child process; note
// then says where the model disagrees. What it observed is added to rec each time.
func (f *Finder) systemResolve(name string, rec *observe.Recorder) (path, note string, err error) {
	if f.cfg.resolveDlopen {
		// The child's loader also read what no observation records (LD_PRELOAD, /etc/ld.so.preload,
		// its own RUNPATH), so the answer is not kept past this process.
		rec.MarkVolatile()
	}
	if _, ok := f.catalog.Lookup(abi.KindDynamicLib, name); !ok {
		return "", "", fmt.Errorf("unknown library %q", name) // not remembered: a plugin may ask a million names
	}
	if v, ok := f.resolved.Load(name); ok {
		r := v.(resolved)
		rec.AddAll(r.seen)
		return r.path, r.note, r.err
	}
	own := &observe.Recorder{}
	p, note, err := f.resolveUncached(name, own)
	var probeErr *probeError
	if !errors.As(err, &probeErr) { // a probe that failed may answer next time
		f.resolved.Store(name, resolved{p, note, err, own.List()})
	}
	rec.AddAll(own.List())
	return p, note, err
}

type resolved struct {
	path, note string
	err        error
	seen       []observe.Observation
}

func (f *Finder) resolveUncached(name string, rec *observe.Recorder) (string, string, error) {
	e, ok := f.catalog.Lookup(abi.KindDynamicLib, name)
	if !ok {
		return "", "", fmt.Errorf("unknown library %q", name)
	}
	l, err := f.loaderModel(rec)
	if err != nil {
		return "", "", err
	}
	// The model runs in both modes: its observations are what the result cache re-checks.
	modelPath, modelErr := resolveWith(l, name, e.FileNames(f.platform), rec)
	if !f.cfg.resolveDlopen {
		return modelPath, "", modelErr
	}
	if !f.native() {
		return "", "", fmt.Errorf("dlopen probe: this process cannot load libraries for %s", f.platform)
	}
	ans, err := f.probeResolve(e.FileNames(f.platform), f.cfg.dlopenTimeout)
	switch {
	case err != nil:
		return "", "", &probeError{err}
	case ans.Path == "":
		return "", "", fmt.Errorf("dlopen would not load %q (%s)", name, strings.Join(ans.Tried, "; "))
	case isStub(ans.Path):
		return "", "", fmt.Errorf("dlopen loads only a stubs/ library for %q (%s)", name, ans.Path)
	}
	rec.Stat(ans.Path)
	note := ""
	if modelErr != nil {
		note = fmt.Sprintf("dlopen found %s for %s; the loader model would not: %v", ans.Path, name, modelErr)
	} else if ans.Path != modelPath {
		note = fmt.Sprintf("dlopen found %s for %s; the loader model says %s", ans.Path, name, modelPath)
	}
	return ans.Path, note, nil
}

// resolveWith asks the loader model for each file name of the library in turn.
// Where the loader's search meets a stub, the place it reaches next is the answer, as for the
// system step.
func resolveWith(l *ldso.Loader, name string, files []string, rec *observe.Recorder) (string, error) {
	var why []string
	past := *l
	past.Refuse = refuseStub
	for _, n := range files {
		res, err := past.Resolve(n)
		observeResolution(rec, res, err)
		switch {
		case err != nil:
			why = append(why, n+": not found, or only a stubs/ library")
		default:
			return res.Path, nil
		}
	}
	return "", fmt.Errorf("the loader would not find %q (%s)", name, strings.Join(why, "; "))
}
