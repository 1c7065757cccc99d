// Package host finds and loads NVIDIA libraries. Every search step runs as a sandboxed WebAssembly
// plugin that sees only the directories and variables it is granted; the host validates what the steps
// propose, loads it through the OS loader, and remembers the answer for the life of the process.
package host

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/host/internal/cachefile"
	"github.com/pathfinder-dev/pathfinder/host/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/host/internal/observe"
	"github.com/pathfinder-dev/pathfinder/host/internal/wasm"
)

// Options configures a Finder. The zero value means the built-in defaults plus the system and user
// config files, as pathfinder.toml describes.
type Options struct {
	// ConfigFile is applied last, after the system file, the user file and $PATHFINDER_CONFIG.
	ConfigFile string
	// SystemConfigDir holds the system pathfinder.toml; "" means /etc/pathfinder.
	SystemConfigDir string
	// Getenv reads the environment; nil means os.Getenv. Tests replace it.
	Getenv func(string) string
	// Platform is the platform to search for; the zero value means the one this process runs on.
	// Another platform (a Windows layout, a mounted arm64 image) can be found but not loaded.
	Platform abi.Platform

	onlyConfigFile bool // ConfigFile is the only layer over the built-in defaults (CheckConfigFile)
}

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

// ParseKind reads a kind's name ("dynamic-lib", "header-dir", "binary", "static-lib", "bitcode").
func ParseKind(s string) (Kind, error) {
	for _, k := range catalog.Kinds {
		if string(k.Kind) == s {
			return k.Kind, nil
		}
	}
	return "", fmt.Errorf("pathfinder: unknown kind %q (dynamic-lib, header-dir, binary, static-lib or bitcode)", s)
}

// ParsePlatform reads "os/arch" ("linux/amd64", "windows/arm64").
func ParsePlatform(s string) (abi.Platform, error) {
	osName, arch, ok := strings.Cut(s, "/")
	valid := map[string]bool{"linux/amd64": true, "linux/arm64": true, "windows/amd64": true, "windows/arm64": true}
	if !ok || !valid[s] {
		return abi.Platform{}, fmt.Errorf("pathfinder: unknown target %q (linux/amd64, linux/arm64, windows/amd64 or windows/arm64)", s)
	}
	p := abi.Platform{OS: osName, Arch: arch}
	if osName == "linux" {
		p.Libc = "glibc"
	}
	return p, nil
}

func (o *Options) getenv(k string) string {
	if o.Getenv == nil {
		return os.Getenv(k)
	}
	return o.Getenv(k)
}

// Finder finds and loads libraries. It is safe for concurrent use; each name is searched once even
// when many goroutines ask at the same time, and successes are remembered.
type Finder struct {
	opts     Options
	cfg      *config
	catalog  *catalog.Catalog
	packs    *packSet // the descriptor packs the catalog was read from
	platform abi.Platform

	engineOnce sync.Once
	engine     *wasm.Engine
	engineErr  error
	ownEngine  bool   // the Finder made the engine, so Close closes it
	cacheDir   string // the compilation cache, "" when off
	resultDir  string // the result cache, "" when off

	sitesOnce sync.Once
	sitesDone atomic.Bool // discovery has run
	sites     []string
	sitesSeen []observe.Observation // what discovering sites looked at

	discoveryOnce sync.Once
	keyBase       func() string // what every result-cache key of this Finder shares
	discovery     string        // the hash of sitesSeen, by which result-cache entries name what discovery saw

	mu       sync.Mutex
	done     map[string]*LoadedLibrary // by op and name
	inflight map[string]*flight
	modules  map[string]*wasm.Module // by plugin name
	roots    map[string]*os.Root     // granted directories, opened once

	resolved sync.Map // library name -> resolved: what the loader model says, for canaries

	searches atomic.Int64 // searches run, for tests of the once-per-name promise
}

type flight struct {
	done chan struct{}
	lib  *LoadedLibrary
	err  error
}

// New reads the configuration and the descriptor packs.
func New(opts Options) (*Finder, error) {
	if strconv.IntSize != 64 {
		return nil, fmt.Errorf("pathfinder: a %d-bit process is not supported: NVIDIA libraries are 64-bit only", strconv.IntSize)
	}
	cfg, err := loadConfig(&opts)
	if err != nil {
		return nil, err
	}
	base := cacheBase(cfg, opts.getenv)
	if err := cfg.checkPins(base); err != nil {
		return nil, err
	}
	packs, err := discoverPacks(&opts, cfg)
	if err != nil {
		return nil, err
	}
	cat, err := loadCatalog(base, packs.packs)
	if err != nil {
		return nil, err
	}
	for lib := range cfg.libraryOrder {
		if _, ok := cat.Lookup(abi.KindDynamicLib, lib); !ok {
			return nil, fmt.Errorf("pathfinder: %s: [library.%s] names an unknown library%s", cfg.where("library."+lib+".order"), lib, suggestion(cat.Suggest(abi.KindDynamicLib, lib)))
		}
	}
	f := &Finder{
		opts:     opts,
		cfg:      cfg,
		catalog:  cat,
		packs:    packs,
		platform: abi.Platform{OS: runtime.GOOS, Arch: runtime.GOARCH},
		done:     map[string]*LoadedLibrary{},
		inflight: map[string]*flight{},
		modules:  map[string]*wasm.Module{},
		roots:    map[string]*os.Root{},
	}
	if f.platform.OS == "linux" {
		f.platform.Libc = "glibc"
	}
	if opts.Platform.OS != "" {
		f.platform = opts.Platform
	}
	f.keyBase = sync.OnceValue(f.resultKeyBase)
	if base != "" {
		f.cacheDir = filepath.Join(base, "wazero-"+runtime.Version())
		f.resultDir = filepath.Join(base, "results")
	}
	return f, nil
}

// Close releases the plugin runtime. Loaded libraries stay loaded.
func (f *Finder) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.roots {
		r.Close()
	}
	f.roots = map[string]*os.Root{}
	f.modules = map[string]*wasm.Module{}
	if f.engine != nil && f.ownEngine {
		return f.engine.Close()
	}
	return nil
}

// catalogs keeps the last catalog this process read, by its packs' contents and the cache
// directory: a catalog is a function of its packs alone, and reading it, even from its JSON cache,
// was half of New in a process that makes Finders one after another. It is used while its cache
// file is as it was, so that a process still reads (and rewrites) a cache file someone changed.
var catalogs struct {
	mu   sync.Mutex
	key  string
	file string // the catalog's cache file as last seen, by observe.StatSeen
	cat  *catalog.Catalog
}

// loadCatalog is catalog.Cached, remembered for the next Finder made with the same packs.
func loadCatalog(base string, packs []catalog.Pack) (*catalog.Catalog, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%q\x00", base)
	for _, p := range packs {
		fmt.Fprintf(h, "%q\x00%d\x00", p.Name, len(p.Data))
		h.Write(p.Data)
	}
	key := string(h.Sum(nil))
	catalogs.mu.Lock()
	if catalogs.key == key && catalogFileSeen(base, catalogs.cat) == catalogs.file {
		defer catalogs.mu.Unlock()
		return catalogs.cat, nil
	}
	catalogs.mu.Unlock()
	cat, err := catalog.Cached(base, packs...)
	if err != nil {
		return nil, err
	}
	catalogs.mu.Lock()
	catalogs.key, catalogs.file, catalogs.cat = key, catalogFileSeen(base, cat), cat
	catalogs.mu.Unlock()
	return cat, nil
}

// catalogFileSeen is a stat of the file catalog.Cached keeps cat in under base.
func catalogFileSeen(base string, cat *catalog.Catalog) string {
	if base == "" {
		return ""
	}
	fi, err := os.Stat(catalog.CacheFile(base, cat.Hash()))
	return observe.StatSeen(fi, err)
}

// cacheBase is the directory of the on-disk caches, or "" when they are off.
func cacheBase(cfg *config, getenv func(string) string) string {
	if !cfg.cacheEnabled || getenv("PATHFINDER_NO_CACHE") == "1" {
		return ""
	}
	dir := getenv("PATHFINDER_CACHE_DIR")
	if dir == "" {
		dir = cfg.cacheDir
	}
	if dir == "" {
		dir = userDir(getenv, "XDG_CACHE_HOME", ".cache")
		if dir == "" {
			return ""
		}
		dir = filepath.Join(dir, "pathfinder")
	}
	// A cache others may write is a way to choose what find answers: not used.
	if !filepath.IsAbs(dir) || !cachefile.Usable(dir) {
		return ""
	}
	return dir
}

// CacheDir is the directory of the on-disk compilation cache, or "" when it is off.
func (f *Finder) CacheDir() string { return f.cacheDir }

// Platform is the platform searches are for.
func (f *Finder) Platform() abi.Platform { return f.platform }

// native reports whether searches are for the platform this process runs on.
func (f *Finder) native() bool {
	return f.platform.OS == runtime.GOOS && f.platform.Arch == runtime.GOARCH
}

// Library is a library that was found.
type Library struct {
	Name     string   `json:"name"`
	Kind     abi.Kind `json:"kind"`
	Path     string   `json:"path"`
	FoundVia string   `json:"found_via"` // cuda.pathfinder's label: "site-packages", "conda", "CUDA_HOME", ...
	Step     string   `json:"step"`      // the step that found it
	// LoadProblem is what the loader model says would stop a load of this dynamic library (a
	// DT_NEEDED library it would not find, a glibc older than the library needs), found without
	// loading anything; "" when nothing would. Load reports the loader's own words instead.
	LoadProblem string `json:"load_problem,omitempty"`
}

// LoadedLibrary is a library that was loaded into the process.
type LoadedLibrary struct {
	Library
	AlreadyLoaded bool    `json:"already_loaded"` // it was in the process before pathfinder looked
	Handle        uintptr `json:"-"`              // the loader's handle; never closed
	// Dependencies are the libraries loaded before it, in order (cublasLt for cublas), each with
	// its own; an optional dependency that was not found is left out.
	Dependencies []*LoadedLibrary `json:"dependencies,omitempty"`
}

// Find locates the dynamic library name without loading it.
func (f *Finder) Find(ctx context.Context, name string) (*Library, error) {
	return f.FindKind(ctx, DynamicLib, name)
}

// FindKind locates name of the given kind: a dynamic library, a header directory, a binary utility,
// a static or a bitcode library.
func (f *Finder) FindKind(ctx context.Context, kind Kind, name string) (*Library, error) {
	lib, err := f.once(ctx, kind, name, false)
	if err != nil {
		return nil, err
	}
	return &lib.Library, nil
}

// Load finds the dynamic library name, loads its dependencies and then it, and returns where it came
// from. A library already in the process is returned as it is.
func (f *Finder) Load(ctx context.Context, name string) (*LoadedLibrary, error) {
	return f.once(ctx, DynamicLib, name, true)
}

// Explain searches for name of kind afresh, without loading anything or using what was remembered,
// and returns every step with its candidates and why each was taken or refused.
func (f *Finder) Explain(ctx context.Context, kind Kind, name string) *Explanation {
	f.searches.Add(1)
	return f.search(ctx, kind, name, false)
}

func (f *Finder) once(ctx context.Context, kind Kind, name string, load bool) (*LoadedLibrary, error) {
	key := fmt.Sprintf("%s\x00%s\x00%v", kind, name, load)
	f.mu.Lock()
	if lib, ok := f.done[key]; ok {
		f.mu.Unlock()
		return lib, nil
	}
	if fl, ok := f.inflight[key]; ok {
		f.mu.Unlock()
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

	var ex *Explanation
	if !load {
		ex, _ = f.cachedFind(kind, name)
	}
	if ex == nil {
		f.searches.Add(1)
		var seen []observe.Observation
		ex, _, seen = f.searchAll(ctx, kind, name, load, false)
		if !load {
			f.storeFind(ctx, ex, seen)
		}
	}
	fl.lib, fl.err = ex.Result, ex.Err

	f.mu.Lock()
	delete(f.inflight, key)
	if fl.err == nil {
		f.done[key] = fl.lib
	}
	f.mu.Unlock()
	close(fl.done)
	return fl.lib, fl.err
}

// LibraryInfo describes a known name for listings.
type LibraryInfo struct {
	Name      string `json:"name"`
	Kind      Kind   `json:"kind"`
	Category  string `json:"category"` // "ctk", "third-party" or "driver"
	Available bool   `json:"available"`
	Pack      string `json:"pack"`
}

// Libraries lists every known name of kind in catalog order.
func (f *Finder) Libraries(kind Kind) []LibraryInfo {
	var out []LibraryInfo
	for _, n := range f.catalog.Names(kind) {
		e, _ := f.catalog.Lookup(kind, n)
		out = append(out, LibraryInfo{Name: n, Kind: kind, Category: e.Category(), Available: e.AvailableOn(f.platform), Pack: e.Pack})
	}
	return out
}

// Order returns the step order that applies to name.
func (f *Finder) Order(name string) []string { return f.cfg.orderFor(name) }

// ConfigFiles lists the configuration layers that were read, in order.
func (f *Finder) ConfigFiles() []string { return append([]string(nil), f.cfg.files...) }

var (
	defaultOnce   sync.Once
	defaultFinder *Finder
	defaultErr    error
)

// Default returns the process-wide Finder built from the default Options.
func Default() (*Finder, error) {
	defaultOnce.Do(func() { defaultFinder, defaultErr = New(Options{}) })
	return defaultFinder, defaultErr
}

// Find locates name with the default Finder.
func Find(ctx context.Context, name string) (*Library, error) {
	f, err := Default()
	if err != nil {
		return nil, err
	}
	return f.Find(ctx, name)
}

// Load loads name with the default Finder.
func Load(ctx context.Context, name string) (*LoadedLibrary, error) {
	f, err := Default()
	if err != nil {
		return nil, err
	}
	return f.Load(ctx, name)
}

// Kinds lists every kind, in the order listings show them.
func Kinds() []Kind {
	out := make([]Kind, len(catalog.Kinds))
	for i, k := range catalog.Kinds {
		out[i] = k.Kind
	}
	return out
}

// FileNames returns the file names a search for name of kind looks for on the Finder's platform.
func (f *Finder) FileNames(kind Kind, name string) []string {
	if e, ok := f.catalog.Lookup(kind, name); ok {
		return e.FileNames(f.platform)
	}
	return nil
}
