// One search: the steps of a library's order, each asked in turn, as the search's mode says.

package engine

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/candidate"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/guestpath"
	"github.com/pathfinder-dev/pathfinder/internal/loadermodel"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// searchMode is what a search does with what its steps find.
type searchMode int

const (
	findFirst searchMode = iota // stop at the first valid candidate; load nothing
	loadFirst                   // stop at the first candidate that loads, its dependencies loaded first
	findEvery                   // run every step; gather every valid candidate with its root (FindTogether)
)

// searchAll runs the steps for name in order, as mode says, each candidate judged by check, and
// returns the trace, the candidates findEvery gathered, and everything the search observed.
func (f *Engine) searchAll(ctx context.Context, kind Kind, name string, mode searchMode, check *checked) (ex *search.Explanation, valid []rootedLibrary, seen []observe.Observation) {
	start := time.Now()
	ex = &search.Explanation{Name: name, Kind: search.Kind(kind)}
	defer func() { ex.Duration = time.Since(start) }()

	e, ok := f.catalog.Lookup(kind, name)
	if !ok {
		ex.Err = f.unknown(kind, name)
		return ex, nil, nil
	}
	if mode == loadFirst && !f.native() {
		ex.Err = &SearchError{Name: name, Kind: kind, Err: ErrNotAvailable, Platform: f.platform, Reason: "a search for another platform can find but not load"}
		return ex, nil, nil
	}
	if !e.AvailableOn(f.platform) {
		ex.Err = &SearchError{Name: name, Kind: kind, Err: ErrNotAvailable, Platform: f.platform}
		return ex, nil, nil
	}
	r := &cascade{f: f, ctx: ctx, e: e, mode: mode, rec: &observe.Recorder{}, check: check}
	ex.Compatibility = check.trace()
	defer func() {
		f.rememberIgnored(ignoredBy(ex.Steps))
		valid, seen = r.valid, r.rec.List()
		if r.rec.Volatile() {
			seen = nil // nothing to re-check it by: never cached
		}
		if k := check.kept; k != nil && k.release != nil {
			k.release()
		}
		check.kept = nil
	}()
	answer := func(lib *search.LoadedLibrary, step string) {
		lib.Name, lib.Kind, lib.Dependencies = name, ex.Kind, r.deps
		if lib.Step == "" {
			lib.Step = step
		}
		for _, st := range ex.Steps {
			for _, c := range st.Candidates {
				if c.Incompatible {
					lib.PassedOver = append(lib.PassedOver, search.Attempt{Step: st.Step, Path: c.Path, Reason: c.Refused})
				}
			}
		}
		ex.Result = lib
	}
	for _, step := range f.cfg.OrderFor(name) {
		t0 := time.Now()
		st := search.StepTrace{Step: step}
		if h := f.hooks.beforeStep; h != nil {
			h(step)
		}
		r.stepIndex = len(ex.Steps)
		lib := r.askStep(&st)
		st.Duration = time.Since(t0)
		ex.Steps = append(ex.Steps, st)
		if r.depErr != nil {
			ex.Err = r.depErr
			return
		}
		if lib != nil {
			answer(lib, step)
			return
		}
		if r.loadErr != nil || ctx.Err() != nil {
			break
		}
	}
	if k := check.kept; k != nil && r.loadErr == nil && ctx.Err() == nil {
		check.kept = nil
		if lib := r.acceptKeptBack(ex, k); lib != nil {
			answer(lib, ex.Steps[k.step].Step)
			return
		}
		if r.depErr != nil {
			ex.Err = r.depErr
			return
		}
	}
	ex.Err = r.failure(ex)
	return
}

// acceptKeptBack accepts the candidate a strict search kept back, now that no dated candidate ran: its
// place in the trace gets what taking it recorded (the answer, or why it was not taken either).
func (r *cascade) acceptKeptBack(ex *search.Explanation, k *keptCandidate) *search.LoadedLibrary {
	st := &ex.Steps[k.step]
	scratch := search.StepTrace{Step: st.Step}
	lib := k.take(&scratch)
	st.Candidates = slices.Concat(st.Candidates[:k.index], scratch.Candidates, st.Candidates[k.index+1:])
	switch {
	case lib != nil:
		st.Outcome = search.OutcomeFound
	case scratch.Outcome == search.OutcomeFailed:
		st.Outcome = search.OutcomeFailed
	}
	return lib
}

// failure is why a search that yielded nothing failed: the context's end, a found file the loader
// would not load, a file found but refused, or nothing found at all.
func (r *cascade) failure(ex *search.Explanation) error {
	se := &SearchError{Name: ex.Name, Kind: abi.Kind(ex.Kind), Err: ErrNotFound, Platform: r.f.platform,
		Looked: r.e.FileNames(r.f.platform), Attempts: ex.Attempts(), Ignored: r.f.ignoredFor(r.e, ignoredBy(ex.Steps))}
	for _, st := range ex.Steps {
		if st.Outcome == search.OutcomeFailed && st.Detail != "" {
			se.Failed = append(se.Failed, search.Attempt{Step: st.Step, Reason: st.Detail})
		}
	}
	if err := r.ctx.Err(); err != nil {
		return &SearchError{Name: ex.Name, Kind: abi.Kind(ex.Kind), Err: err, Platform: r.f.platform, Attempts: se.Attempts}
	}
	if r.loadErr != nil {
		se.Err, se.Path, se.Reason = ErrLoadFailed, r.loadErr.path, r.loadErr.why
		return se
	}
	var passed []search.CandidateTrace // passed over as incompatible
	for _, st := range ex.Steps {
		for _, c := range st.Candidates {
			if c.Incompatible {
				passed = append(passed, c)
			}
		}
	}
	if len(passed) > 0 {
		se.Err, se.Path, se.Reason = ErrIncompatible, passed[0].Path, r.check.incompatibility(passed)
		return se
	}
	for _, st := range ex.Steps {
		for _, c := range st.Candidates {
			if c.Refused != "" {
				se.Err, se.Path, se.Reason = ErrRefused, c.Path, c.Refused
				return se
			}
		}
	}
	return se
}

// cascade is one search: the steps of a library's order asked in turn (askStep), and its state:
// whether the dependencies are loaded yet.
type cascade struct {
	f        *Engine
	ctx      context.Context
	e        *catalog.Entry
	mode     searchMode
	depsDone bool
	depErr   error
	deps     []*search.LoadedLibrary // the dependencies loaded
	valid    []rootedLibrary         // what findEvery gathered
	// rec records everything the search observes, for the result cache.
	rec *observe.Recorder
	// loadErr is a found file the loader would not load: the search stops there.
	loadErr *loadFailure
	// model is the search's one model of the OS loader, made on first use: it reads the
	// interpreter and ld.so.cache once for every resolution the search makes.
	model    *loadermodel.Loader
	modelErr error
	// check judges each candidate; stepIndex is the running step's place in the explanation.
	check     *checked
	stepIndex int
}

// loaderModel is the Engine's loaderModel, one per search.
func (r *cascade) loaderModel() (*loadermodel.Loader, error) {
	if r.model == nil && r.modelErr == nil {
		r.model, r.modelErr = r.f.loaderModel(r.rec)
	}
	return r.model, r.modelErr
}

// rootedLibrary is a valid candidate and the root it came from: the granted directory it is in (a
// site-packages dir, a conda prefix, an install root), or the toolkit root of a system library.
type rootedLibrary struct {
	lib  search.Library
	root string
}

// record records lib as the step's answer or, when collecting, as one more candidate: then the
// search goes on.
func (r *cascade) record(st *search.StepTrace, ct search.CandidateTrace, lib *search.LoadedLibrary, root string) *search.LoadedLibrary {
	st.Outcome = search.OutcomeFound
	if r.mode == findEvery {
		lib.Step = st.Step
		st.Candidates = append(st.Candidates, ct)
		r.valid = append(r.valid, rootedLibrary{lib.Library, root})
		return nil
	}
	ct.Taken = true
	st.Candidates = append(st.Candidates, ct)
	return lib
}

// systemRoot is the root a library the loader found counts as: its toolkit, else its directory.
func systemRoot(p string) string {
	if root, ok := guestpath.Host.ToolkitRoot(p); ok {
		return root
	}
	return filepath.Dir(p)
}

// askStep asks one step of the order, the host's own or a plugin, for the library.
func (r *cascade) askStep(st *search.StepTrace) *search.LoadedLibrary {
	names := r.e.FileNames(r.f.platform)
	if (st.Step == StepAlreadyLoaded || st.Step == StepSystem) && r.e.Kind != abi.KindDynamicLib {
		st.Outcome, st.Detail = search.OutcomeSkipped, "only dynamic libraries are known to the loader"
		return nil
	}
	switch st.Step {
	case StepAlreadyLoaded:
		return r.askAlreadyLoaded(st, names)
	case StepSystem:
		return r.askSystem(st, names)
	}
	return r.askPlugin(st)
}

// askPlugin asks a plugin step and accepts the first candidate that passes validation (and loads, for load).
func (r *cascade) askPlugin(st *search.StepTrace) *search.LoadedLibrary {
	resp, g, log, err := r.f.callPlugin(r.ctx, st.Step, r.e, r.rec)
	st.Log = log
	if err != nil {
		st.Outcome, st.Detail = search.OutcomeFailed, err.Error()
		return nil
	}
	st.Tried = hostTried(g.dirs.Paths, st.Step, resp.Tried)
	for _, in := range resp.Ignored {
		if _, granted := g.wasm.Env[in.Var]; granted { // a step passes over only what it was given
			st.Ignored = append(st.Ignored, search.IgnoredInput{Name: in.Var, Value: r.f.getenv(in.Var), Reason: in.Reason})
		}
	}
	for i, a := range resp.Tried {
		// The sandbox shows nothing outside the step's grants: what a plugin says of such a path
		// (no such directory) is not what is on the machine.
		if path.IsAbs(a.Path) && !g.dirs.Covers(a.Path) {
			st.Tried[i].Reason += " (not granted to the step: its sandbox shows nothing there)"
		}
	}
	if resp.Error != "" {
		st.Outcome, st.Detail = search.OutcomeFailed, (&PluginError{Plugin: st.Step, Op: "search", Err: errors.New(resp.Error)}).Error()
		return nil
	}
	st.Outcome = search.OutcomeNothing
	for _, c := range resp.Candidates {
		// The plugin answers in guest paths; the trace, the result and the loader get host paths.
		// found_via is the label of the granted root the candidate lies in, never the plugin's own.
		ct := search.CandidateTrace{Path: g.dirs.TracePath(c.Path), FoundVia: g.dirs.FoundVia(c.Path, st.Step)}
		cand, err := g.dirs.Open(c.Path, r.e, r.f.platform)
		if err != nil {
			ct.Refused, ct.Links = err.Error(), candidate.LinksOf(err)
			st.Candidates = append(st.Candidates, ct)
			continue
		}
		ct.Links = cand.Links
		root, _ := g.dirs.DirOf(c.Path)
		switch r.judge(&ct, cand.Host, cand.Real) {
		case passOver:
			st.Candidates = append(st.Candidates, ct)
			cand.Close()
			continue
		case keepBack:
			if r.mode != findEvery {
				r.keep(st, ct, func(st *search.StepTrace, ct search.CandidateTrace) *search.LoadedLibrary {
					return r.acceptFile(st, ct, cand, root)
				}, cand.Close)
				continue
			}
		}
		if taken := r.acceptFile(st, ct, cand, root); taken != nil || r.stopped() {
			return taken
		}
	}
	return nil
}

// acceptFile accepts the checked file cand, loading it (its dependencies first) for a load; nil
// when it was not taken: its trace says why, and r.stopped() whether the search goes on.
func (r *cascade) acceptFile(st *search.StepTrace, ct search.CandidateTrace, cand *candidate.File, root string) *search.LoadedLibrary {
	var lib *search.LoadedLibrary
	if r.mode == loadFirst {
		if lib = r.loadCandidate(st, &ct, cand); lib == nil {
			return nil
		}
	} else {
		lib = &search.LoadedLibrary{Library: search.Library{Path: cand.Host, RealPath: cand.Real, FoundVia: ct.FoundVia}}
		r.predictLoad(&ct, lib, cand.Needs)
		cand.Close()
	}
	if !lib.AlreadyLoaded {
		lib.CUDAInfo = ct.CUDAInfo
	}
	return r.record(st, ct, lib, root)
}
