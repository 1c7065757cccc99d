// Package report holds what a search or the driver probe reports besides its answer: an Attempt,
// a place looked and why it was not taken, and an Ignored input, one given but passed over. It
// imports only fmt and internal/printable, so that every layer (the loader's model, the result
// cache, the engine, host/driver) names the one type of each without pulling in the others.
package report

import (
	"fmt"

	"github.com/pathfinder-dev/pathfinder/internal/printable"
)

// Attempt is one place a search looked, and why it did not take it: the one type of it from the
// loader's model to the result cache (a plugin's own, on the wire, is abi.Attempt; host.Attempt is
// the public API's).
type Attempt struct {
	Step   string `json:"step"`
	Path   string `json:"path,omitempty"`
	Reason string `json:"reason"`
}

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
func (in Ignored) String() string {
	return printable.String(fmt.Sprintf("$%s=%s (%s)", in.Name, in.Value, in.Reason))
}
