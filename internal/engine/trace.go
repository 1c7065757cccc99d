// What a search reports: the explanation, each step's trace, each candidate's verdict.

package engine

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/guestpath"
	"github.com/pathfinder-dev/pathfinder/internal/printable"
	"github.com/pathfinder-dev/pathfinder/internal/report"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
)

// Explanation is one search, step by step.
type Explanation struct {
	Name     string        `json:"name"`
	Kind     Kind          `json:"kind"`
	Steps    []StepTrace   `json:"steps,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// Compatibility is what the search's compatibility check knew: the mode, the driver, the anchor.
	Compatibility *CompatibilityTrace `json:"compatibility,omitempty"`
	Result        *LoadedLibrary      `json:"result,omitempty"`
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
	Tried      []report.Attempt `json:"tried,omitempty"` // what the step looked at and passed over
	// Ignored are the granted variables the step said it passed over by its own rule (a CUDA_HOME
	// that CUDA_PATH hides), each with the host's value.
	Ignored []IgnoredInput `json:"ignored,omitempty"`
	Log     []string       `json:"log,omitempty"`
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
	CUDAInfo
	// VersionDetail is what dated it ("…/version.json: CUDA 12.4.1"), or which sources were asked.
	VersionDetail string `json:"version_detail,omitempty"`
	// Incompatible says Refused is the compatibility check's: its CUDA does not run here.
	Incompatible bool `json:"incompatible,omitempty"`
	// KeptBack says a strict search kept it back, undated, for when no dated candidate runs.
	KeptBack bool `json:"kept_back,omitempty"`
}

// Link is a symbolic link on a candidate's way: its path and what it holds (its target).
type Link = sandboxfs.Link

// Attempts flattens the trace into every place looked and why it was not taken.
func (ex *Explanation) Attempts() []report.Attempt {
	var out []report.Attempt
	for _, st := range ex.Steps {
		out = append(out, st.Tried...)
		for _, c := range st.Candidates {
			if !c.Taken {
				out = append(out, report.Attempt{Step: st.Step, Path: c.Path, Reason: c.Refused})
			}
		}
		// A step that failed on a found file (the loader would not load it, as every load does in a
		// pathfinder_static build) has no detail of its own: its candidate above says why.
		if (st.Outcome == OutcomeFailed || st.Outcome == OutcomeSkipped) && st.Detail != "" {
			out = append(out, report.Attempt{Step: st.Step, Reason: st.Detail})
		}
	}
	return out
}

// hostTried is what a plugin step tried, with its paths in host form; an entry that is no guest path
// (a variable's name such as "$CUDA_PATH", a file name, a relative path) is kept as it is.
func hostTried(paths guestpath.Map, step string, tried []abi.Attempt) []report.Attempt {
	out := make([]report.Attempt, len(tried))
	for i, a := range tried {
		out[i] = report.Attempt{Step: step, Path: a.Path, Reason: a.Reason}
		if h, err := paths.ToHost(a.Path); err == nil && paths.Windows() {
			out[i].Path = h
		}
	}
	return out
}

// tried records that the step looked at path and passed over it, escaped as a plugin's attempts
// are: a path may come from the environment (LD_LIBRARY_PATH's entries).
func (st *StepTrace) tried(path, reason string) {
	st.Tried = append(st.Tried, report.Attempt{Step: st.Step, Path: printable.String(path), Reason: printable.String(reason)})
}
