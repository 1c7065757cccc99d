package host

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/internal/loader"
	"github.com/pathfinder-dev/pathfinder/host/internal/wasm"
)

// Sentinels for errors.Is.
var (
	ErrUnknown         = errors.New("pathfinder: unknown library")
	ErrNotAvailable    = errors.New("pathfinder: library not available on this platform")
	ErrNotFound        = errors.New("pathfinder: library not found")
	ErrABIMismatch     = wasm.ErrABIMismatch
	ErrLoadUnavailable = loader.ErrUnavailable
)

// Attempt is one place a search looked, and why it did not take it.
type Attempt struct {
	Step   string `json:"step"`
	Path   string `json:"path,omitempty"`
	Reason string `json:"reason"`
}

// SearchError is a failed search: the library, the sentinel it wraps, and every attempt.
type SearchError struct {
	Name        string
	Kind        abi.Kind
	Err         error // ErrUnknown, ErrNotAvailable or ErrNotFound
	Platform    abi.Platform
	Looked      []string  // the file names looked for
	Attempts    []Attempt // every place looked, in order
	Suggestions []string  // close names, for ErrUnknown
	Dependency  string    // set when a dependency failed: its name
	Cause       error     // the dependency's own error
	Reason      string    // why, when ErrNotAvailable is not about the platform's catalog
}

func (e *SearchError) Error() string {
	switch {
	case e.Dependency != "":
		return fmt.Sprintf("pathfinder: cannot load %q: its dependency %q failed: %s", e.Name, e.Dependency, strings.TrimPrefix(e.Cause.Error(), "pathfinder: "))
	case errors.Is(e.Err, ErrUnknown):
		return fmt.Sprintf("pathfinder: unknown %s %q%s", kindNoun(e.Kind), e.Name, suggestion(e.Suggestions))
	case errors.Is(e.Err, ErrNotAvailable) && e.Reason != "":
		return fmt.Sprintf("pathfinder: %s %q: %s", kindNoun(e.Kind), e.Name, e.Reason)
	case errors.Is(e.Err, ErrNotAvailable):
		return fmt.Sprintf("pathfinder: %s %q is not available on %s", kindNoun(e.Kind), e.Name, e.Platform)
	}
	return fmt.Sprintf("pathfinder: %q not found: looked for %s in %d places (pathfinder explain %s lists them)",
		e.Name, strings.Join(e.Looked, " or "), len(e.Attempts), e.Name)
}

func (e *SearchError) Unwrap() error { return e.Err }

// Code is the short error name the CLI prints: "unknown", "not-available" or "not-found".
func (e *SearchError) Code() string {
	switch {
	case errors.Is(e.Err, ErrUnknown):
		return "unknown"
	case errors.Is(e.Err, ErrNotAvailable):
		return "not-available"
	}
	return "not-found"
}

// kindNoun names a kind in messages.
func kindNoun(k Kind) string {
	switch k {
	case abi.KindHeaderDir:
		return "header set"
	case abi.KindBinary:
		return "binary utility"
	case abi.KindStaticLib:
		return "static library"
	case abi.KindBitcode:
		return "bitcode library"
	}
	return "library"
}

func suggestion(names []string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return " (did you mean " + q[0] + "?)"
	}
	return " (did you mean " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1] + "?)"
}
