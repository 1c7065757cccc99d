// Package search is what a search is asked and what it answers: the kinds, the libraries found and
// loaded, the explanation of a search step by step, and the compatibility check's verdicts. Package
// host asks, and returns each answer in these types as the engine behind it made it.
package search

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/printable"
)

// Kind is what a search looks for.
type Kind string

// The kinds.
const (
	DynamicLib Kind = "dynamic-lib" // a shared library: libcudart.so.13, cudart64_13.dll
	HeaderDir  Kind = "header-dir"  // the directory holding a header set: cuda_runtime.h, cuda/std/version
	Binary     Kind = "binary"      // a binary utility: nvcc, ptxas, nvdisasm
	StaticLib  Kind = "static-lib"  // a static library: libcudadevrt.a
	Bitcode    Kind = "bitcode"     // a bitcode library: libdevice.10.bc
)

// Kinds lists every kind, in the order listings show them.
func Kinds() []Kind { return []Kind{DynamicLib, HeaderDir, Binary, StaticLib, Bitcode} }

// ParseKind reads a kind's name ("dynamic-lib", "header-dir", "binary", "static-lib", "bitcode").
func ParseKind(s string) (Kind, error) {
	if k := Kind(s); slices.Contains(Kinds(), k) {
		return k, nil
	}
	return "", fmt.Errorf("unknown kind %q (dynamic-lib, header-dir, binary, static-lib or bitcode)", s)
}

// Host-owned steps that may appear in a step order besides plugin names.
const (
	StepAlreadyLoaded = "already-loaded" // a copy of the library already in the process
	StepSystem        = "system"         // the OS loader's own search
)

// Library is a library that was found.
type Library struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	Path string `json:"path"`
	// RealPath is where the links on Path's way lead, when there are any (a venv made of links into
	// a cache, a Nix or Spack tree, a soname link): the file that was checked and is loaded.
	RealPath string `json:"real_path,omitempty"`
	FoundVia string `json:"found_via"` // cuda.pathfinder's label: "site-packages", "conda", "CUDA_HOME", ...
	Step     string `json:"step"`      // the step that found it
	// LoadProblem is what the loader model says would stop a load of this dynamic library (a
	// DT_NEEDED library it would not find, a glibc older than the library needs), found without
	// loading anything; "" when nothing would. Load reports the loader's own words instead.
	LoadProblem string `json:"load_problem,omitempty"`
	CUDAInfo
	// PassedOver are the candidates the compatibility check passed over before this one, each with
	// why (its CUDA does not run with the driver, or with the answers given before).
	PassedOver []Attempt `json:"passed_over,omitempty"`
}

// LoadedLibrary is a library that was loaded into the process.
type LoadedLibrary struct {
	Library
	AlreadyLoaded bool    `json:"already_loaded"` // it was in the process before pathfinder looked
	Handle        uintptr `json:"-"`              // the loader's handle; never closed
	// Dependencies are the libraries loaded before it, in order (cublasLt for cublas), each with
	// its own; an optional dependency that was not found is left out.
	Dependencies []*LoadedLibrary `json:"dependencies,omitempty"`
}

// CUDAInfo is which CUDA an answer belongs to and how the driver runs it (docs/compatibility.md).
type CUDAInfo struct {
	CUDA        string `json:"cuda,omitempty"`         // "12.4", or "13" when only the major is known
	Version     string `json:"version,omitempty"`      // the artifact's own version, "12.4.127", where a source gives it
	VersionFrom string `json:"version_from,omitempty"` // the source that gave CUDA: toolkit, wheel, conda, file-name, catalog, version-info
	// Compat is how the driver runs it: "full" (its CUDA is the driver's or older) or
	// "minor-version" (a newer minor of the driver's major); "" when it was not checked.
	Compat string   `json:"compat,omitempty"`
	Notes  []string `json:"notes,omitempty"` // what the check could not establish, or leaves to the caller
}

// Compatibility is how strictly answers are held to the driver and to each other.
type Compatibility string

// The modes. Strict is the default.
const (
	// CompatibilityStrict passes over a candidate of a CUDA the driver does not run, and one of
	// another CUDA major than the Finder's first dated answer (or another major.minor than a
	// companion's); a candidate no source dates is kept back, and taken only when no dated
	// candidate that runs comes after it.
	CompatibilityStrict Compatibility = "strict"
	// CompatibilityBestEffort passes over only a candidate of a CUDA the driver does not run;
	// undated candidates and other majors are taken in order, with a note.
	CompatibilityBestEffort Compatibility = "best-effort"
	// CompatibilityOff checks nothing; answers still say which CUDA they belong to.
	CompatibilityOff Compatibility = "off"
)

// CompatibilityTrace is what a search's compatibility check knew.
type CompatibilityTrace struct {
	Mode    Compatibility `json:"mode"`
	Driver  string        `json:"driver,omitempty"`   // the driver's version, "550.54.14"
	MaxCUDA string        `json:"max_cuda,omitempty"` // the newest CUDA it runs natively, "12.4"
	Anchor  string        `json:"anchor,omitempty"`   // what later answers must match: "CUDA 12, the major of cudart (CUDA 12.4, …/libcudart.so.12)"
	Notes   []string      `json:"notes,omitempty"`    // an unknown driver, a forward-compatibility libcuda
}

// Explanation is one search, step by step.
type Explanation struct {
	Name     string        `json:"name"`
	Kind     Kind          `json:"kind"`
	Steps    []StepTrace   `json:"steps,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// Compatibility is what the search's compatibility check knew: the mode, the driver, the anchor.
	Compatibility *CompatibilityTrace `json:"compatibility,omitempty"`
	Result        *LoadedLibrary      `json:"result,omitempty"`
	// Err is why the search failed, a *host.SearchError; in JSON, "error" is its Code and "message" its text.
	Err error `json:"-"`
}

// MarshalJSON writes the explanation with its error, when the search failed: "error" (the
// host.SearchError's Code) and "message" (its text).
func (ex Explanation) MarshalJSON() ([]byte, error) {
	type plain Explanation
	out := struct {
		plain
		Error   string `json:"error,omitempty"`
		Message string `json:"message,omitempty"`
	}{plain: plain(ex)}
	var coded interface{ Code() string }
	if errors.As(ex.Err, &coded) {
		out.Error = coded.Code()
	}
	if ex.Err != nil {
		out.Message = ex.Err.Error()
	}
	return json.Marshal(out)
}

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

// Outcome is what a step did.
type Outcome string

// The outcomes.
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
	// Ignored are the variables the step said it passed over by its own rule (a CUDA_HOME that
	// CUDA_PATH hides), each with its value.
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
type Link struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// Attempt is one place a search looked, and why it did not take it.
type Attempt struct {
	Step   string `json:"step"`
	Path   string `json:"path,omitempty"`
	Reason string `json:"reason"`
}

// IgnoredInput is a variable a search would have used but passed over, and why: a relative
// CUDA_PATH, a VIRTUAL_ENV that does not exist. pathfinder never resolves a path against the
// working directory.
type IgnoredInput struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Reason string `json:"reason"`
}

// String is "$NAME=VALUE (REASON)", escaped, as the command prints it: the value is anyone's.
func (in IgnoredInput) String() string {
	return printable.String(fmt.Sprintf("$%s=%s (%s)", in.Name, in.Value, in.Reason))
}

// LibraryInfo describes a known name for listings.
type LibraryInfo struct {
	Name      string `json:"name"`
	Kind      Kind   `json:"kind"`
	Category  string `json:"category"` // "ctk", "third-party" or "driver"
	Available bool   `json:"available"`
	Pack      string `json:"pack"`
}
