package host

import (
	"debug/elf"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/internal/ldso"
)

// systemModel answers the system step for find: where dlopen would find each soname, from a model of
// the loader's search (LD_LIBRARY_PATH, /etc/ld.so.cache, the default directories), loading nothing.
func (r *run) systemModel(st *StepTrace, names []string) *LoadedLibrary {
	if r.f.platform.OS != "linux" {
		st.Outcome, st.Detail = "skipped", "the "+r.f.platform.OS+" loader's search is not modeled; load on that platform to use it"
		return nil
	}
	l := &ldso.Loader{Getenv: r.f.opts.getenv}
	if r.f.platform.Arch == "arm64" {
		l.Machine = elf.EM_AARCH64
	}
	st.Outcome = "nothing"
	for _, n := range names {
		res, err := l.Resolve(n)
		for _, a := range res.Tried {
			st.Tried = append(st.Tried, abi.Attempt{Path: a.Path, Reason: a.Reason})
		}
		if err != nil {
			st.Tried = append(st.Tried, abi.Attempt{Path: n, Reason: strings.TrimPrefix(err.Error(), "pathfinder: ")})
			continue
		}
		ct := CandidateTrace{Path: res.Path, FoundVia: "system-search"}
		if slices.Contains(strings.Split(res.Path, "/"), "stubs") {
			ct.Refused = "a stubs/ library: for linking only, never loaded"
			st.Candidates = append(st.Candidates, ct)
			continue
		}
		ct.Taken = true
		st.Candidates = append(st.Candidates, ct)
		st.Outcome = "found"
		return &LoadedLibrary{Library: Library{Path: res.Path, FoundVia: "system-search"}}
	}
	return nil
}
