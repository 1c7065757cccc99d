package host

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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
	ErrRefused         = errors.New("pathfinder: library found but refused")      // a file was found, and validation refused it
	ErrLoadFailed      = errors.New("pathfinder: library found but not loadable") // the loader would not load the file found
	ErrABIMismatch     = wasm.ErrABIMismatch
	ErrLoadUnavailable = loader.ErrUnavailable
)

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
	Name   string `json:"name"` // the variable, "CUDA_PATH"
	Value  string `json:"value"`
	Reason string `json:"reason"`
}

func (in IgnoredInput) String() string {
	return fmt.Sprintf("$%s=%s (%s)", in.Name, in.Value, in.Reason)
}

// SearchError is a failed search: the library, the sentinel it wraps, and every attempt.
type SearchError struct {
	Name        string
	Kind        abi.Kind
	Err         error // ErrUnknown, ErrNotAvailable, ErrNotFound, ErrRefused, ErrLoadFailed, or the context's error
	Platform    abi.Platform
	Looked      []string       // the file names looked for
	Attempts    []Attempt      // every place looked, in order
	Suggestions []string       // close names, for ErrUnknown
	Dependency  string         // set when a dependency failed: its name
	Cause       error          // the dependency's own error
	Path        string         // the file found, for ErrRefused and ErrLoadFailed
	Reason      string         // why it was refused or not loaded, or why ErrNotAvailable when not the platform's catalog
	Ignored     []IgnoredInput // variables the search passed over
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
	case errors.Is(e.Err, ErrRefused):
		return fmt.Sprintf("pathfinder: found %s for %q but refused it: %s%s (%s lists all %d places looked)",
			e.Path, e.Name, e.Reason, e.ignored(), e.explainCommand(), len(e.Attempts))
	case errors.Is(e.Err, ErrLoadFailed):
		return fmt.Sprintf("pathfinder: found %s for %q but could not load it: %s (%s lists the steps)",
			e.Path, e.Name, e.Reason, e.explainCommand())
	case !errors.Is(e.Err, ErrNotFound): // the context's end
		return fmt.Sprintf("pathfinder: search for %q stopped: %v", e.Name, e.Err)
	}
	return fmt.Sprintf("pathfinder: %q not found: looked for %s in %d places%s (%s lists them)",
		e.Name, strings.Join(e.Looked, " or "), len(e.Attempts), e.ignored(), e.explainCommand())
}

// ignored names the variables the search passed over.
func (e *SearchError) ignored() string {
	if len(e.Ignored) == 0 {
		return ""
	}
	parts := make([]string, len(e.Ignored))
	for i, in := range e.Ignored {
		parts[i] = in.String()
	}
	return "; ignored " + strings.Join(parts, ", ")
}

// explainCommand is the command that shows this search step by step, with the flags it needs.
func (e *SearchError) explainCommand() string {
	cmd := "pathfinder explain " + e.Name
	if e.Kind != "" && e.Kind != abi.KindDynamicLib {
		cmd += " --kind " + string(e.Kind)
	}
	if e.Platform.OS != "" && (e.Platform.OS != runtime.GOOS || e.Platform.Arch != runtime.GOARCH) {
		cmd += " --target " + e.Platform.OS + "/" + e.Platform.Arch
	}
	return cmd
}

func (e *SearchError) Unwrap() error { return e.Err }

// Code is the short error name the CLI prints: "unknown", "not-available", "not-found", "refused",
// "load-failed", or "canceled" and "deadline-exceeded" for a search its context ended.
func (e *SearchError) Code() string {
	switch {
	case errors.Is(e.Err, ErrUnknown):
		return "unknown"
	case errors.Is(e.Err, ErrNotAvailable):
		return "not-available"
	case errors.Is(e.Err, ErrRefused):
		return "refused"
	case errors.Is(e.Err, ErrLoadFailed):
		return "load-failed"
	case errors.Is(e.Err, context.Canceled):
		return "canceled"
	case errors.Is(e.Err, context.DeadlineExceeded):
		return "deadline-exceeded"
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
