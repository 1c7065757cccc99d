// Package input holds Ignored, the one type host and host/driver both report for an input they
// were given but did not use. It imports only fmt and internal/printable, so that host/driver can
// name it without pulling in what host and internal/inspect import.
package input

import (
	"fmt"

	"github.com/pathfinder-dev/pathfinder/internal/printable"
)

// Ignored is a variable or input a search or probe was given but passed over, and why: a relative
// CUDA_PATH, a VIRTUAL_ENV that does not exist, a PATHFINDER_DRIVER_VERSION that is no driver version.
type Ignored struct {
	Name   string `json:"name"` // the variable, "CUDA_PATH"
	Value  string `json:"value"`
	Reason string `json:"reason"`
}

// String is "$NAME=VALUE (REASON)", as the command prints it: escaped, as the value is anyone's.
func (in Ignored) String() string {
	return printable.String(fmt.Sprintf("$%s=%s (%s)", in.Name, in.Value, in.Reason))
}
