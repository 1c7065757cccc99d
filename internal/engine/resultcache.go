package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/loader"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/printable"
	"github.com/pathfinder-dev/pathfinder/internal/resultcache"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
)

// cachedFind answers from the result cache when an entry for the search (with its compatibility
// check's inputs: the mode, the driver, the anchor) exists and everything it observed is unchanged, and re-checks the answer as a fresh search would; anything else is nil.
func (f *Engine) cachedFind(kind Kind, name string, check *checked) *search.Explanation {
	c := f.results.Read(f.results.Key(kind, name, check.key()))
	if c == nil || c.Sites != "" && c.Sites != f.discovery().hash || observe.Check(c.Seen, f.getenv, sandboxfs.See) != "" {
		return nil
	}
	for _, n := range c.Live {
		if loader.StillAbsent(n) && resultcache.ObservedLoaderSearch(c.Seen, n) {
			continue
		}
		if _, loaded := loader.Loaded(n); loaded {
			return nil
		}
	}
	// What the steps said they passed over, as they said it when the entry was written: once the
	// entry serves, the Engine's IgnoredInputs names it as it would after the search.
	reported := stepsIgnored{}
	for _, in := range c.Ignored {
		reported.add(printable.String(in.Step), setAside(search.IgnoredInput{Name: printable.String(in.Name), Value: in.Value, Reason: printable.String(in.Reason)}))
	}
	ex := &search.Explanation{Name: name, Kind: search.Kind(kind), Compatibility: check.trace(), Steps: []search.StepTrace{{
		Step: "result-cache", Outcome: search.OutcomeFound,
		Detail: fmt.Sprintf("nothing it depended on changed (%d observations)", len(c.Seen)),
	}}}
	if c.Library != nil {
		lib, err := f.revalidate(kind, name, fromCached(c.Library))
		if err != nil {
			return nil // a fresh search runs, and its steps say what they pass over
		}
		f.rememberIgnored(reported)
		ex.Result = &search.LoadedLibrary{Library: lib}
		return ex
	}
	se := &SearchError{Name: name, Kind: kind, Err: ErrNotFound, Platform: f.platform}
	for _, l := range c.Err.Looked { // shown as they are: an entry is not trusted to be escaped
		se.Looked = append(se.Looked, printable.String(l))
	}
	for _, a := range c.Err.Attempts {
		se.Attempts = append(se.Attempts, printableAttempt(a))
	}
	if e, ok := f.catalog.Lookup(kind, name); ok {
		se.Ignored = f.ignoredFor(e, reported)
	}
	ex.Err = se
	f.rememberIgnored(reported)
	return ex
}

// revalidate checks a cached answer as a fresh search checks the candidate it takes, by the same
// code: a plugin step's through that step's grants and validation (inside a directory granted to
// the step, a regular file of the right format, not under stubs/), the system step's through the
// loader model (dlopen would find it there now, and it is no stub). So an entry that someone rewrote,
// checksum and all, or a library rewritten in place with the same size, inode and mtime, is a miss,
// never an answer. It returns the library with its found_via derived afresh, or why it is refused.
func (f *Engine) revalidate(kind Kind, name string, lib search.Library) (search.Library, error) {
	e, ok := f.catalog.Lookup(kind, name)
	switch {
	case !ok || lib.Name != name || lib.Kind != search.Kind(kind):
		return lib, errors.New("another library's entry")
	case !slices.Contains(f.cfg.OrderFor(name), lib.Step):
		return lib, fmt.Errorf("step %q is not in the order", lib.Step)
	}
	rec := &observe.Recorder{} // what this looks at, the entry's observations hold already
	switch lib.Step {
	case StepAlreadyLoaded:
		return lib, errors.New("an already-loaded answer is never cached")
	case StepSystem:
		l, err := f.loaderModel(rec)
		if err != nil || kind != DynamicLib {
			return lib, errors.New("no loader model")
		}
		if p, err := resolveWith(l, name, e.FileNames(f.platform), rec); err != nil || p != lib.Path {
			return lib, errors.New("the loader would not find it there now")
		}
		lib.FoundVia = config.FoundViaSystem
		return lib, nil
	}
	p := f.cfg.Plugins[lib.Step]
	if p == nil {
		return lib, errors.New("no such plugin")
	}
	// The step's grants are the same for every library that has no grants of its own (its install
	// roots, its canaries): made once per Engine. What they depend on, the entry's observations hold.
	key := p.Name + "\x00" + strings.Join(e.InstallRootEnvVars, ",") + "\x00" + strings.Join(e.CanaryAnchors, ",")
	dirs, ok := f.regrants.load(key)
	if !ok {
		dirs = f.grant(p, e, rec).dirs
		f.regrants.store(key, dirs)
	}
	dirs.Rec = rec // no plugin ran, and no deadline: the check is the whole cost
	guest, err := dirs.Paths.ToGuest(lib.Path)
	if err != nil {
		return lib, err
	}
	host, err := dirs.Check(guest, e, f.platform)
	if err == nil && host != lib.Path {
		err = errors.New("not the path it names")
	}
	lib.FoundVia = dirs.FoundVia(guest, lib.Step)
	return lib, err
}

// storeFind records a fresh find's answer, unless it depended on something that may not hold next
// time: a step that failed (a timeout may pass), a library this process had already loaded, or what
// only a dlopen probe saw (seen is nil then).
func (f *Engine) storeFind(ctx context.Context, ex *search.Explanation, seen []observe.Observation, check *checked) {
	key := f.results.Key(abi.Kind(ex.Kind), ex.Name, check.key())
	if key == "" || ctx.Err() != nil || seen == nil {
		return
	}
	c := resultcache.Entry{Seen: seen}
	var se *SearchError
	switch {
	case ex.Result != nil && ex.Result.Step != StepAlreadyLoaded:
		c.Library = toCached(&ex.Result.Library)
	case errors.As(ex.Err, &se) && errors.Is(se, ErrNotFound) && se.Dependency == "":
		c.Err = &resultcache.Error{Looked: se.Looked, Attempts: slices.Clone(se.Attempts)}
	default:
		return
	}
	for _, st := range ex.Steps {
		switch {
		case st.Outcome == search.OutcomeFailed:
			return
		case st.Step == StepAlreadyLoaded && st.Outcome == search.OutcomeNothing:
			if e, ok := f.catalog.Lookup(abi.Kind(ex.Kind), ex.Name); ok {
				c.Live = e.FileNames(f.platform)
			}
		}
		for _, in := range st.Ignored {
			c.Ignored = append(c.Ignored, resultcache.Ignored{Step: st.Step, Name: in.Name, Value: in.Value, Reason: in.Reason})
		}
	}
	if f.sites.done.Load() { // else no search of this Engine used discovery, this one neither
		d := f.discovery()
		c.Sites, c.Seen = resultcache.SplitDiscovery(c.Seen, d.seen, d.hash)
	}
	if exe, err := os.Executable(); err == nil {
		fi, err := os.Stat(exe)
		c.Seen = append(slices.Clone(c.Seen), observe.Observation{Path: exe, What: observe.Stat, Seen: observe.StatSeen(fi, err)})
	}
	f.results.Write(key, &c)
}

// toCached is lib as the result cache keeps it.
func toCached(lib *search.Library) *resultcache.Library {
	c := &resultcache.Library{Name: lib.Name, Kind: abi.Kind(lib.Kind), Path: lib.Path, RealPath: lib.RealPath, FoundVia: lib.FoundVia,
		Step: lib.Step, LoadProblem: lib.LoadProblem, CUDA: lib.CUDA, Version: lib.Version, VersionFrom: lib.VersionFrom,
		Compat: lib.Compat, Notes: lib.Notes, PassedOver: slices.Clone(lib.PassedOver)}
	return c
}

// fromCached is the library a cache entry keeps; its text is the entry's, shown escaped as a
// plugin's would be.
func fromCached(c *resultcache.Library) search.Library {
	var notes []string
	for _, n := range c.Notes {
		notes = append(notes, printable.String(n))
	}
	var passed []search.Attempt
	for _, a := range c.PassedOver {
		passed = append(passed, printableAttempt(a))
	}
	return search.Library{Name: c.Name, Kind: search.Kind(c.Kind), Path: c.Path, RealPath: c.RealPath, FoundVia: c.FoundVia, Step: c.Step,
		LoadProblem: c.LoadProblem, PassedOver: passed, CUDAInfo: search.CUDAInfo{CUDA: printable.String(c.CUDA),
			Version: printable.String(c.Version), VersionFrom: printable.String(c.VersionFrom), Compat: printable.String(c.Compat), Notes: notes}}
}

// printableAttempt is an entry's attempt, shown as it is: an entry is not trusted to be escaped.
func printableAttempt(a search.Attempt) search.Attempt {
	return search.Attempt{Step: printable.String(a.Step), Path: printable.String(a.Path), Reason: printable.String(a.Reason)}
}
