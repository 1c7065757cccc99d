// Package config reads pathfinder.toml in its layers — the built-in defaults, the system and user
// files, $PATHFINDER_CONFIG, --config — and the descriptor packs they and the environment name. It
// checks them before any search: keys and their types, step names, grants, plugin sources, the
// plugin files and their pins. Every error names the file, line and column of the key at fault.
package config

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/compat"
	"github.com/pathfinder-dev/pathfinder/internal/suggest"
	"github.com/pathfinder-dev/pathfinder/internal/tomlx"
)

// Host-owned steps that may appear in a step order besides plugin names (search.StepAlreadyLoaded,
// search.StepSystem).
const (
	StepAlreadyLoaded = "already-loaded"
	StepSystem        = "system"
)

// The found_via labels of the host's own steps, cuda.pathfinder's. Every other label is a plugin's,
// decided by Plugin.FoundViaFor: these two say the host's own step found the library, so no
// configuration may give them to a plugin.
const (
	FoundViaAlreadyLoaded = "was-already-loaded-from-elsewhere"
	FoundViaSystem        = "system-search"
)

// Options say where the layers are and how the environment is read.
type Options struct {
	ConfigFile      string // applied last, after the system file, the user file and $PATHFINDER_CONFIG
	OnlyConfigFile  bool   // ConfigFile is the only layer over the built-in defaults (config check)
	SystemConfigDir string // "" means /etc/pathfinder
	Getenv          func(string) string
}

// systemDir is the directory of the system config and packs.
func (o *Options) systemDir() string {
	if o.SystemConfigDir == "" {
		return "/etc/pathfinder"
	}
	return o.SystemConfigDir
}

// Config is the effective configuration after every layer has been applied.
type Config struct {
	Order        []string
	SitePackages []string
	LibraryOrder map[string][]string
	Plugins      map[string]*Plugin
	CacheDir     string
	CacheEnabled bool
	// ResolveDlopen answers system_resolve by dlopen in a child process, within DlopenTimeout,
	// instead of the loader model alone ([system] resolve = "dlopen").
	ResolveDlopen bool
	DlopenTimeout time.Duration
	// Compatibility is [search] compatibility, the mode of every library without one of its own
	// ([library.NAME] compatibility, in LibraryCompatibility): "" when no layer sets it.
	Compatibility        compat.Mode
	LibraryCompatibility map[string]compat.Mode
	// CUDA is [search] cuda: the CUDA the program was built for ("12", "12.4"), which anchors every
	// answer before the first; "" when no layer sets it.
	CUDA     string
	Files    []string // the layers that were read, in order
	PackDirs []string // [packs] dirs: pack files or directories, absolute

	hash    hash.Hash           // of every layer's name and contents, in order
	origins map[string]*setting // every key set, with its last value and where: pathfinder config
}

// The shape of one config file. Pointers tell a key that is set from one that is absent, so a layer
// overrides only what it sets.
type file struct {
	Search  fileSearch             `toml:"search"`
	Library map[string]fileLibrary `toml:"library"`
	Plugin  map[string]filePlugin  `toml:"plugin"`
	Packs   filePacks              `toml:"packs"`
	Cache   fileCache              `toml:"cache"`
	System  fileSystem             `toml:"system"`
}

type fileSearch struct {
	Order         *[]string `toml:"order"`
	SitePackages  *[]string `toml:"site_packages"`
	Compatibility *string   `toml:"compatibility"`
	CUDA          *string   `toml:"cuda"`
}

type fileLibrary struct {
	Order         *[]string `toml:"order"`
	Compatibility *string   `toml:"compatibility"`
}

type filePlugin struct {
	Source  *string           `toml:"source"`
	SHA256  *string           `toml:"sha256"`
	Env     *[]string         `toml:"env"`
	Read    *[]string         `toml:"read"`
	Caps    *[]string         `toml:"capabilities"`
	Memory  *string           `toml:"memory"`
	Timeout *string           `toml:"timeout"`
	Options map[string]string `toml:"options"`
	// FoundVia labels what the plugin finds, in every directory it is granted.
	FoundVia *string `toml:"found_via"`
	// AllowWritable accepts a plugin file writable by others than its owner.
	AllowWritable *bool `toml:"allow_writable"`
}

type filePacks struct {
	Dirs *[]string `toml:"dirs"` // descriptor pack files or directories of them
}

type fileCache struct {
	Dir     *string `toml:"dir"`
	Enabled *bool   `toml:"enabled"`
}

type fileSystem struct {
	Resolve       *string `toml:"resolve"`        // "model" or "dlopen"
	DlopenTimeout *string `toml:"dlopen_timeout"` // for resolve = "dlopen"
}

// layers returns the config files to read after the built-in defaults, in order. Missing system and
// user files are skipped; a missing PATHFINDER_CONFIG or --config file is an error (Load refuses a
// relative PATHFINDER_CONFIG, as every variable naming a path).
func layers(opts *Options) (optional, required []string) {
	if opts.OnlyConfigFile {
		return nil, []string{opts.ConfigFile}
	}
	optional = append(optional, filepath.Join(opts.systemDir(), "pathfinder.toml"))
	if dir := UserDir(opts.Getenv, "XDG_CONFIG_HOME", ".config"); dir != "" {
		optional = append(optional, filepath.Join(dir, "pathfinder", "pathfinder.toml"))
	}
	if f := opts.Getenv("PATHFINDER_CONFIG"); f != "" {
		required = append(required, f)
	}
	if opts.ConfigFile != "" {
		required = append(required, opts.ConfigFile)
	}
	return optional, required
}

// UserDir is $xdgVar, else $HOME/fallback; "" when neither is usable.
func UserDir(getenv func(string) string, xdgVar, fallback string) string {
	if d := getenv(xdgVar); filepath.IsAbs(d) {
		return d
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, fallback)
	}
	return ""
}

// Defaults returns a config with nothing but what every layer starts from; Apply adds layers to it.
func Defaults() *Config {
	return &Config{LibraryOrder: map[string][]string{}, LibraryCompatibility: map[string]compat.Mode{}, Plugins: map[string]*Plugin{}, hash: sha256.New()}
}

//go:generate go run ./gen

// builtinLayer is the built-in defaults applied once per process: decoding them and finding each
// key's position was a fifth of a warm Engine's start. They are decoded already (builtinFile, in
// builtin_gen.go, which go generate writes from DecodeBuiltin): a process that reads no other layer
// decodes no TOML. Each Engine gets its own copy.
var builtinLayer = sync.OnceValues(func() (*Config, error) {
	c := Defaults()
	return c, c.apply("builtin:pathfinder.toml", builtin.DefaultConfig(), builtinFile())
})

// clone copies c deeply enough that applying more layers to the copy leaves c as it was (layers
// replace slices and maps whole; noteValue edits a setting in place, so settings are copied).
func (c *Config) clone() *Config {
	n := *c
	n.LibraryOrder = maps.Clone(c.LibraryOrder)
	n.LibraryCompatibility = maps.Clone(c.LibraryCompatibility)
	n.Plugins = make(map[string]*Plugin, len(c.Plugins))
	for k, p := range c.Plugins {
		q := *p
		n.Plugins[k] = &q
	}
	n.origins = make(map[string]*setting, len(c.origins))
	for k, s := range c.origins {
		v := *s
		n.origins[k] = &v
	}
	n.Files = slices.Clone(c.Files)
	n.PackDirs = slices.Clone(c.PackDirs)
	state, _ := c.hash.(encoding.BinaryMarshaler).MarshalBinary()
	n.hash = sha256.New()
	n.hash.(encoding.BinaryUnmarshaler).UnmarshalBinary(state)
	return &n
}

// Hash identifies the configuration: every layer's name and contents, in order.
func (c *Config) Hash() []byte { return c.hash.Sum(nil) }

// Load reads every layer over the built-in defaults and checks the result.
func Load(opts Options) (*Config, error) {
	base, err := builtinLayer()
	if err != nil {
		return nil, err
	}
	c := base.clone()
	optional, required := layers(&opts)
	for _, name := range optional {
		data, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			return nil, &Error{File: name, Err: err}
		}
		if err := c.Apply(name, data); err != nil {
			return nil, err
		}
	}
	if f := opts.Getenv("PATHFINDER_CONFIG"); f != "" && !opts.OnlyConfigFile && !filepath.IsAbs(f) {
		return nil, &Error{Err: fmt.Errorf("$PATHFINDER_CONFIG %q is a relative path: refused, never resolved against the working directory", f)}
	}
	for _, name := range required {
		if !filepath.IsAbs(name) { // --config FILE, a command-line argument
			abs, err := filepath.Abs(name)
			if err != nil {
				return nil, &Error{File: name, Err: err}
			}
			name = abs
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, &Error{Err: err}
		}
		if err := c.Apply(name, data); err != nil {
			return nil, err
		}
	}
	return c, c.Check()
}

// DecodeBuiltin is builtin/pathfinder.toml decoded, a *file: what gen writes out as builtinFile.
func DecodeBuiltin() (any, error) {
	var f file
	err := tomlx.Decode("builtin:pathfinder.toml", builtin.DefaultConfig(), &f)
	return &f, err
}

// Apply reads the layer name, whose contents are data, over c.
func (c *Config) Apply(name string, data []byte) error {
	var f file
	if err := tomlx.Decode(name, data, &f); err != nil {
		var te *tomlx.Error
		if errors.As(err, &te) {
			return &Error{File: name, Line: te.Line, Col: te.Col, Key: te.Key, Err: te.Err}
		}
		return &Error{File: name, Err: err}
	}
	return c.apply(name, data, &f)
}

// apply applies the layer name, whose contents are data, decoded as f, over c.
func (c *Config) apply(name string, data []byte, f *file) error {
	fail := func(err error, key ...string) error {
		line, col := tomlx.Position(data, key)
		return &Error{File: name, Line: line, Col: col, Key: strings.Join(key, "."), Err: err}
	}
	c.Files = append(c.Files, name)
	c.noteOrigins(name, data, f)
	fmt.Fprintf(c.hash, "%s\x00%d\x00", name, len(data))
	c.hash.Write(data)
	if f.Search.Order != nil {
		c.Order = *f.Search.Order
	}
	if f.Search.SitePackages != nil {
		c.SitePackages = *f.Search.SitePackages
	}
	if m := f.Search.Compatibility; m != nil {
		mode, err := compat.ParseMode(*m)
		if err != nil {
			return fail(fmt.Errorf("search.compatibility: %v", err), "search", "compatibility")
		}
		c.Compatibility = mode
	}
	if v := f.Search.CUDA; v != nil {
		if _, err := compat.ParseVersion(*v); err != nil && *v != "" {
			return fail(fmt.Errorf("search.cuda: %q is not a CUDA version such as \"12\" or \"12.4\"", *v), "search", "cuda")
		}
		c.CUDA = *v
	}
	for lib, l := range f.Library {
		if l.Order != nil {
			c.LibraryOrder[lib] = *l.Order
		}
		if m := l.Compatibility; m != nil {
			mode, err := compat.ParseMode(*m)
			if err != nil {
				return fail(fmt.Errorf("library.%s.compatibility: %v", lib, err), "library", lib, "compatibility")
			}
			c.LibraryCompatibility[lib] = mode
		}
	}
	for pname, fp := range f.Plugin {
		p := c.Plugins[pname]
		if p == nil {
			p = &Plugin{Name: pname, Memory: abi.DefaultMemoryBytes, Timeout: abi.DefaultTimeout, DefinedIn: name}
			c.Plugins[pname] = p
		}
		pluginErr := func(err error, key ...string) error {
			return fail(&PluginError{Plugin: pname, Op: "config", Err: err}, append([]string{"plugin", pname}, key...)...)
		}
		if fp.Source != nil {
			src, err := parseSource(name, *fp.Source)
			if err != nil {
				return pluginErr(err, "source")
			}
			p.Source, p.DefinedIn = src, name
			if src.File != "" {
				c.noteValue("plugin."+pname+".source", src.File)
			}
		}
		if fp.AllowWritable != nil {
			p.AllowWritable = *fp.AllowWritable
		}
		if fp.SHA256 != nil {
			p.SHA256 = strings.ToLower(*fp.SHA256)
			c.noteValue("plugin."+pname+".sha256", p.SHA256)
		}
		if fp.Env != nil {
			if err := checkEnvGrants(*fp.Env); err != nil {
				return fail(fmt.Errorf("plugin.%s.env: %w", pname, err), "plugin", pname, "env")
			}
			p.Env = *fp.Env
		}
		if fp.Read != nil {
			read, err := parseGrants(*fp.Read)
			if err != nil {
				return fail(fmt.Errorf("plugin.%s.read: %w", pname, err), "plugin", pname, "read")
			}
			p.Read = read
		}
		if fp.Caps != nil {
			for _, cp := range *fp.Caps {
				if cp != abi.CapabilitySystemResolve {
					return fail(fmt.Errorf("plugin.%s.capabilities: unknown capability %q (known: %q)", pname, cp, abi.CapabilitySystemResolve), "plugin", pname, "capabilities")
				}
			}
			p.Caps = *fp.Caps
		}
		if fp.Memory != nil {
			m, err := parseBytes(*fp.Memory)
			if err != nil {
				return fail(fmt.Errorf("plugin.%s.memory: %v", pname, err), "plugin", pname, "memory")
			}
			p.Memory = m
		}
		if fp.Timeout != nil {
			d, err := time.ParseDuration(*fp.Timeout)
			if err != nil || d <= 0 {
				return fail(fmt.Errorf("plugin.%s.timeout: %q is not a positive duration such as \"2s\"", pname, *fp.Timeout), "plugin", pname, "timeout")
			}
			p.Timeout = d
		}
		if fp.Options != nil {
			p.Options = fp.Options
		}
		if fp.FoundVia != nil {
			if err := checkFoundVia(*fp.FoundVia); err != nil {
				return fail(fmt.Errorf("plugin.%s.found_via: %v", pname, err), "plugin", pname, "found_via")
			}
			p.FoundVia = *fp.FoundVia
		}
		if p.Source == (Source{}) {
			return fail(fmt.Errorf("plugin %q has no source (expected \"builtin:NAME\" or a .wasm path)", pname), "plugin", pname)
		}
		if p.SHA256 != "" {
			if _, err := hex.DecodeString(p.SHA256); err != nil || len(p.SHA256) != 64 {
				return pluginErr(fmt.Errorf("sha256 %q is not 64 hex digits", p.SHA256), "sha256")
			}
		}
	}
	if f.Packs.Dirs != nil {
		dirs := make([]string, len(*f.Packs.Dirs))
		for i, d := range *f.Packs.Dirs {
			var err error
			if dirs[i], err = resolvePath(name, d); err != nil {
				return fail(fmt.Errorf("packs.dirs: %v", err), "packs", "dirs")
			}
		}
		c.PackDirs = dirs
		c.noteValue("packs.dirs", dirs)
	}
	if f.Cache.Dir != nil {
		c.CacheDir = *f.Cache.Dir
	}
	if f.Cache.Enabled != nil {
		c.CacheEnabled = *f.Cache.Enabled
	}
	if r := f.System.Resolve; r != nil {
		if *r != "model" && *r != "dlopen" {
			return fail(fmt.Errorf("system.resolve: %q is not \"model\" or \"dlopen\"", *r), "system", "resolve")
		}
		c.ResolveDlopen = *r == "dlopen"
	}
	if t := f.System.DlopenTimeout; t != nil {
		d, err := time.ParseDuration(*t)
		if err != nil || d <= 0 {
			return fail(fmt.Errorf("system.dlopen_timeout: %q is not a positive duration such as \"5s\"", *t), "system", "dlopen_timeout")
		}
		c.DlopenTimeout = d
	}
	return nil
}

// Check validates the merged result: every step in every order exists, once; every site-packages
// directory is absolute; every plugin file may be run and no read grant is over-broad.
func (c *Config) Check() error {
	orders := map[string][]string{"search.order": c.Order}
	for lib, o := range c.LibraryOrder {
		orders["library."+lib+".order"] = o
	}
	keys := make([]string, 0, len(orders))
	for k := range orders {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		seen := map[string]bool{}
		for _, step := range orders[k] {
			if step != StepAlreadyLoaded && step != StepSystem && c.Plugins[step] == nil {
				steps := c.stepNames()
				return c.ErrorAt(k, fmt.Errorf("%s names unknown step %q%s (known: %s)", k, step, suggest.Phrase(suggest.Closest(step, steps)), strings.Join(steps, ", ")))
			}
			if seen[step] {
				return c.ErrorAt(k, fmt.Errorf("%s names step %q twice", k, step))
			}
			seen[step] = true
		}
	}
	for _, dir := range c.SitePackages {
		if !filepath.IsAbs(dir) {
			return c.ErrorAt("search.site_packages", fmt.Errorf("search.site_packages entry %q is a relative path: refused, never resolved against the working directory", dir))
		}
	}
	for _, name := range c.PluginNames() {
		if err := c.checkPluginFile(c.Plugins[name]); err != nil {
			return err
		}
		if err := c.checkGrants(c.Plugins[name]); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) stepNames() []string {
	names := []string{StepAlreadyLoaded, StepSystem}
	for n := range c.Plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PluginNames lists the configured plugins by name.
func (c *Config) PluginNames() []string {
	names := make([]string, 0, len(c.Plugins))
	for n := range c.Plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// OrderFor returns the step order that applies to the library lib.
func (c *Config) OrderFor(lib string) []string {
	if o, ok := c.LibraryOrder[lib]; ok {
		return o
	}
	return c.Order
}

// LibrarySetting names a [library.NAME] table and the key of it that was set.
type LibrarySetting struct{ Name, Key string }

// LibraryNames lists the libraries [library.NAME] tables set something for, sorted, each with one
// key it set ("library.cudart.order"), for errors about the name.
func (c *Config) LibraryNames() []LibrarySetting {
	var out []LibrarySetting
	for lib := range c.LibraryOrder {
		out = append(out, LibrarySetting{lib, "library." + lib + ".order"})
	}
	for lib := range c.LibraryCompatibility {
		if _, ok := c.LibraryOrder[lib]; !ok {
			out = append(out, LibrarySetting{lib, "library." + lib + ".compatibility"})
		}
	}
	slices.SortFunc(out, func(a, b LibrarySetting) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// CompatibilityFor returns the compatibility mode the config sets for the library lib: its own, else
// [search]'s; "" when neither is set.
func (c *Config) CompatibilityFor(lib string) compat.Mode {
	if m, ok := c.LibraryCompatibility[lib]; ok {
		return m
	}
	return c.Compatibility
}

// UsedIn lists the step orders that name plugin name: "search.order", "library.cudart.order".
func (c *Config) UsedIn(name string) []string {
	var out []string
	if slices.Contains(c.Order, name) {
		out = append(out, "search.order")
	}
	libs := make([]string, 0, len(c.LibraryOrder))
	for lib, o := range c.LibraryOrder {
		if slices.Contains(o, name) {
			libs = append(libs, lib)
		}
	}
	sort.Strings(libs)
	for _, lib := range libs {
		out = append(out, "library."+lib+".order")
	}
	return out
}

// usedInNote is " (named in search.order, library.cudart.order)", or "" for a plugin no order names.
func (c *Config) usedInNote(name string) string {
	if u := c.UsedIn(name); len(u) > 0 {
		return " (named in " + strings.Join(u, ", ") + ")"
	}
	return ""
}

// resolvePath makes p, written in the config file name, absolute: a relative path is relative to
// the file's directory, never to the working directory.
func resolvePath(name, p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("an empty path")
	case filepath.IsAbs(p):
		return filepath.Clean(p), nil
	case !filepath.IsAbs(name):
		return "", fmt.Errorf("%q is a relative path, and %s has no directory to resolve it against", p, name)
	}
	return filepath.Join(filepath.Dir(name), p), nil
}

type sizeUnit struct {
	suffix string
	mult   uint64
}

// sizeUnits are the units of sizes, largest first.
var sizeUnits = []sizeUnit{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// parseBytes reads "64MiB", "1GiB", "512KiB" or a plain number of bytes.
func parseBytes(s string) (uint64, error) {
	for _, u := range append(sizeUnits, sizeUnit{"B", 1}, sizeUnit{"", 1}) {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(num), 10, 64)
			if err != nil || n == 0 {
				break
			}
			return n * u.mult, nil
		}
	}
	return 0, fmt.Errorf("%q is not a size such as \"64MiB\"", s)
}

// FormatBytes writes n as parseBytes reads it, in the largest whole unit.
func FormatBytes(n uint64) string {
	for _, u := range sizeUnits {
		if n >= u.mult && n%u.mult == 0 {
			return fmt.Sprintf("%d%s", n/u.mult, u.suffix)
		}
	}
	return strconv.FormatUint(n, 10)
}

// FormatDuration writes d as time.ParseDuration reads it, without Go's zero units ("2m", not "2m0s").
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
