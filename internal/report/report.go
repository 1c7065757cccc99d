// Package report holds an Ignored input, one a search or the driver probe was given but passed
// over, with the kind of its reason, which the public search.IgnoredInput leaves out. It imports only
// host/search, a leaf, so that every layer (the engine, doctor, host/driver) names the one type
// without pulling in the others. (A place looked is search.Attempt, from the loader's model to the
// result cache.)
package report

import "github.com/pathfinder-dev/pathfinder/host/search"

// Ignored is a variable or input a search or probe was given but passed over, and why: a relative
// CUDA_PATH, a VIRTUAL_ENV that does not exist, a PATHFINDER_DRIVER_VERSION that is no driver version.
type Ignored struct {
	Name   string `json:"name"` // the variable, "CUDA_PATH"
	Value  string `json:"value"`
	Reason string `json:"reason"`
	// Why is the reason's kind, for a reader that acts on it (doctor's fix) rather than print it;
	// Reason says it in words.
	Why Why `json:"-"`
}

// Why is the kind of reason an input is passed over.
type Why int

const (
	// Unusable: the value does not name what it should (no such directory, not a driver version).
	Unusable Why = iota
	// Relative: a relative path, which pathfinder never resolves against the working directory.
	Relative
	// SetAside: a step set it aside by its own rule, and said so in its response (envroots:
	// CUDA_HOME, where CUDA_PATH is set).
	SetAside
)

// RelativeReason is the Reason of every input passed over as Relative.
const RelativeReason = "not an absolute path; pathfinder never resolves one against the working directory"

// RelativePath is name=value passed over for being a relative path.
func RelativePath(name, value string) Ignored {
	return Ignored{Name: name, Value: value, Reason: RelativeReason, Why: Relative}
}

// String is "$NAME=VALUE (REASON)", as the command prints it: escaped, as the value is anyone's.
func (in Ignored) String() string { return in.Public().String() }

// Public is the input as host's answers show it, without Why.
func (in Ignored) Public() search.IgnoredInput {
	return search.IgnoredInput{Name: in.Name, Value: in.Value, Reason: in.Reason}
}
