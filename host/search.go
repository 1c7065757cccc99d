package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/candidate"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/guestpath"
	"github.com/pathfinder-dev/pathfinder/internal/loader"
	"github.com/pathfinder-dev/pathfinder/internal/loadermodel"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/trust"
)

// Explanation is one search, step by step.
type Explanation struct {
	Name     string         `json:"name"`
	Kind     Kind           `json:"kind"`
	Steps    []StepTrace    `json:"steps,omitempty"`
	Duration time.Duration  `json:"duration_ns"`
	Result   *LoadedLibrary `json:"result,omitempty"`
	// Err is why the search failed, a *SearchError; in JSON, "error" is its Code and "message" its text.
	Err error `json:"-"`
}

// MarshalJSON writes the explanation with its error, when the search failed: "error" (the
// SearchError's Code) and "message" (its text).
func (ex Explanation) MarshalJSON() ([]byte, error) {
	type plain Explanation
	out := struct {
		plain
		Error   string `json:"error,omitempty"`
		Message string `json:"message,omitempty"`
	}{plain: plain(ex)}
	var se *SearchError
	if errors.As(ex.Err, &se) {
		out.Error = se.Code()
	}
	if ex.Err != nil {
		out.Message = ex.Err.Error()
	}
	return json.Marshal(out)
}

// Outcome is what a step did.
type Outcome string

const (
	OutcomeFound   Outcome = "found"   // it proposed a candidate that was taken
	OutcomeNothing Outcome = "nothing" // it ran, and nothing it proposed was taken
	OutcomeFailed  Outcome = "failed"  // it could not run, or a found file would not load: Detail says why
	OutcomeSkipped Outcome = "skipped" // it does not apply to this search: Detail says why
)

// StepTrace is what one step did.
type StepTrace struct {
	Step       string           `json:"step"`
	Outcome    Outcome          `json:"outcome"`
	Detail     string           `json:"detail,omitempty"`
	Duration   time.Duration    `json:"duration_ns"`
	Candidates []CandidateTrace `json:"candidates,omitempty"`
	Tried      []Attempt        `json:"tried,omitempty"` // what the step looked at and passed over
	Log        []string         `json:"log,omitempty"`
}

// CandidateTrace is a candidate a step proposed and the host's verdict on it.
type CandidateTrace struct {
	Path     string `json:"path"`
	FoundVia string `json:"found_via"`
	Taken    bool   `json:"taken"`
	Refused  string `json:"refused,omitempty"` // why the host did not take it
	// LoadProblem is what would stop a load of a found shared object, predicted without loading.
	LoadProblem string `json:"load_problem,omitempty"`
	// Note is what else a load would do with it: return the copy already in the process instead.
	Note string `json:"note,omitempty"`
	// Links are the symbolic links on Path's way, in order, each with what it holds.
	Links []Link `json:"links,omitempty"`
}

// Link is a symbolic link on a candidate's way: its path and what it holds (its target).
type Link = observe.Link

// Attempts flattens the trace into every place looked and why it was not taken.
func (ex *Explanation) Attempts() []Attempt {
	var out []Attempt
	for _, st := range ex.Steps {
		out = append(out, st.Tried...)
		for _, c := range st.Candidates {
			if !c.Taken {
				out = append(out, Attempt{Step: st.Step, Path: c.Path, Reason: c.Refused})
			}
		}
		// A step that failed on a found file (the loader would not load it, as every load does in a
		// pathfinder_static build) has no detail of its own: its candidate above says why.
		if (st.Outcome == OutcomeFailed || st.Outcome == OutcomeSkipped) && st.Detail != "" {
			out = append(out, Attempt{Step: st.Step, Reason: st.Detail})
		}
	}
	return out
}

// searchAll runs the steps for name in order until one yields a library; load also loads it. With
// collect, it runs every step and returns every valid candidate with its root (for FindTogether)
// instead of stopping at the first. It also returns everything the search observed.
func (f *Finder) searchAll(ctx context.Context, kind Kind, name string, load, collect bool) (ex *Explanation, valid []rootedLibrary, seen []observe.Observation) {
	start := time.Now()
	ex = &Explanation{Name: name, Kind: kind}
	defer func() { ex.Duration = time.Since(start) }()

	e, ok := f.catalog.Lookup(kind, name)
	if !ok {
		ex.Err = f.unknown(kind, name)
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
	for _, step := range f.cfg.OrderFor(name) {
		t0 := time.Now()
		st := StepTrace{Step: step}
		if h := f.hooks.beforeStep; h != nil {
			h(step)
		}
		lib := r.step(&st)
		st.Duration = time.Since(t0)
		ex.Steps = append(ex.Steps, st)
		if r.depErr != nil {
			ex.Err = r.depErr
			return
		}
		if lib != nil {
			lib.Name, lib.Kind, lib.Dependencies = name, ex.Kind, r.deps
			if lib.Step == "" {
				lib.Step = step
			}
			ex.Result = lib
			return
		}
		if r.loadErr != nil || ctx.Err() != nil {
			break
		}
	}
	ex.Err = r.failure(ex)
	return
}

// failure is why a search that yielded nothing failed: the context's end, a found file the loader
// would not load, a file found but refused, or nothing found at all.
func (r *run) failure(ex *Explanation) error {
	se := &SearchError{Name: ex.Name, Kind: ex.Kind, Err: ErrNotFound, Platform: r.f.platform,
		Looked: r.e.FileNames(r.f.platform), Attempts: ex.Attempts(), Ignored: r.f.ignoredFor(r.e)}
	if err := r.ctx.Err(); err != nil {
		return &SearchError{Name: ex.Name, Kind: ex.Kind, Err: err, Platform: r.f.platform, Attempts: se.Attempts}
	}
	if r.loadErr != nil {
		se.Err, se.Path, se.Reason = ErrLoadFailed, r.loadErr.path, r.loadErr.why
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

// The found_via labels of the host's own steps, cuda.pathfinder's.
const (
	viaAlreadyLoaded = "was-already-loaded-from-elsewhere"
	viaSystem        = "system-search"
)

// run is one search's state: whether the dependencies are loaded yet.
type run struct {
	f        *Finder
	ctx      context.Context
	e        *catalog.Entry
	load     bool
	depsDone bool
	depErr   error
	deps     []*LoadedLibrary // the dependencies loaded
	// collect keeps going past the first valid candidate and gathers every one, with its root.
	collect bool
	valid   []rootedLibrary
	// rec records everything the search observes, for the result cache.
	rec *observe.Recorder
	// loadErr is a found file the loader would not load: the search stops there.
	loadErr *loadFailure
	// model is the search's one model of the OS loader, made on first use: it reads the
	// interpreter and ld.so.cache once for every resolution the search makes.
	model    *loadermodel.Loader
	modelErr error
}

// loaderModel is the Finder's loaderModel, one per search.
func (r *run) loaderModel() (*loadermodel.Loader, error) {
	if r.model == nil && r.modelErr == nil {
		r.model, r.modelErr = r.f.loaderModel(r.rec)
	}
	return r.model, r.modelErr
}

// rootedLibrary is a valid candidate and the root it came from: the granted directory it is in (a
// site-packages dir, a conda prefix, an install root), or the toolkit root of a system library.
type rootedLibrary struct {
	lib  Library
	root string
}

// take records lib as found, or, when collecting, as one more candidate: then the search goes on.
func (r *run) take(st *StepTrace, ct CandidateTrace, lib *LoadedLibrary, root string) *LoadedLibrary {
	st.Outcome = OutcomeFound
	if r.collect {
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

// hostTried is what a plugin step tried, with its paths in host form; an entry that is no guest path
// (a variable's name such as "$CUDA_PATH", a file name, a relative path) is kept as it is.
func hostTried(paths guestpath.Map, step string, tried []abi.Attempt) []Attempt {
	out := make([]Attempt, len(tried))
	for i, a := range tried {
		out[i] = Attempt{Step: step, Path: a.Path, Reason: a.Reason}
		if h, err := paths.ToHost(a.Path); err == nil && paths.Windows() {
			out[i].Path = h
		}
	}
	return out
}

// tried records that the step looked at path and passed over it.
func (st *StepTrace) tried(path, reason string) {
	st.Tried = append(st.Tried, Attempt{Step: st.Step, Path: path, Reason: reason})
}

func (r *run) step(st *StepTrace) *LoadedLibrary {
	names := r.e.FileNames(r.f.platform)
	if (st.Step == StepAlreadyLoaded || st.Step == StepSystem) && r.e.Kind != abi.KindDynamicLib {
		st.Outcome, st.Detail = OutcomeSkipped, "only dynamic libraries are known to the loader"
		return nil
	}
	switch st.Step {
	case StepAlreadyLoaded:
		if !r.f.native() {
			st.Outcome, st.Detail = OutcomeSkipped, "the search is for "+r.f.platform.String()+", not this process"
			return nil
		}
		if !loader.Available {
			st.Outcome, st.Detail = OutcomeSkipped, loader.ErrUnavailable.Error()
			return nil
		}
		if lib := r.alreadyLoaded(); lib != nil {
			return r.take(st, CandidateTrace{Path: lib.Path, FoundVia: lib.FoundVia}, lib, systemRoot(lib.Path))
		}
		for _, n := range names {
			st.tried(n, "not loaded in this process")
		}
		st.Outcome = OutcomeNothing
		return nil
	case StepSystem:
		return r.system(st, names)
	}
	return r.plugin(st)
}

// system asks the OS loader: for load it dlopens each soname; for find it asks the loader model
// where dlopen would find it, so that find never loads anything. Neither ever yields a stub: where
// the loader's search reaches one first, the model's next place is loaded by its path instead.
func (r *run) system(st *StepTrace, names []string) *LoadedLibrary {
	if !r.load {
		return r.systemModel(st, names)
	}
	if !loader.Available {
		st.Outcome, st.Detail = OutcomeSkipped, loader.ErrUnavailable.Error()
		return nil
	}
	if !r.dependencies() {
		st.Outcome, st.Detail = OutcomeFailed, r.depErr.Error()
		return nil
	}
	if lib := r.alreadyLoaded(); lib != nil {
		return r.take(st, CandidateTrace{Path: lib.Path, FoundVia: lib.FoundVia}, lib, systemRoot(lib.Path))
	}
	model, _ := r.loaderModel() // nil where the loader is not modeled
	st.Outcome = OutcomeNothing
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
			ct := CandidateTrace{Path: next, FoundVia: viaSystem}
			if err != nil {
				ct.Refused = err.Error()
				st.Candidates = append(st.Candidates, ct)
				continue
			}
			if lib := r.loadCandidate(st, &ct, c); lib != nil {
				return r.take(st, ct, lib, systemRoot(lib.Path))
			}
			return nil
		}
		l, err := loader.Open(n, r.e.RequiresRTLDDeepbind)
		if err != nil {
			if modelErr == nil { // the loader found it and would not load it
				st.Candidates = append(st.Candidates, CandidateTrace{Path: res.Path, FoundVia: viaSystem, Refused: err.Error()})
				st.Outcome = OutcomeFailed
				r.loadErr = &loadFailure{res.Path, err.Error()}
				return nil
			}
			st.tried(n, err.Error())
			continue
		}
		if candidate.IsStubFile(l.Path) { // the model did not see it coming: give it back, never use it
			loader.Unload(l.Handle)
			st.Candidates = append(st.Candidates, CandidateTrace{Path: l.Path, FoundVia: viaSystem,
				Refused: "the system loader loaded a stub here; unloaded, never used"})
			continue
		}
		lib := &LoadedLibrary{Library: Library{Path: l.Path, FoundVia: viaSystem}, Handle: l.Handle}
		return r.take(st, CandidateTrace{Path: l.Path, FoundVia: lib.FoundVia}, lib, systemRoot(l.Path))
	}
	return nil
}

// pastStub records that the loader's search for soname reaches the stub at res first, and returns
// the place the search would reach next, "" for none: the library a build's stubs directory on
// LD_LIBRARY_PATH hides.
func (r *run) pastStub(st *StepTrace, model *loadermodel.Loader, soname string, res loadermodel.Resolution) string {
	st.Candidates = append(st.Candidates, CandidateTrace{Path: res.Path, FoundVia: viaSystem, Refused: stubRefusal(res)})
	past := *model
	past.Refuse = refuseStub
	next, err := past.Resolve(soname)
	observeResolution(r.rec, next, err)
	if err != nil {
		return ""
	}
	return next.Path
}

// plugin runs a plugin step and takes the first candidate that passes validation (and loads, for load).
func (r *run) plugin(st *StepTrace) *LoadedLibrary {
	resp, g, log, err := r.f.callPlugin(r.ctx, st.Step, r.e, r.rec)
	st.Log = log
	if err != nil {
		st.Outcome, st.Detail = OutcomeFailed, err.Error()
		return nil
	}
	st.Tried = hostTried(g.dirs.Paths, st.Step, resp.Tried)
	if resp.Error != "" {
		st.Outcome, st.Detail = OutcomeFailed, (&PluginError{Plugin: st.Step, Op: "search", Err: errors.New(resp.Error)}).Error()
		return nil
	}
	st.Outcome = OutcomeNothing
	var taken *LoadedLibrary
	for _, c := range resp.Candidates {
		// The plugin answers in guest paths; the trace, the result and the loader get host paths.
		// found_via is the label of the granted root the candidate lies in, never the plugin's own.
		ct := CandidateTrace{Path: g.dirs.TracePath(c.Path), FoundVia: g.dirs.FoundVia(c.Path, st.Step)}
		cand, err := g.dirs.Open(c.Path, r.e, r.f.platform)
		if err != nil {
			ct.Refused = err.Error()
			st.Candidates = append(st.Candidates, ct)
			continue
		}
		ct.Links = cand.Links
		var lib *LoadedLibrary
		if r.load {
			if lib = r.loadCandidate(st, &ct, cand); lib == nil {
				if r.stopped() {
					return nil
				}
				continue
			}
		} else {
			lib = &LoadedLibrary{Library: Library{Path: cand.Host, RealPath: cand.Real, FoundVia: ct.FoundVia}}
			r.predictLoad(&ct, lib, cand.Needs)
			cand.Close()
		}
		root, _ := g.dirs.DirOf(c.Path)
		if taken = r.take(st, ct, lib, root); taken != nil {
			return taken
		}
	}
	return nil
}

// stopped reports whether the search ends at this step: a dependency failed, or a found file would
// not load. cuda.pathfinder stops there too: a later step's copy is not what this step found.
func (r *run) stopped() bool { return r.depErr != nil || r.loadErr != nil }

// loadFailure is a found file the loader would not load.
type loadFailure struct{ path, why string }

// loadCandidate loads the checked file c after the library's dependencies, unless a copy of the
// library is already in the process: that copy is returned instead, and ct (the found file's
// trace) says why the file was not loaded. A process never gets a second copy of a library from
// pathfinder. c is closed. nil means not loaded: ct is in the trace with why, and r.stopped()
// tells whether the search goes on.
func (r *run) loadCandidate(st *StepTrace, ct *CandidateTrace, c *candidate.File) *LoadedLibrary {
	defer c.Close()
	refuse := func(why string) *LoadedLibrary {
		ct.Refused = why
		st.Candidates = append(st.Candidates, *ct)
		return nil
	}
	if !r.dependencies() {
		st.Outcome = OutcomeFailed
		return refuse("not loaded: " + r.depErr.Error())
	}
	if lib := r.alreadyLoaded(); lib != nil {
		refuse(fmt.Sprintf("not loaded: a copy is already in this process (%s), and a process never gets a second", lib.Path))
		*ct = CandidateTrace{Path: lib.Path, FoundVia: lib.FoundVia}
		return lib
	}
	if r.e.RequiresAddDLLDirectory {
		if err := loader.AddDLLDirectory(filepath.Dir(c.Host)); err != nil {
			return refuse(err.Error())
		}
	}
	// Where another user could change the path between the check and the load, the loader is
	// given the checked file itself; elsewhere the path, which keeps $ORIGIN meaning its directory.
	viaDescriptor := trust.OthersCanReplace(c.Host) != nil
	if h := r.f.hooks.beforeLoad; h != nil {
		h(c.Host)
	}
	if !viaDescriptor && !sameFile(c.Host, c.Info) {
		return refuse("changed between validation and load: not loaded")
	}
	if h := r.f.hooks.beforeDlopen; h != nil {
		h(c.Host)
	}
	l, err := loader.OpenFile(c.File, c.Host, r.e.RequiresRTLDDeepbind, viaDescriptor)
	if err != nil {
		st.Outcome = OutcomeFailed
		r.loadErr = &loadFailure{c.Host, err.Error()}
		return refuse(err.Error())
	}
	// What the loader mapped must be the file checked, whatever became of the path meanwhile.
	checked, err := loader.MappedFrom(l.Handle, c.File)
	if err != nil {
		checked = sameFile(l.Path, c.Info) // no /proc, or Windows, whose OpenFile held the file
	}
	switch {
	case viaDescriptor || checked && l.Path == c.Host:
	case checked:
		// The loader matched the file to an object it already had under another name (a hard
		// link): that object is what the process has.
		refuse(fmt.Sprintf("not loaded: the same file is already in this process as %s", l.Path))
		*ct = CandidateTrace{Path: l.Path, FoundVia: viaAlreadyLoaded}
		return &LoadedLibrary{Library: Library{Path: l.Path, FoundVia: viaAlreadyLoaded, Step: StepAlreadyLoaded}, AlreadyLoaded: true, Handle: l.Handle}
	default:
		// Changed by this user during the load itself: the handle is not handed out, and the
		// library no check saw is given back.
		loader.Unload(l.Handle)
		return refuse("changed while it was being loaded: " + l.Path + " is not the file that was checked")
	}
	return &LoadedLibrary{Library: Library{Path: c.Host, RealPath: c.Real, FoundVia: ct.FoundVia}, Handle: l.Handle}
}

// sameFile reports whether p is still the file fi describes.
func sameFile(p string, fi fs.FileInfo) bool {
	now, err := os.Stat(p)
	return err == nil && os.SameFile(fi, now) && now.Size() == fi.Size() && now.ModTime().Equal(fi.ModTime())
}

// alreadyLoaded is the copy of the library already in the process, by any of its declared names,
// or nil.
func (r *run) alreadyLoaded() *LoadedLibrary {
	for _, n := range r.e.FileNames(r.f.platform) {
		if l, ok := loader.Loaded(n); ok {
			return &LoadedLibrary{Library: Library{Path: l.Path, FoundVia: viaAlreadyLoaded, Step: StepAlreadyLoaded}, AlreadyLoaded: true, Handle: l.Handle}
		}
	}
	return nil
}

// dependencies loads the library's dependencies once, before the library itself. A required
// dependency's failure is this library's failure; an optional one's is ignored.
func (r *run) dependencies() bool {
	if r.depsDone {
		return r.depErr == nil
	}
	r.depsDone = true
	for _, dep := range r.e.Dependencies {
		lib, err := r.f.Load(r.ctx, dep)
		if err != nil {
			se := &SearchError{Name: r.e.Name, Kind: r.e.Kind, Err: ErrNotFound, Dependency: dep, Cause: err}
			if de, ok := err.(*SearchError); ok {
				se.Err, se.Attempts = de.Err, de.Attempts
			}
			r.depErr = se
			return false
		}
		r.deps = append(r.deps, lib)
	}
	for _, dep := range r.e.OptionalDependencies {
		if lib, err := r.f.Load(r.ctx, dep); err == nil {
			r.deps = append(r.deps, lib)
		}
	}
	return true
}
