// What a search reports: the explanation, each step's trace, each candidate's verdict.

package engine

import (
	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/guestpath"
	"github.com/pathfinder-dev/pathfinder/internal/printable"
)

// hostTried is what a plugin step tried, with its paths in host form; an entry that is no guest path
// (a variable's name such as "$CUDA_PATH", a file name, a relative path) is kept as it is.
func hostTried(paths guestpath.Map, step string, tried []abi.Attempt) []search.Attempt {
	out := make([]search.Attempt, len(tried))
	for i, a := range tried {
		out[i] = search.Attempt{Step: step, Path: a.Path, Reason: a.Reason}
		if h, err := paths.ToHost(a.Path); err == nil && paths.Windows() {
			out[i].Path = h
		}
	}
	return out
}

// tried records that the step looked at path and passed over it, escaped as a plugin's attempts
// are: a path may come from the environment (LD_LIBRARY_PATH's entries).
func tried(st *search.StepTrace, path, reason string) {
	st.Tried = append(st.Tried, search.Attempt{Step: st.Step, Path: printable.String(path), Reason: printable.String(reason)})
}
