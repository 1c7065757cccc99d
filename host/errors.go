package host

import (
	"fmt"
	"slices"

	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
)

// Sentinels for errors.Is.
var (
	ErrUnknown         = engine.ErrUnknown         // no library, header set or utility of that kind has the name
	ErrNotAvailable    = engine.ErrNotAvailable    // the library has no files for the platform
	ErrNotFound        = engine.ErrNotFound        // no step found it
	ErrRefused         = engine.ErrRefused         // a file was found, and validation refused it
	ErrLoadFailed      = engine.ErrLoadFailed      // the loader would not load the file found
	ErrIncompatible    = engine.ErrIncompatible    // every file found is of a CUDA the driver, or the answers given before, do not run with
	ErrABIMismatch     = engine.ErrABIMismatch     // a plugin says it speaks another ABI version than the host
	ErrLoadUnavailable = engine.ErrLoadUnavailable // this build cannot load libraries (-tags pathfinder_static)
	ErrClosed          = engine.ErrClosed          // the Finder was closed before the call returned
	ErrMixedToolkits   = engine.ErrMixedToolkits   // FindTogether: no one root holds every library
)

// SearchError is a failed search: the name and the sentinel it wraps (ErrUnknown, ErrNotAvailable,
// ErrNotFound, ErrRefused, ErrLoadFailed, ErrIncompatible, ErrClosed, or the context's error). Its
// methods tell the rest: every place looked and why, the steps that failed, the inputs passed over.
type SearchError struct {
	Name string
	Err  error

	d *engine.SearchError
}

func (e *SearchError) Error() string {
	if e.d == nil {
		return fmt.Sprintf("search for %q: %v", e.Name, e.Err)
	}
	return e.d.Error()
}

func (e *SearchError) Unwrap() error { return e.Err }

// Code is the short error name the CLI prints: "unknown", "not-available", "not-found", "refused",
// "load-failed", "incompatible", "closed" for a call whose Finder was closed, or "canceled" and
// "deadline-exceeded" for a search its context ended.
func (e *SearchError) Code() string { return e.details().Code() }

// Kind is what was searched for.
func (e *SearchError) Kind() search.Kind { return search.Kind(e.details().Kind) }

// Path is the file found, for ErrRefused, ErrLoadFailed and ErrIncompatible (the first passed over).
func (e *SearchError) Path() string { return e.details().Path }

// Looked are the file names looked for.
func (e *SearchError) Looked() []string { return slices.Clone(e.details().Looked) }

// Suggestions are the close names, for ErrUnknown.
func (e *SearchError) Suggestions() []string { return slices.Clone(e.details().Suggestions) }

// Attempts are every place looked, in order, each with why it was not taken.
func (e *SearchError) Attempts() []search.Attempt { return slices.Clone(e.details().Attempts) }

// Failed are the steps that could not run (a plugin refused, trapped or out of time), each with why.
func (e *SearchError) Failed() []search.Attempt { return slices.Clone(e.details().Failed) }

// Ignored are the variables the search passed over, each with why.
func (e *SearchError) Ignored() []search.IgnoredInput {
	var out []search.IgnoredInput
	for _, in := range e.details().Ignored {
		out = append(out, in.Public())
	}
	return out
}

// Dependency is the dependency whose failure failed a load, and its own error; "" and nil when the
// library's own search failed.
func (e *SearchError) Dependency() (string, error) {
	return e.details().Dependency, publicError(e.details().Cause)
}

func (e *SearchError) details() *engine.SearchError {
	if e.d == nil {
		return &engine.SearchError{Name: e.Name, Err: e.Err}
	}
	return e.d
}

// MixedToolkitsError says, for each root that holds some of a set, which libraries it lacks, or,
// for one that holds them all, of which CUDA majors. It wraps ErrMixedToolkits.
type MixedToolkitsError struct {
	Names   []string
	Missing map[string][]string // root -> the names it lacks
	Mixed   map[string]string   // root -> the CUDA of each library, for a root that holds every name but of no one major
}

func (e *MixedToolkitsError) Error() string {
	return (&engine.MixedToolkitsError{Names: e.Names, Missing: e.Missing, Mixed: e.Mixed}).Error()
}

func (e *MixedToolkitsError) Unwrap() error { return ErrMixedToolkits }

// ConfigError is a configuration that New cannot use: the file, and the position of the key at
// fault.
type ConfigError struct {
	File      string // the layer: a config file's absolute path, or "builtin:pathfinder.toml"; "" for none
	Line, Col int    // 1-based; 0 when the position cannot be told
	Key       string // the key at fault: "search.order", "plugin.site.sha256"; "" for a syntax error
	Err       error  // what is wrong; a *PluginError for a plugin that cannot be used
}

func (e *ConfigError) Error() string {
	return (&config.Error{File: e.File, Line: e.Line, Col: e.Col, Key: e.Key, Err: e.Err}).Error()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// PluginError is a plugin step that cannot be used: its module unreadable, not matching its pin,
// failing to compile or to answer.
type PluginError struct {
	Plugin string // the step's name
	Op     string // what was being done: "config", "read", "pin", "load", "describe" or "search"
	Err    error
}

func (e *PluginError) Error() string {
	return (&config.PluginError{Plugin: e.Plugin, Op: e.Op, Err: e.Err}).Error()
}

func (e *PluginError) Unwrap() error { return e.Err }

// publicError is err with the engine's and the configuration's typed errors in this package's types.
func publicError(err error) error {
	switch e := err.(type) {
	case *engine.SearchError:
		return &SearchError{Name: e.Name, Err: e.Err, d: e}
	case *engine.MixedToolkitsError:
		return &MixedToolkitsError{Names: e.Names, Missing: e.Missing, Mixed: e.Mixed}
	case *config.Error:
		return &ConfigError{File: e.File, Line: e.Line, Col: e.Col, Key: e.Key, Err: publicError(e.Err)}
	case *config.PluginError:
		return &PluginError{Plugin: e.Plugin, Op: e.Op, Err: e.Err}
	}
	return err
}
