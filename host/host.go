// Package host finds and loads NVIDIA libraries. Every search step runs as a sandboxed WebAssembly
// plugin that sees only the directories and variables it is granted; the host validates what the steps
// propose, loads it through the OS loader, and remembers the answer for the life of the process.
//
// This package is the API and only that: the engine it calls lives in internal/engine, and what a
// search is asked and answers (a kind, a library found or loaded, an explanation) are package
// host/search's types.
package host

import (
	"context"
	"sync"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
)

// Options configures a Finder. The zero value means the built-in defaults plus the system and user
// config files, as pathfinder.toml describes.
type Options struct {
	// ConfigFile is applied last, after the system file, the user file and $PATHFINDER_CONFIG.
	ConfigFile string
	// SystemConfigDir holds the system pathfinder.toml; "" means /etc/pathfinder.
	SystemConfigDir string
	// LookupEnv reads the environment; nil means os.LookupEnv. driver.Options takes the same.
	LookupEnv func(key string) (string, bool)
	// Platform is the platform to search for; the zero value means the one this process runs on.
	// Another platform (a Windows layout, a mounted arm64 image) can be found but not loaded.
	Platform Platform
	// Compatibility is every library's mode (docs/compatibility.md); "" leaves it to
	// $PATHFINDER_COMPATIBILITY, then to the config ([library.NAME] and [search] compatibility),
	// then strict.
	Compatibility search.Compatibility
	// CUDA is the CUDA the program was built for, "12" or "12.4": every answer must be of its major
	// from the first on. "" leaves it to $PATHFINDER_CUDA, then to [search] cuda; unset, the first
	// answer with a known CUDA version anchors the rest.
	CUDA string
	// AssumeForwardCompatibility takes the CUDA of a forward-compatibility libcuda (NVIDIA's
	// cuda-compat package, newer than the kernel module) as the driver's ceiling, as
	// $PATHFINDER_DRIVER_COMPATIBILITY=assume-forward-compatibility does.
	AssumeForwardCompatibility bool
	// Driver is the driver the compatibility check holds candidates to (a report of a captured
	// machine, or one the program probed already); nil probes this machine the cheap way: the pin
	// $PATHFINDER_DRIVER_VERSION, sysfs, procfs and the user-space libraries' file names, never NVML,
	// libcuda or nvidia-smi.
	Driver *driver.Report
}

// Finder finds and loads libraries. It is safe for concurrent use; each name is searched once even
// when many goroutines ask at the same time, and successes are remembered: a call asking again gets
// the same *search.Library (or LoadedLibrary) as the first, so read it and never change it.
type Finder struct{ e *engine.Engine }

// New reads the configuration and the descriptor packs.
func New(opts Options) (*Finder, error) {
	e, err := engine.New(engine.Options{
		ConfigFile:                 opts.ConfigFile,
		SystemConfigDir:            opts.SystemConfigDir,
		LookupEnv:                  opts.LookupEnv,
		Platform:                   opts.Platform.abi(),
		Compatibility:              opts.Compatibility,
		CUDA:                       opts.CUDA,
		AssumeForwardCompatibility: opts.AssumeForwardCompatibility,
		Driver:                     opts.Driver,
	})
	if err != nil {
		return nil, publicError(err)
	}
	return &Finder{e}, nil
}

// Close releases the plugin runtime and the directories the Finder holds open. Every call that is
// still running when Close begins, and every later call, fails with an error that errors.Is
// ErrClosed (Explain's Explanation carries it in Err): never an answer about the library, and
// nothing from such a call is remembered, in the process or in the cache. A call that returned
// before Close began keeps its answer. Close does not wait for the calls running: they run on to
// their end (a plugin's timeout bounds each step), and the last of them releases what Close could
// not. Libraries loaded stay loaded. Close is safe to call more than once, and at the same time as
// any other method.
func (f *Finder) Close() error { return f.e.Close() }

// Platform is the platform searches are for.
func (f *Finder) Platform() Platform { return Platform(f.e.Platform()) }

// Find locates the dynamic library name without loading it.
func (f *Finder) Find(ctx context.Context, name string) (*search.Library, error) {
	return f.FindKind(ctx, search.DynamicLib, name)
}

// FindKind locates name of the given kind: a dynamic library, a header directory, a binary utility,
// a static or a bitcode library.
func (f *Finder) FindKind(ctx context.Context, kind search.Kind, name string) (*search.Library, error) {
	lib, err := f.e.FindKind(ctx, abi.Kind(kind), name)
	return lib, publicError(err)
}

// Load finds the dynamic library name, loads its dependencies and then it, and returns where it came
// from. A library already in the process is returned as it is.
func (f *Finder) Load(ctx context.Context, name string) (*search.LoadedLibrary, error) {
	lib, err := f.e.Load(ctx, name)
	return lib, publicError(err)
}

// Explain searches for name of kind afresh, without loading anything or using what was remembered,
// and returns every step with its candidates and why each was taken or refused.
func (f *Finder) Explain(ctx context.Context, kind search.Kind, name string) *search.Explanation {
	ex := f.e.Explain(ctx, abi.Kind(kind), name)
	ex.Err = publicError(ex.Err)
	return ex
}

// FindTogether finds every named dynamic library so that all come from one root — one site-packages
// directory, conda prefix, install root or toolkit — which a name-by-name search does not promise,
// and all of one CUDA major. It takes the first root, in the steps' order, that holds every name; a
// name no root holds with the others is a *MixedToolkitsError.
func (f *Finder) FindTogether(ctx context.Context, names []string) ([]*search.Library, error) {
	libs, err := f.e.FindTogether(ctx, names)
	return libs, publicError(err)
}

// Compatibility is what the compatibility check knows now: the mode, the driver and, once an
// answer has set it, the anchor later answers must match.
func (f *Finder) Compatibility() *search.CompatibilityTrace { return f.e.Compatibility() }

// Libraries lists every known name of kind in catalog order.
func (f *Finder) Libraries(kind search.Kind) []search.LibraryInfo {
	return f.e.Libraries(abi.Kind(kind))
}

// Default returns the process-wide Finder built from the default Options.
func Default() (*Finder, error) { return defaultFinder() }

var defaultFinder = sync.OnceValues(func() (*Finder, error) { return New(Options{}) })

// Find locates name with the default Finder.
func Find(ctx context.Context, name string) (*search.Library, error) {
	f, err := Default()
	if err != nil {
		return nil, err
	}
	return f.Find(ctx, name)
}

// Load loads name with the default Finder.
func Load(ctx context.Context, name string) (*search.LoadedLibrary, error) {
	f, err := Default()
	if err != nil {
		return nil, err
	}
	return f.Load(ctx, name)
}
