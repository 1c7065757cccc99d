package host

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/host/internal/loader"
	"github.com/pathfinder-dev/pathfinder/host/internal/observe"
)

// Explanation is one search, step by step.
type Explanation struct {
	Name     string         `json:"name"`
	Kind     abi.Kind       `json:"kind"`
	Steps    []StepTrace    `json:"steps"`
	Duration time.Duration  `json:"duration_ns"`
	Result   *LoadedLibrary `json:"result,omitempty"`
	Err      error          `json:"-"`
}

// StepTrace is what one step did.
type StepTrace struct {
	Step       string           `json:"step"`
	Outcome    string           `json:"outcome"` // "found", "nothing", "failed" or "skipped"
	Detail     string           `json:"detail,omitempty"`
	Duration   time.Duration    `json:"duration_ns"`
	Candidates []CandidateTrace `json:"candidates,omitempty"`
	Tried      []abi.Attempt    `json:"tried,omitempty"`
	Log        []string         `json:"log,omitempty"`
}

// CandidateTrace is a candidate a step proposed and the host's verdict on it.
type CandidateTrace struct {
	Path     string `json:"path"`
	FoundVia string `json:"found_via"`
	Taken    bool   `json:"taken"`
	Refused  string `json:"refused,omitempty"` // why the host did not take it
}

// Attempts flattens the trace into every place looked and why it was not taken.
func (ex *Explanation) Attempts() []Attempt {
	var out []Attempt
	for _, st := range ex.Steps {
		for _, t := range st.Tried {
			out = append(out, Attempt{Step: st.Step, Path: t.Path, Reason: t.Reason})
		}
		for _, c := range st.Candidates {
			if !c.Taken {
				out = append(out, Attempt{Step: st.Step, Path: c.Path, Reason: c.Refused})
			}
		}
		if st.Outcome == "failed" || st.Outcome == "skipped" {
			out = append(out, Attempt{Step: st.Step, Reason: st.Detail})
		}
	}
	return out
}

// search runs the steps for name in order until one yields a library; load also loads it.
func (f *Finder) search(ctx context.Context, kind Kind, name string, load bool) *Explanation {
	ex, _, _ := f.searchAll(ctx, kind, name, load, false)
	return ex
}

// searchAll is search that, with collect, runs every step and returns every valid candidate with
// its root (for FindTogether) instead of stopping at the first.
// It also returns everything the search observed.
func (f *Finder) searchAll(ctx context.Context, kind Kind, name string, load, collect bool) (ex *Explanation, valid []rootedLibrary, seen []observe.Observation) {
	start := time.Now()
	ex = &Explanation{Name: name, Kind: kind}
	defer func() { ex.Duration = time.Since(start) }()

	e, ok := f.catalog.Lookup(kind, name)
	if !ok {
		ex.Err = &SearchError{Name: name, Kind: ex.Kind, Err: ErrUnknown, Suggestions: f.catalog.Suggest(kind, name)}
		return ex, nil, nil
	}
	if load && !f.native() {
		ex.Err = &SearchError{Name: name, Kind: ex.Kind, Err: ErrNotAvailable, Platform: f.platform, Reason: "a search for another platform can find but not load"}
		return ex, nil, nil
	}
	if !e.AvailableOn(f.platform) {
		ex.Err = &SearchError{Name: name, Kind: ex.Kind, Err: ErrNotAvailable, Platform: f.platform}
		return ex, nil, nil
	}
	r := &run{f: f, ctx: ctx, e: e, load: load, collect: collect, rec: &observe.Recorder{}}
	defer func() {
		valid, seen = r.valid, r.rec.List()
		if r.rec.Volatile() {
			seen = nil // nothing to re-check it by: never cached
		}
	}()
	for _, step := range f.cfg.orderFor(name) {
		t0 := time.Now()
		st := StepTrace{Step: step}
		lib := r.step(&st)
		st.Duration = time.Since(t0)
		ex.Steps = append(ex.Steps, st)
		if r.depErr != nil {
			ex.Err = r.depErr
			return
		}
		if lib != nil {
			lib.Name, lib.Kind, lib.Step = name, ex.Kind, step
			ex.Result = lib
			return
		}
		if ctx.Err() != nil {
			break
		}
	}
	ex.Err = &SearchError{Name: name, Kind: ex.Kind, Err: ErrNotFound, Platform: f.platform,
		Looked: e.FileNames(f.platform), Attempts: ex.Attempts()}
	return
}

// run is one search's state: whether the dependencies are loaded yet.
type run struct {
	f        *Finder
	ctx      context.Context
	e        *catalog.Entry
	load     bool
	depsDone bool
	depErr   error
	// collect keeps going past the first valid candidate and gathers every one, with its root.
	collect bool
	valid   []rootedLibrary
	// rec records everything the search observes, for the result cache.
	rec *observe.Recorder
	// grant gives a plugin step its grants; nil is the Finder's own. Tests give a Windows host's
	// path mapping over fake trees.
	grant func(p *pluginConfig, e *catalog.Entry, rec *observe.Recorder) (*granted, error)
}

// rootedLibrary is a valid candidate and the root it came from: the granted directory it is in (a
// site-packages dir, a conda prefix, an install root), or the toolkit root of a system library.
type rootedLibrary struct {
	lib  Library
	root string
}

// take records lib as found, or, when collecting, as one more candidate: then the search goes on.
func (r *run) take(st *StepTrace, ct CandidateTrace, lib *LoadedLibrary, root string) *LoadedLibrary {
	if r.collect {
		lib.Step = st.Step
		st.Candidates = append(st.Candidates, ct)
		st.Outcome = "found"
		r.valid = append(r.valid, rootedLibrary{lib.Library, root})
		return nil
	}
	ct.Taken = true
	st.Candidates = append(st.Candidates, ct)
	st.Outcome = "found"
	return lib
}

// systemRoot is the root a library the loader found counts as: its toolkit, else its directory.
func systemRoot(p string) string {
	if root, ok := hostToolkitRoot(hostPaths, p); ok {
		return root
	}
	return filepath.Dir(p)
}

func (r *run) step(st *StepTrace) *LoadedLibrary {
	names := r.e.FileNames(r.f.platform)
	if (st.Step == StepAlreadyLoaded || st.Step == StepSystem) && r.e.Kind != abi.KindDynamicLib {
		st.Outcome, st.Detail = "skipped", "only dynamic libraries are known to the loader"
		return nil
	}
	switch st.Step {
	case StepAlreadyLoaded:
		if !r.f.native() {
			st.Outcome, st.Detail = "skipped", "the search is for "+r.f.platform.String()+", not this process"
			return nil
		}
		if !loader.Available {
			st.Outcome, st.Detail = "skipped", loader.ErrUnavailable.Error()
			return nil
		}
		for _, n := range names {
			if l, ok := loader.Loaded(n); ok {
				lib := &LoadedLibrary{Library: Library{Path: l.Path, FoundVia: "was-already-loaded-from-elsewhere"}, AlreadyLoaded: true, Handle: l.Handle}
				return r.take(st, CandidateTrace{Path: l.Path, FoundVia: lib.FoundVia}, lib, systemRoot(l.Path))
			}
			st.Tried = append(st.Tried, abi.Attempt{Path: n, Reason: "not loaded in this process"})
		}
		st.Outcome = "nothing"
		return nil
	case StepSystem:
		return r.system(st, names)
	}
	return r.plugin(st)
}

// system asks the OS loader: for load it dlopens each soname; for find it asks the loader model
// where dlopen would find it, so that find never loads anything.
func (r *run) system(st *StepTrace, names []string) *LoadedLibrary {
	if !r.load {
		return r.systemModel(st, names)
	}
	if !loader.Available {
		st.Outcome, st.Detail = "skipped", loader.ErrUnavailable.Error()
		return nil
	}
	if !r.dependencies() {
		st.Outcome, st.Detail = "failed", r.depErr.Error()
		return nil
	}
	for _, n := range names {
		l, err := loader.Open(n, r.e.RequiresRTLDDeepbind)
		if err != nil {
			st.Tried = append(st.Tried, abi.Attempt{Path: n, Reason: err.Error()})
			continue
		}
		lib := &LoadedLibrary{Library: Library{Path: l.Path, FoundVia: "system-search"}, Handle: l.Handle}
		return r.take(st, CandidateTrace{Path: l.Path, FoundVia: lib.FoundVia}, lib, systemRoot(l.Path))
	}
	if st.Outcome == "" {
		st.Outcome = "nothing"
	}
	return nil
}

// plugin runs a plugin step and takes the first candidate that passes validation (and loads, for load).
func (r *run) plugin(st *StepTrace) *LoadedLibrary {
	resp, g, log, err := r.f.callPlugin(r.ctx, st.Step, r.e, r.rec, r.grant)
	st.Log = log
	if err != nil {
		st.Outcome, st.Detail = "failed", err.Error()
		return nil
	}
	st.Tried = hostTried(g.paths, resp.Tried)
	if resp.Error != "" {
		st.Outcome, st.Detail = "failed", fmt.Sprintf("pathfinder: plugin %q: %s", st.Step, resp.Error)
		return nil
	}
	st.Outcome = "nothing"
	var taken *LoadedLibrary
	for _, c := range resp.Candidates {
		// The plugin answers in guest paths; the trace, the result and the loader get host paths.
		// found_via is the label of the granted root the candidate lies in, never the plugin's own.
		ct := CandidateTrace{Path: g.tracePath(c.Path), FoundVia: g.foundVia(c.Path, st.Step)}
		hostPath, why := g.check(c.Path, r.e, r.f.platform)
		if why != "" {
			ct.Refused = why
			st.Candidates = append(st.Candidates, ct)
			continue
		}
		lib := &LoadedLibrary{Library: Library{Path: hostPath, FoundVia: ct.FoundVia}}
		if r.load {
			if !r.dependencies() {
				ct.Refused = "not loaded: " + r.depErr.Error()
				st.Candidates = append(st.Candidates, ct)
				st.Outcome = "failed"
				return nil
			}
			if r.e.RequiresAddDLLDirectory {
				if err := loader.AddDLLDirectory(filepath.Dir(hostPath)); err != nil {
					ct.Refused = err.Error()
					st.Candidates = append(st.Candidates, ct)
					continue
				}
			}
			beforeLoad(hostPath)
			if !g.sameAsValidated(hostPath) {
				ct.Refused = "changed between validation and load: not loaded"
				st.Candidates = append(st.Candidates, ct)
				continue
			}
			l, err := loader.Open(hostPath, r.e.RequiresRTLDDeepbind)
			if err != nil {
				ct.Refused = err.Error()
				st.Candidates = append(st.Candidates, ct)
				continue
			}
			if !g.sameAsValidated(l.Path) {
				// Swapped during the load itself: the handle is not handed out.
				ct.Refused = "changed while it was being loaded: " + l.Path + " is not the file that was checked"
				st.Candidates = append(st.Candidates, ct)
				continue
			}
			lib.Path, lib.Handle = l.Path, l.Handle
		}
		if taken = r.take(st, ct, lib, g.rootOf(c.Path)); taken != nil {
			return taken
		}
	}
	return nil
}

// beforeLoad runs between a candidate's validation and its load; tests swap the file here.
var beforeLoad = func(path string) {}

// dependencies loads the library's dependencies once, before the library itself. A required
// dependency's failure is this library's failure; an optional one's is ignored.
func (r *run) dependencies() bool {
	if r.depsDone {
		return r.depErr == nil
	}
	r.depsDone = true
	for _, dep := range r.e.Dependencies {
		if _, err := r.f.Load(r.ctx, dep); err != nil {
			se := &SearchError{Name: r.e.Name, Kind: r.e.Kind, Err: ErrNotFound, Dependency: dep, Cause: err}
			if de, ok := err.(*SearchError); ok {
				se.Err, se.Attempts = de.Err, de.Attempts
			}
			r.depErr = se
			return false
		}
	}
	for _, dep := range r.e.OptionalDependencies {
		r.f.Load(r.ctx, dep)
	}
	return true
}

// callPlugin builds the request and grants (through grant, nil for f.grant) for one plugin step and
// runs it.
func (f *Finder) callPlugin(ctx context.Context, step string, e *catalog.Entry, rec *observe.Recorder, grant func(*pluginConfig, *catalog.Entry, *observe.Recorder) (*granted, error)) (*abi.Response, *granted, []string, error) {
	p := f.cfg.plugins[step]
	mod, entry, err := f.module(ctx, p, rec)
	if err != nil {
		return nil, nil, nil, err
	}
	if grant == nil {
		grant = f.grant
	}
	g, err := grant(p, e, rec)
	if err != nil {
		return nil, nil, nil, err
	}
	req := abi.Request{
		ABI:      abi.Version,
		Step:     step,
		Entry:    entry,
		Kind:     e.Kind,
		Platform: f.platform,
		Library:  e.Library,
		Roots:    g.roots,
		Options:  p.options,
	}
	b, err := json.Marshal(&req)
	if err != nil {
		return nil, nil, nil, err
	}
	out, res, err := mod.Call(ctx, g.wasm, b, p.timeout)
	log := append(g.notes, res.Log...)
	if err != nil {
		return nil, nil, log, err
	}
	resp, err := decodeResponse(step, out)
	if err != nil {
		return nil, nil, log, err
	}
	return resp, g, log, nil
}
