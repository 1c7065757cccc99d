// Loading a checked candidate: the library's dependencies first, never a second copy in the process,
// and what the loader mapped compared with the file that was checked.

package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/candidate"
	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/loader"
	"github.com/pathfinder-dev/pathfinder/internal/trust"
)

// stopped reports whether the search ends at this step: a dependency failed, or a found file would
// not load. cuda.pathfinder stops there too: a later step's copy is not what this step found.
func (r *cascade) stopped() bool { return r.depErr != nil || r.loadErr != nil }

// loadFailure is a found file the loader would not load.
type loadFailure struct{ path, why string }

// loadCandidate loads the checked file c after the library's dependencies, unless a copy of the
// library is already in the process: that copy is returned instead, and ct (the found file's
// trace) says why the file was not loaded. A process never gets a second copy of a library from
// pathfinder. c is closed. nil means not loaded: ct is in the trace with why, and r.stopped()
// tells whether the search goes on.
func (r *cascade) loadCandidate(st *search.StepTrace, ct *search.CandidateTrace, c *candidate.File) *search.LoadedLibrary {
	defer c.Close()
	refuse := func(why string) *search.LoadedLibrary {
		ct.Refused = why
		st.Candidates = append(st.Candidates, *ct)
		return nil
	}
	if !r.dependencies() {
		st.Outcome = search.OutcomeFailed
		return refuse("not loaded: " + r.depErr.Error())
	}
	if lib := r.alreadyLoaded(); lib != nil {
		refuse(fmt.Sprintf("not loaded: a copy is already in this process (%s), and a process never gets a second", lib.Path))
		*ct = search.CandidateTrace{Path: lib.Path, FoundVia: lib.FoundVia}
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
		st.Outcome = search.OutcomeFailed
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
		*ct = search.CandidateTrace{Path: l.Path, FoundVia: config.FoundViaAlreadyLoaded}
		return &search.LoadedLibrary{Library: search.Library{Path: l.Path, FoundVia: config.FoundViaAlreadyLoaded, Step: StepAlreadyLoaded}, AlreadyLoaded: true, Handle: l.Handle}
	default:
		// Changed by this user during the load itself: the handle is not handed out, and the
		// library no check saw is given back.
		loader.Unload(l.Handle)
		return refuse("changed while it was being loaded: " + l.Path + " is not the file that was checked")
	}
	return &search.LoadedLibrary{Library: search.Library{Path: c.Host, RealPath: c.Real, FoundVia: ct.FoundVia}, Handle: l.Handle}
}

// sameFile reports whether p is still the file fi describes.
func sameFile(p string, fi fs.FileInfo) bool {
	now, err := os.Stat(p)
	return err == nil && os.SameFile(fi, now) && now.Size() == fi.Size() && now.ModTime().Equal(fi.ModTime())
}

// alreadyLoaded is the copy of the library already in the process, by any of its declared names,
// or nil.
func (r *cascade) alreadyLoaded() *search.LoadedLibrary {
	for _, n := range r.e.FileNames(r.f.platform) {
		if l, ok := loader.Loaded(n); ok {
			return &search.LoadedLibrary{Library: search.Library{Path: l.Path, FoundVia: config.FoundViaAlreadyLoaded, Step: StepAlreadyLoaded}, AlreadyLoaded: true, Handle: l.Handle}
		}
	}
	return nil
}

// dependencies loads the library's dependencies once, before the library itself. A required
// dependency's failure is this library's failure; an optional one's is ignored.
func (r *cascade) dependencies() bool {
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
