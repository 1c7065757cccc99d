// Package engine is the engine behind package host, which is its public face, and the one the
// pathfinder command speaks to directly: the search of each step in turn, the checks of what a step
// proposes, loading, the compatibility check, and the caches' use (ARCHITECTURE.md's call order).
package engine

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/cachedir"
	"github.com/pathfinder-dev/pathfinder/internal/candidate"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/guestpath"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/resultcache"
	"github.com/pathfinder-dev/pathfinder/internal/suggest"
	"github.com/pathfinder-dev/pathfinder/internal/wasm"
)

// Options configures an Engine. The fields a program sets are host.Options', which says what each
// means; the zero value means the built-in defaults plus the system and user config files.
type Options struct {
	ConfigFile, SystemConfigDir string
	LookupEnv                   func(key string) (string, bool)
	Platform                    Platform
	Compatibility               search.Compatibility
	CUDA                        string
	AssumeForwardCompatibility  bool
	Driver                      *driver.Report

	onlyConfigFile bool // ConfigFile is the only layer over the built-in defaults (CheckConfigFile)
	// hooks are what tests hand in, as go/build.Context's I/O hooks: never set on a live Engine.
	hooks hooks
}

// Platform is an operating system, an architecture and, on Linux, a C library: "linux/amd64".
type Platform = abi.Platform

// Kind is what a search looks for.
type Kind = abi.Kind

// The kinds.
const (
	DynamicLib = abi.KindDynamicLib // a shared library: libcudart.so.13, cudart64_13.dll
	HeaderDir  = abi.KindHeaderDir  // the directory holding a header set: cuda_runtime.h, cuda/std/version
	Binary     = abi.KindBinary     // a binary utility: nvcc, ptxas, nvdisasm
	StaticLib  = abi.KindStaticLib  // a static library: libcudadevrt.a
	Bitcode    = abi.KindBitcode    // a bitcode library: libdevice.10.bc
)

// Host-owned steps that may appear in a step order besides plugin names.
const (
	StepAlreadyLoaded = config.StepAlreadyLoaded // "already-loaded": a copy of the library already in the process
	StepSystem        = config.StepSystem        // "system": the OS loader's own search
)

// ParseKind reads a kind's name, as search.ParseKind does.
func ParseKind(s string) (Kind, error) {
	k, err := search.ParseKind(s)
	return Kind(k), err
}

// ParsePlatform reads "os/arch" ("linux/amd64", "windows/arm64").
func ParsePlatform(s string) (Platform, error) {
	osName, arch, ok := strings.Cut(s, "/")
	if t := catalog.Targets; !ok || !slices.Contains(t, s) {
		return Platform{}, fmt.Errorf("unknown target %q (%s or %s)", s, strings.Join(t[:len(t)-1], ", "), t[len(t)-1])
	}
	p := Platform{OS: osName, Arch: arch}
	if osName == "linux" {
		p.Libc = "glibc"
	}
	return p, nil
}

// Kinds lists every kind, in the order listings show them, as search.Kinds does.
func Kinds() []Kind {
	out := make([]Kind, len(search.Kinds()))
	for i, k := range search.Kinds() {
		out[i] = Kind(k)
	}
	return out
}

// Engine finds and loads libraries. It is safe for concurrent use; each name is searched once even
// when many goroutines ask at the same time, and successes are remembered.
type Engine struct {
	getenv   func(string) string
	cfg      *config.Config
	catalog  *catalog.Catalog
	packs    *config.Packs // the descriptor packs the catalog was read from
	platform Platform
	cache    cachedir.Location  // the caches' directory, or why they are off
	cacheDir string             // the compilation cache, "" when off
	results  *resultcache.Store // the result cache

	engine func() *wasm.Engine // made on first use
	compat compatSettings
	// driverView is the driver as the compatibility check sees it, probed on first use;
	// driverViewFull also reads the user-space libraries, for Explain's notes.
	driverView, driverViewFull func() driverView
	state                      compatState
	engineMade                 atomic.Pointer[wasm.Engine]
	sites                      siteDiscovery

	mu       sync.Mutex
	done     map[string]*search.LoadedLibrary // by op and name
	inflight map[string]*flight
	modules  map[string]*wasm.Module         // by plugin name
	roots    map[string]*os.Root             // granted directories, opened once
	resolved memo[string, resolved]          // by library name: what the loader model says, for canaries
	broad    memo[string, broadVerdict]      // overBroad's verdicts, by directory
	regrants memo[string, candidate.Granted] // revalidate's grants, by plugin and the entry's own grant inputs
	ignored  stepsIgnored                    // what the searches' steps said they passed over (under mu), for IgnoredInputs
	// closed is set by Close: a call that finds it set after its search gives ErrClosed instead.
	closed   atomic.Bool
	calls    int       // calls running (under mu): the last one out of a closed Engine releases it
	released sync.Once // what Close releases, released once

	hooks    hooks
	searches atomic.Int64 // searches run, for tests of the once-per-name promise
}

// hooks are what tests replace or watch in an Engine; the zero value is what runs in production.
type hooks struct {
	engine       *wasm.Engine      // an engine shared across Engines, instead of one of the Engine's own
	beforeLoad   func(path string) // runs between a candidate's validation and its load: tests swap the file
	beforeDlopen func(path string) // runs after the last check before the loader opens path: tests swap it
	beforeStep   func(step string) // runs before each step of a search: tests close the Engine there
	// paths and openRoot stand in for the host's path mapping and for opening a granted directory:
	// tests run a Windows host's mapping over fake trees on any host.
	paths    *guestpath.Map
	openRoot func(dir string, rec *observe.Recorder) (*os.Root, error)
	waiting  func() // runs when a call waits for the same search another call runs
	// now stands in for the clock a step's deadline is set and read by: tests make checking the
	// candidates take what time they say (nil: time.Now).
	now func() time.Time
	// compileTimeout is the CompileTimeout of the engine the Engine makes (0: wasm's default bound):
	// tests whose verdict must not depend on the machine's speed lift it.
	compileTimeout time.Duration
}

// memo is a concurrent map of what an Engine worked out once, typed.
type memo[K comparable, V any] struct{ m sync.Map }

func (m *memo[K, V]) load(k K) (V, bool) {
	v, ok := m.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

func (m *memo[K, V]) store(k K, v V) { m.m.Store(k, v) }

type flight struct {
	done chan struct{}
	lib  *search.LoadedLibrary
	err  error
}

// New reads the configuration and the descriptor packs.
func New(opts Options) (*Engine, error) {
	if strconv.IntSize != 64 {
		return nil, fmt.Errorf("a %d-bit process is not supported: NVIDIA libraries are 64-bit only", strconv.IntSize)
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	getenv := func(k string) string { v, _ := lookup(k); return v }
	copts := config.Options{ConfigFile: opts.ConfigFile, OnlyConfigFile: opts.onlyConfigFile, SystemConfigDir: opts.SystemConfigDir, Getenv: getenv}
	cfg, err := config.Load(copts)
	if err != nil {
		return nil, err
	}
	cache := cachedir.Locate(cfg.CacheEnabled, cfg.CacheDir, getenv)
	base := cache.Dir
	if err := cfg.CheckPins(base); err != nil {
		return nil, err
	}
	packs, err := config.DiscoverPacks(copts, cfg)
	if err != nil {
		return nil, err
	}
	cat, err := catalog.Remembered(base, packs.List)
	if err != nil {
		return nil, err
	}
	for _, lib := range cfg.LibraryNames() {
		if _, ok := cat.Lookup(abi.KindDynamicLib, lib.Name); !ok {
			return nil, cfg.ErrorAt(lib.Key, fmt.Errorf("[library.%s] names an unknown library%s", lib.Name, suggest.Phrase(cat.Suggest(abi.KindDynamicLib, lib.Name))))
		}
	}
	settings, err := readCompatSettings(opts, getenv, cfg.CUDA)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	f := &Engine{
		compat:   settings,
		getenv:   getenv,
		cache:    cache,
		cfg:      cfg,
		catalog:  cat,
		packs:    packs,
		platform: Platform{OS: runtime.GOOS, Arch: runtime.GOARCH},
		done:     map[string]*search.LoadedLibrary{},
		inflight: map[string]*flight{},
		modules:  map[string]*wasm.Module{},
		roots:    map[string]*os.Root{},
		hooks:    opts.hooks,
	}
	if f.platform.OS == "linux" {
		f.platform.Libc = "glibc"
	}
	if opts.Platform.OS != "" {
		f.platform = opts.Platform
	}
	f.cacheDir = cachedir.Compiled(base)
	f.results = resultcache.New(cachedir.Results(base), f.platform.String(), fmt.Sprintf("%x", cfg.Hash()), cat.Hash(), builtin.StepsModuleHash())
	view := func(full bool) func() driverView {
		return sync.OnceValue(func() driverView {
			if opts.Driver != nil {
				return f.viewOf(opts.Driver)
			}
			return f.viewOf(f.probeDriver(full))
		})
	}
	f.driverView, f.driverViewFull = view(false), view(true)
	f.engine = sync.OnceValue(func() *wasm.Engine {
		e := f.hooks.engine
		if e == nil {
			e = wasm.NewEngine(f.cacheDir) // an unusable cache dir costs speed, never the search
			e.CompileTimeout = f.hooks.compileTimeout
		}
		f.engineMade.Store(e)
		return e
	})
	return f, nil
}

// Close releases the plugin runtime and the directories the Engine holds open. Every call that is
// still running when Close begins, and every later call, fails with an error that errors.Is
// ErrClosed (Explain's Explanation carries it in Err): never an answer about the library, and
// nothing from such a call is remembered, in the process or in the cache. A call that returned
// before Close began keeps its answer. Close does not wait for the calls running: they run on to
// their end (a plugin's timeout bounds each step), and the last of them releases what Close could
// not. Libraries loaded stay loaded. Close is safe to call more than once, and at the same time as
// any other method.
func (f *Engine) Close() error {
	f.mu.Lock()
	f.closed.Store(true) // calls check it after their search: set, their answer is not given
	idle := f.calls == 0
	f.mu.Unlock()
	if idle {
		f.release()
	}
	return nil
}

// enter counts a call in; false when the Engine is closed. Each true is matched by a leave.
func (f *Engine) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed.Load() {
		return false
	}
	f.calls++
	return true
}

// leave counts a call out; the last call out of a closed Engine releases it.
func (f *Engine) leave() {
	f.mu.Lock()
	f.calls--
	last := f.calls == 0 && f.closed.Load()
	f.mu.Unlock()
	if last {
		f.release()
	}
}

// release closes what the Engine holds, once, when no call uses it: closing a runtime under a
// running instance is a race inside wazero.
func (f *Engine) release() {
	f.released.Do(func() {
		f.mu.Lock()
		for _, r := range f.roots {
			r.Close()
		}
		f.roots = map[string]*os.Root{}
		f.modules = map[string]*wasm.Module{}
		f.mu.Unlock()
		if f.hooks.engine == nil {
			f.engine().Close()
		}
	})
}

// closedError is the error of a call that lost its Engine.
func (f *Engine) closedError(kind Kind, name string) *SearchError {
	return &SearchError{Name: name, Kind: kind, Err: ErrClosed, Platform: f.platform}
}

// Platform is the platform searches are for.
func (f *Engine) Platform() Platform { return f.platform }

// native reports whether searches are for the platform this process runs on.
func (f *Engine) native() bool {
	return f.platform.OS == runtime.GOOS && f.platform.Arch == runtime.GOARCH
}

// Find locates the dynamic library name without loading it.
func (f *Engine) Find(ctx context.Context, name string) (*search.Library, error) {
	return f.FindKind(ctx, DynamicLib, name)
}

// FindKind locates name of the given kind: a dynamic library, a header directory, a binary utility,
// a static or a bitcode library.
func (f *Engine) FindKind(ctx context.Context, kind Kind, name string) (*search.Library, error) {
	lib, err := f.answer(ctx, kind, name, false)
	if err != nil {
		return nil, err
	}
	return &lib.Library, nil
}

// Load finds the dynamic library name, loads its dependencies and then it, and returns where it came
// from. A library already in the process is returned as it is.
func (f *Engine) Load(ctx context.Context, name string) (*search.LoadedLibrary, error) {
	return f.answer(ctx, DynamicLib, name, true)
}

// Explain searches for name of kind afresh, without loading anything or using what was remembered,
// and returns every step with its candidates and why each was taken or refused.
func (f *Engine) Explain(ctx context.Context, kind Kind, name string) *search.Explanation {
	if !f.enter() {
		return &search.Explanation{Name: name, Kind: search.Kind(kind), Err: f.closedError(kind, name)}
	}
	defer f.leave()
	f.searches.Add(1)
	ex, _, _ := f.searchAll(ctx, kind, name, findFirst, f.checkFor(kind, name, false))
	if f.closed.Load() {
		ex.Result, ex.Err = nil, f.closedError(kind, name)
	}
	return ex
}

// answer is the one search a process runs for (kind, name), found or loaded: callers asking at the
// same time wait for it, and a success is remembered for every later call.
func (f *Engine) answer(ctx context.Context, kind Kind, name string, load bool) (*search.LoadedLibrary, error) {
	key := fmt.Sprintf("%s\x00%s\x00%v", kind, name, load)
	if !f.enter() {
		return nil, f.closedError(kind, name)
	}
	defer f.leave()
	f.mu.Lock()
	if lib, ok := f.done[key]; ok {
		f.mu.Unlock()
		return lib, nil
	}
	if fl, ok := f.inflight[key]; ok {
		f.mu.Unlock()
		if h := f.hooks.waiting; h != nil {
			h()
		}
		select {
		case <-fl.done:
			return fl.lib, fl.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	fl := &flight{done: make(chan struct{})}
	f.inflight[key] = fl
	f.mu.Unlock()

	var ex *search.Explanation
	check := f.checkFor(kind, name, true)
	if !load {
		ex = f.cachedFind(kind, name, check)
	}
	if ex == nil {
		f.searches.Add(1)
		var seen []observe.Observation
		mode := findFirst
		if load {
			mode = loadFirst
		}
		ex, _, seen = f.searchAll(ctx, kind, name, mode, check)
		if !load && !f.closed.Load() {
			f.storeFind(ctx, ex, seen, check)
		}
	}
	fl.lib, fl.err = ex.Result, ex.Err
	if f.closed.Load() { // Close began during the search: its answer is not given, nor kept
		fl.lib, fl.err = nil, f.closedError(kind, name)
	}

	f.mu.Lock()
	delete(f.inflight, key)
	if fl.err == nil {
		f.done[key] = fl.lib
	}
	f.mu.Unlock()
	if fl.err == nil {
		f.remember(&fl.lib.Library)
	}
	close(fl.done)
	return fl.lib, fl.err
}

// Libraries lists every known name of kind in catalog order.
func (f *Engine) Libraries(kind Kind) []search.LibraryInfo {
	var out []search.LibraryInfo
	for _, n := range f.catalog.Names(kind) {
		e, _ := f.catalog.Lookup(kind, n)
		out = append(out, search.LibraryInfo{Name: n, Kind: search.Kind(kind), Category: e.Category(), Available: e.AvailableOn(f.platform), Pack: e.Pack})
	}
	return out
}
