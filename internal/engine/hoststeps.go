// The host's own steps, one function each: already-loaded (a copy this process has) and system
// (the OS loader: load asks dlopen, find asks the model of its search), and the model's helpers.

package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/binfmt"
	"github.com/pathfinder-dev/pathfinder/internal/candidate"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/loader"
	"github.com/pathfinder-dev/pathfinder/internal/loadermodel"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/resolveprobe"
	"github.com/pathfinder-dev/pathfinder/internal/trust"
)

// askAlreadyLoaded asks the already-loaded step: a copy of the library this process has already,
// by any of its declared names.
func (r *cascade) askAlreadyLoaded(st *search.StepTrace, names []string) *search.LoadedLibrary {
	if !r.f.native() {
		st.Outcome, st.Detail = search.OutcomeSkipped, "the search is for "+r.f.platform.String()+", not this process"
		return nil
	}
	if !loader.Available {
		st.Outcome, st.Detail = search.OutcomeSkipped, loader.ErrUnavailable.Error()
		return nil
	}
	if lib := r.alreadyLoaded(); lib != nil {
		return r.acceptLoaded(st, lib)
	}
	for _, n := range names {
		tried(st, n, "not loaded in this process")
	}
	st.Outcome = search.OutcomeNothing
	return nil
}

// askSystem asks the OS loader: for load it dlopens each soname; for find it asks the loader model
// where dlopen would find it, so that find never loads anything. Neither ever yields a stub: where
// the loader's search reaches one first, the model's next place is loaded by its path instead.
func (r *cascade) askSystem(st *search.StepTrace, names []string) *search.LoadedLibrary {
	if r.mode != loadFirst {
		return r.askLoaderModel(st, names)
	}
	if !loader.Available {
		st.Outcome, st.Detail = search.OutcomeSkipped, loader.ErrUnavailable.Error()
		return nil
	}
	if !r.dependencies() {
		st.Outcome, st.Detail = search.OutcomeFailed, r.depErr.Error()
		return nil
	}
	if lib := r.alreadyLoaded(); lib != nil {
		return r.acceptLoaded(st, lib)
	}
	model, _ := r.loaderModel() // nil where the loader is not modeled
	st.Outcome = search.OutcomeNothing
	for _, n := range names {
		var res loadermodel.Resolution
		var modelErr error = loadermodel.ErrUnmodeled
		if model != nil {
			res, modelErr = model.Resolve(n)
			observeResolution(r.rec, res, modelErr)
		}
		if modelErr == nil && candidate.IsStubFile(res.Path) {
			next := r.pastStub(st, model, n, res)
			if next == "" {
				continue
			}
			c, err := candidate.OpenSystem(next, r.e, r.f.platform)
			ct := search.CandidateTrace{Path: next, FoundVia: config.FoundViaSystem}
			if err != nil {
				ct.Refused = err.Error()
				st.Candidates = append(st.Candidates, ct)
				continue
			}
			switch r.judge(&ct, next, realOf(next)) {
			case passOver:
				st.Candidates = append(st.Candidates, ct)
				c.Close()
				continue
			case keepBack:
				r.keep(st, ct, func(st *search.StepTrace, ct search.CandidateTrace) *search.LoadedLibrary {
					return r.acceptFile(st, ct, c, systemRoot(next))
				}, c.Close)
				continue
			}
			return r.acceptFile(st, ct, c, systemRoot(next))
		}
		// Where the model knows the file dlopen will map, it is judged before it is loaded.
		ct := search.CandidateTrace{Path: res.Path, FoundVia: config.FoundViaSystem}
		if modelErr == nil {
			switch r.judge(&ct, res.Path, realOf(res.Path)) {
			case passOver:
				st.Candidates = append(st.Candidates, ct)
				continue
			case keepBack:
				n := n
				r.keep(st, ct, func(st *search.StepTrace, ct search.CandidateTrace) *search.LoadedLibrary {
					lib, _ := r.dlopen(st, n, ct, true)
					return lib
				}, func() {})
				continue
			}
		}
		if lib, goOn := r.dlopen(st, n, ct, modelErr == nil); !goOn {
			return lib
		}
	}
	return nil
}

// dlopen loads soname n by name, as the system step does, ct being what the loader model says it
// maps (modeled: the model found it). It returns what it took, and whether the step goes on to the
// next soname.
func (r *cascade) dlopen(st *search.StepTrace, n string, ct search.CandidateTrace, modeled bool) (*search.LoadedLibrary, bool) {
	l, err := loader.Open(n, r.e.RequiresRTLDDeepbind)
	if err != nil {
		if modeled { // the loader found it and would not load it
			ct.Refused = err.Error()
			st.Candidates = append(st.Candidates, ct)
			st.Outcome = search.OutcomeFailed
			r.loadErr = &loadFailure{ct.Path, err.Error()}
			return nil, false
		}
		tried(st, n, err.Error())
		return nil, true
	}
	if candidate.IsStubFile(l.Path) { // the model did not see it coming: give it back, never use it
		loader.Unload(l.Handle)
		st.Candidates = append(st.Candidates, search.CandidateTrace{Path: l.Path, FoundVia: config.FoundViaSystem,
			Refused: "the system loader loaded a stub here; unloaded, never used"})
		return nil, true
	}
	if l.Path != ct.Path { // not what the model said: dated as what it is, already loaded
		ct = search.CandidateTrace{Path: l.Path, FoundVia: config.FoundViaSystem}
		r.judge(&ct, l.Path, realOf(l.Path))
		ct.Refused, ct.Incompatible = "", false
	}
	lib := &search.LoadedLibrary{Library: search.Library{Path: l.Path, FoundVia: config.FoundViaSystem, CUDAInfo: ct.CUDAInfo}, Handle: l.Handle}
	return r.record(st, ct, lib, systemRoot(l.Path)), false
}

// acceptLoaded accepts the copy of the library the process has already: never a second copy, so it is
// taken whatever the check says, with what it says in its notes.
func (r *cascade) acceptLoaded(st *search.StepTrace, lib *search.LoadedLibrary) *search.LoadedLibrary {
	ct := search.CandidateTrace{Path: lib.Path, FoundVia: lib.FoundVia}
	if r.judge(&ct, lib.Path, realOf(lib.Path)) == passOver {
		ct.Notes = append(ct.Notes, "already in this process, and a process never gets a second copy, although "+ct.Refused)
		ct.Refused, ct.Incompatible = "", false
	}
	lib.CUDAInfo = ct.CUDAInfo
	return r.record(st, ct, lib, systemRoot(lib.Path))
}

// realOf is the file the links on p's way lead to, "" when there are none.
func realOf(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
		return real
	}
	return ""
}

// askLoaderModel answers the system step for find: where dlopen would find each soname, from a model of
// the loader's search (LD_LIBRARY_PATH, /etc/ld.so.cache, the default directories), loading nothing.
// Where the search reaches a stub first, the answer is the place it would reach next, as for load.
func (r *cascade) askLoaderModel(st *search.StepTrace, names []string) *search.LoadedLibrary {
	l, err := r.loaderModel()
	if err != nil {
		st.Outcome, st.Detail = search.OutcomeSkipped, err.Error()
		return nil
	}
	st.Outcome = search.OutcomeNothing
	for _, n := range names {
		res, err := l.Resolve(n)
		observeResolution(r.rec, res, err)
		for _, a := range res.Tried {
			tried(st, a.Path, a.Reason)
		}
		if err != nil {
			tried(st, n, err.Error())
			continue
		}
		p := res.Path
		if candidate.IsStubFile(p) {
			if p = r.pastStub(st, l, n, res); p == "" {
				continue
			}
		}
		ct := search.CandidateTrace{Path: p, FoundVia: config.FoundViaSystem}
		var c *candidate.File
		if r.f.native() {
			// The loader's own checks passed; what it needs, and what a load would refuse, is
			// looked at as for any candidate.
			if c, err = candidate.OpenSystem(p, r.e, r.f.platform); err != nil {
				ct.Refused = err.Error()
				st.Candidates = append(st.Candidates, ct)
				continue
			}
		}
		closeC := func() {
			if c != nil {
				c.Close()
			}
		}
		take := func(st *search.StepTrace, ct search.CandidateTrace) *search.LoadedLibrary {
			lib := &search.LoadedLibrary{Library: search.Library{Path: p, FoundVia: config.FoundViaSystem}}
			if c != nil {
				r.predictLoad(&ct, lib, c.Needs)
				closeC()
			}
			lib.CUDAInfo = ct.CUDAInfo
			return r.record(st, ct, lib, systemRoot(p))
		}
		switch r.judge(&ct, p, realOf(p)) {
		case passOver:
			st.Candidates = append(st.Candidates, ct)
			closeC()
			continue
		case keepBack:
			if r.mode != findEvery {
				r.keep(st, ct, take, closeC)
				continue
			}
		}
		if lib := take(st, ct); lib != nil {
			return lib
		}
	}
	return nil
}

// pastStub records that the loader's search for soname reaches the stub at res first, and returns
// the place the search would reach next, "" for none: the library a build's stubs directory on
// LD_LIBRARY_PATH hides.
func (r *cascade) pastStub(st *search.StepTrace, model *loadermodel.Loader, soname string, res loadermodel.Resolution) string {
	st.Candidates = append(st.Candidates, search.CandidateTrace{Path: res.Path, FoundVia: config.FoundViaSystem, Refused: stubRefusal(res)})
	past := *model
	past.Refuse = refuseStub
	next, err := past.Resolve(soname)
	observeResolution(r.rec, next, err)
	if err != nil {
		return ""
	}
	return next.Path
}

// predictLoad sets what the loader model says would stop a load of the found shared object (a
// DT_NEEDED library it would not find, a glibc too old for it), so that find and explain tell
// what load would: "" when nothing would. The library's own dependencies count as loaded, as
// pathfinder loads them first.
func (r *cascade) predictLoad(ct *search.CandidateTrace, lib *search.LoadedLibrary, needs binfmt.Needs) {
	if r.e.Kind != DynamicLib || !r.f.native() {
		return
	}
	if loaded := r.alreadyLoaded(); loaded != nil && loaded.Path != lib.Path {
		ct.Note = fmt.Sprintf("a load returns the copy already in this process, %s: a process never gets a second copy", loaded.Path)
	} else if err := trust.OthersCanReplace(lib.Path); err != nil && r.f.platform.OS == "linux" {
		ct.Note = fmt.Sprintf("a load goes through the checked file's descriptor, as %v: $ORIGIN in its DT_RUNPATH then means /proc/self/fd", err)
	}
	l, err := r.loaderModel()
	if err != nil {
		return
	}
	provided := r.f.dependencySonames(r.e)
	ct.LoadProblem = l.LoadProblem(lib.Path, needs, func(n string) bool { return provided[n] },
		func(res loadermodel.Resolution, err error) { observeResolution(r.rec, res, err) })
	lib.LoadProblem = ct.LoadProblem
}

// dependencySonames is every file name of e's dependencies, required and optional, and theirs: what
// pathfinder has loaded before it loads e.
func (f *Engine) dependencySonames(e *catalog.Entry) map[string]bool {
	out := map[string]bool{}
	var walk func(e *catalog.Entry)
	walk = func(e *catalog.Entry) {
		for _, d := range append(append([]string(nil), e.Dependencies...), e.OptionalDependencies...) {
			de, ok := f.catalog.Lookup(DynamicLib, d)
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
	if candidate.IsStubFile(p) {
		return "a stubs/ library: for linking only, never loaded"
	}
	return ""
}

// stubRefusal says where the loader's search met a stub.
func stubRefusal(res loadermodel.Resolution) string {
	where := map[string]string{loadermodel.ViaLDLibraryPath: "LD_LIBRARY_PATH holds a stubs directory",
		loadermodel.ViaCache: "ld.so.cache lists it", loadermodel.ViaDefaultDirs: "in a default directory"}[res.Via]
	if where == "" {
		where = res.Via
	}
	at := res.Path
	if real, err := filepath.EvalSymlinks(at); err == nil && !loadermodel.IsStub(at) {
		at += " → " + real // a link that leads into a stubs directory
	}
	return fmt.Sprintf("the system loader found a stub at %s (%s): for linking only, never loaded", at, where)
}

// observeResolution records every path the loader model looked at, and the one it found.
func observeResolution(rec *observe.Recorder, res loadermodel.Resolution, err error) {
	var tried []search.Attempt
	var re *loadermodel.ResolveError
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
	rec.Stat(loadermodel.DefaultCachePath)
}

// loaderModel is the model of the OS loader for the Engine's platform; what it reads of the
// environment is recorded in rec.
func (f *Engine) loaderModel(rec *observe.Recorder) (*loadermodel.Loader, error) {
	if f.platform.OS != "linux" {
		return nil, fmt.Errorf("the %s loader's search is not modeled; load on that platform to use it", f.platform.OS)
	}
	l := &loadermodel.Loader{Getenv: rec.Getenv(f.getenv)}
	if f.platform.Arch == "arm64" {
		l.Machine = binfmt.MachineAArch64
	}
	return l, nil
}

// systemResolve says where the OS loader would find the catalog library name, newest soname first,
// never a stub: the system_resolve capability, and the canary roots' grant. The loader model answers,
// loading nothing, or with [system] resolve = "dlopen" the loader itself in a child process; note
// then says where the model disagrees. What it observed is added to rec each time.
func (f *Engine) systemResolve(name string, rec *observe.Recorder) (path, note string, err error) {
	if f.cfg.ResolveDlopen {
		// The child's loader also read what no observation records (LD_PRELOAD, /etc/ld.so.preload,
		// its own RUNPATH), so the answer is not kept past this process.
		rec.MarkVolatile()
	}
	e, ok := f.catalog.Lookup(DynamicLib, name)
	if !ok {
		return "", "", fmt.Errorf("unknown library %q", name) // not remembered: a plugin may ask a million names
	}
	if r, ok := f.resolved.load(name); ok {
		rec.AddAll(r.seen)
		return r.path, r.note, r.err
	}
	own := &observe.Recorder{}
	r, keep := f.resolveUncached(e, own)
	r.seen = own.List()
	if keep { // a probe that failed may answer next time
		f.resolved.store(name, r)
	}
	rec.AddAll(r.seen)
	return r.path, r.note, r.err
}

type resolved struct {
	path, note string
	err        error
	seen       []observe.Observation
}

// resolveUncached is systemResolve's answer for e, and whether it may be remembered.
func (f *Engine) resolveUncached(e *catalog.Entry, rec *observe.Recorder) (resolved, bool) {
	l, err := f.loaderModel(rec)
	if err != nil {
		return resolved{err: err}, true
	}
	// The model runs in both modes: its observations are what the result cache re-checks.
	modelPath, modelErr := resolveWith(l, e.Name, e.FileNames(f.platform), rec)
	if !f.cfg.ResolveDlopen {
		return resolved{path: modelPath, err: modelErr}, true
	}
	if !f.native() {
		return resolved{err: fmt.Errorf("dlopen probe: this process cannot load libraries for %s", f.platform)}, true
	}
	ans, err := resolveprobe.Run(e.FileNames(f.platform), f.cfg.DlopenTimeout, f.getenv("LD_LIBRARY_PATH"))
	switch {
	case err != nil:
		return resolved{err: err}, false
	case ans.Path == "":
		return resolved{err: fmt.Errorf("dlopen would not load %q (%s)", e.Name, strings.Join(ans.Tried, "; "))}, true
	case candidate.IsStubFile(ans.Path):
		return resolved{err: fmt.Errorf("dlopen loads only a stubs/ library for %q (%s)", e.Name, ans.Path)}, true
	}
	rec.Stat(ans.Path)
	r := resolved{path: ans.Path}
	if modelErr != nil {
		r.note = fmt.Sprintf("dlopen found %s for %s; the loader model would not: %v", ans.Path, e.Name, modelErr)
	} else if ans.Path != modelPath {
		r.note = fmt.Sprintf("dlopen found %s for %s; the loader model says %s", ans.Path, e.Name, modelPath)
	}
	return r, true
}

// resolveWith asks the loader model for each file name of the library in turn.
// Where the loader's search meets a stub, the place it reaches next is the answer, as for the
// system step.
func resolveWith(l *loadermodel.Loader, name string, files []string, rec *observe.Recorder) (string, error) {
	var why []string
	past := *l
	past.Refuse = refuseStub
	for _, n := range files {
		res, err := past.Resolve(n)
		observeResolution(rec, res, err)
		if err == nil {
			return res.Path, nil
		}
		why = append(why, n+": not found, or only a stubs/ library")
	}
	return "", fmt.Errorf("the loader would not find %q (%s)", name, strings.Join(why, "; "))
}
