package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/english"
	"github.com/pathfinder-dev/pathfinder/internal/loader"
	"github.com/pathfinder-dev/pathfinder/internal/report"
	"github.com/pathfinder-dev/pathfinder/internal/suggest"
	"github.com/pathfinder-dev/pathfinder/internal/wasm"
)

// Sentinels for errors.Is.
var (
	ErrUnknown         = errors.New("unknown library")
	ErrNotAvailable    = errors.New("library not available on this platform")
	ErrNotFound        = errors.New("library not found")
	ErrRefused         = errors.New("library found but refused")        // a file was found, and validation refused it
	ErrLoadFailed      = errors.New("library found but not loadable")   // the loader would not load the file found
	ErrIncompatible    = errors.New("library found but none runs here") // every file found is of a CUDA the driver, or the answers given before, do not run with
	ErrABIMismatch     = wasm.ErrABIMismatch                            // a plugin says it speaks another ABI version than the host
	ErrLoadUnavailable = loader.ErrUnavailable                          // this build cannot load libraries (-tags pathfinder_static)
	ErrClosed          = errors.New("finder closed")                    // the Engine was closed before the call returned
)

// IgnoredInput is a variable a search would have used but passed over, and why: a relative
// CUDA_PATH, a VIRTUAL_ENV that does not exist. pathfinder never resolves a path against the
// working directory.
type IgnoredInput = report.Ignored

// SearchError is a failed search: the library, the sentinel it wraps, and every attempt.
type SearchError struct {
	Name        string
	Kind        Kind
	Err         error // ErrUnknown, ErrNotAvailable, ErrNotFound, ErrRefused, ErrLoadFailed, ErrIncompatible, ErrClosed, or the context's error
	Platform    Platform
	Looked      []string         // the file names looked for
	Attempts    []search.Attempt // every place looked, in order
	Suggestions []string         // close names, for ErrUnknown
	Dependency  string           // set when a dependency failed: its name
	Cause       error            // the dependency's own error
	Path        string           // the file found, for ErrRefused, ErrLoadFailed and ErrIncompatible (the first passed over)
	Reason      string           // why it was refused, not loaded or, for ErrIncompatible, each file passed over, why ErrNotAvailable when not the platform's catalog, or for ErrUnknown what the name is instead ("libdevice" is a bitcode library named "device")
	Ignored     []IgnoredInput   // variables the search passed over
	Failed      []search.Attempt // the steps that could not run (a plugin refused, trapped or out of time), each with why
}

func (e *SearchError) Error() string {
	switch {
	case e.Dependency != "":
		return fmt.Sprintf("cannot load %q: its dependency %q failed: %v", e.Name, e.Dependency, e.Cause)
	case errors.Is(e.Err, ErrUnknown) && e.Reason != "":
		return fmt.Sprintf("unknown %s %q: %s", kindNoun(e.Kind), e.Name, e.Reason)
	case errors.Is(e.Err, ErrUnknown):
		return fmt.Sprintf("unknown %s %q%s", kindNoun(e.Kind), e.Name, suggest.Phrase(e.Suggestions))
	case errors.Is(e.Err, ErrNotAvailable) && e.Reason != "":
		return fmt.Sprintf("%s %q: %s", kindNoun(e.Kind), e.Name, e.Reason)
	case errors.Is(e.Err, ErrNotAvailable):
		return fmt.Sprintf("%s %q is not available on %s", kindNoun(e.Kind), e.Name, e.Platform)
	case errors.Is(e.Err, ErrRefused):
		return fmt.Sprintf("found %s for %q but refused it: %s%s", e.Path, e.Name, e.Reason, e.ignored())
	case errors.Is(e.Err, ErrLoadFailed):
		return fmt.Sprintf("found %s for %q but could not load it: %s", e.Path, e.Name, e.Reason)
	case errors.Is(e.Err, ErrIncompatible):
		return fmt.Sprintf("nothing found for %q runs here: %s", e.Name, e.Reason)
	case !errors.Is(e.Err, ErrNotFound): // the context's end, or the Engine's
		return fmt.Sprintf("search for %q stopped: %v", e.Name, e.Err)
	}
	return fmt.Sprintf("%q not found: looked for %s in %s%s%s",
		e.Name, strings.Join(e.Looked, " or "), english.Plural(len(e.Attempts), "place"), e.failed(), e.ignored())
}

// failed names the steps that could not run, each with the gist of why: "; 1 step failed (mine:
// built as a command)".
func (e *SearchError) failed() string {
	if len(e.Failed) == 0 {
		return ""
	}
	parts := make([]string, len(e.Failed))
	for i, a := range e.Failed {
		why := strings.TrimPrefix(a.Reason, fmt.Sprintf("plugin %q: ", a.Step))
		if gist, _, ok := strings.Cut(why, " ("); ok {
			why = gist
		}
		parts[i] = a.Step + ": " + why
	}
	return fmt.Sprintf("; %s failed (%s)", english.Plural(len(e.Failed), "step"), strings.Join(parts, "; "))
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

func (e *SearchError) Unwrap() error { return e.Err }

// Code is the short error name the CLI prints: "unknown", "not-available", "not-found", "refused",
// "load-failed", "incompatible", "closed" for a call whose Engine was closed, or "canceled" and "deadline-exceeded"
// for a search its context ended.
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
	case errors.Is(e.Err, ErrIncompatible):
		return "incompatible"
	case errors.Is(e.Err, ErrClosed):
		return "closed"
	case errors.Is(e.Err, context.Canceled):
		return "canceled"
	case errors.Is(e.Err, context.DeadlineExceeded):
		return "deadline-exceeded"
	}
	return "not-found"
}

// unknown is the error for a name kind does not know: what the name is in the catalog (another
// kind's, or one of a library's files), else the close names of kind.
func (f *Engine) unknown(kind Kind, name string) *SearchError {
	se := &SearchError{Name: name, Kind: kind, Err: ErrUnknown}
	var nouns, what []string // the kinds called name; the entries with a file called name
	for _, e := range f.catalog.Named(kind, name) {
		if e.Name == name {
			nouns = append(nouns, kindNoun(e.Kind))
		} else if len(what) < 3 {
			what = append(what, fmt.Sprintf("%q is a %s named %q", name, kindNoun(e.Kind), e.Name))
		}
		if e.Kind == kind {
			se.Suggestions = append(se.Suggestions, e.Name)
		}
	}
	if len(nouns) > 0 {
		what = append([]string{fmt.Sprintf("%q is a %s", name, strings.Join(nouns, " and a "))}, what...)
	}
	if len(what) > 0 {
		se.Reason = strings.Join(what, "; ")
		return se
	}
	se.Suggestions = f.catalog.Suggest(kind, name)
	return se
}

// kindNoun names a kind in messages.
func kindNoun(k Kind) string {
	switch k {
	case HeaderDir:
		return "header set"
	case Binary:
		return "binary utility"
	case StaticLib:
		return "static library"
	case Bitcode:
		return "bitcode library"
	}
	return "library"
}

// ConfigError is a configuration that New cannot use, as host.ConfigError says.
type ConfigError = config.Error

// PluginError is a plugin step that cannot be used, as host.PluginError says.
type PluginError = config.PluginError
