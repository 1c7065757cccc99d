// Package host finds and loads NVIDIA libraries. Every search step runs as a sandboxed WebAssembly
// plugin that sees only the directories and variables it is granted; the host validates what the steps
// propose, loads it through the OS loader, and remembers the answer for the life of the process.
package host

// TEMPORARY: aliases while the engine moves to internal/search; replaced by host's own types.

import (
	"context"

	"github.com/pathfinder-dev/pathfinder/internal/search"
)

type (
	Options            = search.Options
	Finder             = search.Engine
	Library            = search.Library
	LoadedLibrary      = search.LoadedLibrary
	Explanation        = search.Explanation
	StepTrace          = search.StepTrace
	CandidateTrace     = search.CandidateTrace
	Attempt            = search.Attempt
	CUDAInfo           = search.CUDAInfo
	Compatibility      = search.Compatibility
	CompatibilityTrace = search.CompatibilityTrace
	ConfigError        = search.ConfigError
	PluginError        = search.PluginError
	IgnoredInput       = search.IgnoredInput
	Kind               = search.Kind
	Platform           = search.Platform
	LibraryInfo        = search.LibraryInfo
	Link               = search.Link
	MixedToolkitsError = search.MixedToolkitsError
	Outcome            = search.Outcome
	SearchError        = search.SearchError
)

const (
	DynamicLib              = search.DynamicLib
	HeaderDir               = search.HeaderDir
	Binary                  = search.Binary
	StaticLib               = search.StaticLib
	Bitcode                 = search.Bitcode
	StepAlreadyLoaded       = search.StepAlreadyLoaded
	StepSystem              = search.StepSystem
	CompatibilityStrict     = search.CompatibilityStrict
	CompatibilityBestEffort = search.CompatibilityBestEffort
	CompatibilityOff        = search.CompatibilityOff
	OutcomeFound            = search.OutcomeFound
	OutcomeNothing          = search.OutcomeNothing
	OutcomeFailed           = search.OutcomeFailed
	OutcomeSkipped          = search.OutcomeSkipped
)

var (
	ErrUnknown         = search.ErrUnknown
	ErrNotAvailable    = search.ErrNotAvailable
	ErrNotFound        = search.ErrNotFound
	ErrRefused         = search.ErrRefused
	ErrLoadFailed      = search.ErrLoadFailed
	ErrIncompatible    = search.ErrIncompatible
	ErrABIMismatch     = search.ErrABIMismatch
	ErrLoadUnavailable = search.ErrLoadUnavailable
	ErrClosed          = search.ErrClosed
	ErrMixedToolkits   = search.ErrMixedToolkits
)

func New(opts Options) (*Finder, error)                             { return search.New(opts) }
func Default() (*Finder, error)                                     { return search.Default() }
func Find(ctx context.Context, name string) (*Library, error)       { return search.Find(ctx, name) }
func Load(ctx context.Context, name string) (*LoadedLibrary, error) { return search.Load(ctx, name) }
func ParseKind(s string) (Kind, error)                              { return search.ParseKind(s) }
func ParsePlatform(s string) (Platform, error)                      { return search.ParsePlatform(s) }
func Kinds() []Kind                                                 { return search.Kinds() }
