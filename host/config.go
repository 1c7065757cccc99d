package host

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
	"github.com/pathfinder-dev/pathfinder/host/internal/tomlx"
)

// Host-owned steps that may appear in a step order besides plugin names.
const (
	StepAlreadyLoaded = "already-loaded"
	StepSystem        = "system"
)

// Grant tokens in a plugin's env and read lists.
const (
	grantSitePackages = "@site-packages"
	grantInstallRoots = "@install-root-env-vars"
	grantCanaryRoots  = "@canary-roots"
)

// config is the effective configuration after every layer has been applied.
type config struct {
	order        []string
	sitePackages []string
	libraryOrder map[string][]string
	plugins      map[string]*pluginConfig
	cacheDir     string
	cacheEnabled bool
	// resolveDlopen answers system_resolve by dlopen in a child process, within dlopenTimeout,
	// instead of the loader model alone ([system] resolve = "dlopen").
	resolveDlopen bool
	dlopenTimeout time.Duration
	files         []string  // the layers that were read, in order
	hash          hash.Hash // of every layer's name and contents, in order

	packDirs []string            // [packs] dirs: pack files or directories, absolute
	origins  map[string]*setting // every key set, with its last value and where: pathfinder config
}

type pluginConfig struct {
	name      string
	source    string
	sha256    string
	env       []string
	read      []string
	caps      []string
	memory    uint64
	timeout   time.Duration
	options   map[string]string
	definedIn string
	// allowWritable accepts a plugin file that others than its owner may write.
	allowWritable bool
}

// The shape of one config file. Pointers tell a key that is set from one that is absent, so a layer
// overrides only what it sets.
type configFile struct {
	Search struct {
		Order        *[]string `toml:"order"`
		SitePackages *[]string `toml:"site_packages"`
	} `toml:"search"`
	Library map[string]struct {
		Order *[]string `toml:"order"`
	} `toml:"library"`
	Plugin map[string]struct {
		Source  *string           `toml:"source"`
		SHA256  *string           `toml:"sha256"`
		Env     *[]string         `toml:"env"`
		Read    *[]string         `toml:"read"`
		Caps    *[]string         `toml:"capabilities"`
		Memory  *string           `toml:"memory"`
		Timeout *string           `toml:"timeout"`
		Options map[string]string `toml:"options"`
		// AllowWritable accepts a plugin file writable by others than its owner.
		AllowWritable *bool `toml:"allow_writable"`
	} `toml:"plugin"`
	Packs struct {
		Dirs *[]string `toml:"dirs"` // descriptor pack files or directories of them
	} `toml:"packs"`
	Cache struct {
		Dir     *string `toml:"dir"`
		Enabled *bool   `toml:"enabled"`
	} `toml:"cache"`
	System struct {
		Resolve       *string `toml:"resolve"`        // "model" or "dlopen"
		DlopenTimeout *string `toml:"dlopen_timeout"` // for resolve = "dlopen"
	} `toml:"system"`
}

// configLayers returns the config files to read after the built-in defaults, in order. Missing
// system and user files are skipped; a missing PATHFINDER_CONFIG or --config file is an error.
func configLayers(opts *Options) (optional, required []string) {
	if opts.onlyConfigFile {
		return nil, []string{opts.ConfigFile}
	}
	sys := opts.SystemConfigDir
	if sys == "" {
		sys = "/etc/pathfinder"
	}
	optional = append(optional, filepath.Join(sys, "pathfinder.toml"))
	if dir := userDir(opts.getenv, "XDG_CONFIG_HOME", ".config"); dir != "" {
		optional = append(optional, filepath.Join(dir, "pathfinder", "pathfinder.toml"))
	}
	if f := opts.getenv("PATHFINDER_CONFIG"); f != "" {
		required = append(required, f)
	}
	if opts.ConfigFile != "" {
		required = append(required, opts.ConfigFile)
	}
	return optional, required
}

// userDir is $xdgVar, else $HOME/fallback; "" when neither is usable.
func userDir(getenv func(string) string, xdgVar, fallback string) string {
	if d := getenv(xdgVar); filepath.IsAbs(d) {
		return d
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, fallback)
	}
	return ""
}

// builtinLayer is the built-in defaults applied once per process: decoding them and finding each
// key's position was a fifth of a warm Finder's start. Each Finder gets its own copy.
var builtinLayer = sync.OnceValues(func() (*config, error) {
	c := &config{libraryOrder: map[string][]string{}, plugins: map[string]*pluginConfig{}, hash: sha256.New()}
	return c, c.apply("builtin:pathfinder.toml", builtin.DefaultConfig())
})

// clone copies c deeply enough that applying more layers to the copy leaves c as it was (layers
// replace slices and maps whole; noteValue edits a setting in place, so settings are copied).
func (c *config) clone() *config {
	n := *c
	n.libraryOrder = maps.Clone(c.libraryOrder)
	n.plugins = make(map[string]*pluginConfig, len(c.plugins))
	for k, p := range c.plugins {
		q := *p
		n.plugins[k] = &q
	}
	n.origins = make(map[string]*setting, len(c.origins))
	for k, s := range c.origins {
		v := *s
		n.origins[k] = &v
	}
	n.files = slices.Clone(c.files)
	n.packDirs = slices.Clone(c.packDirs)
	state, _ := c.hash.(encoding.BinaryMarshaler).MarshalBinary()
	n.hash = sha256.New()
	n.hash.(encoding.BinaryUnmarshaler).UnmarshalBinary(state)
	return &n
}

func loadConfig(opts *Options) (*config, error) {
	base, err := builtinLayer()
	if err != nil {
		return nil, err
	}
	c := base.clone()
	optional, required := configLayers(opts)
	for _, name := range optional {
		data, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("pathfinder: config %s: %w", name, err)
		}
		if err := c.apply(name, data); err != nil {
			return nil, err
		}
	}
	for _, name := range required {
		if !filepath.IsAbs(name) {
			abs, err := filepath.Abs(name)
			if err != nil {
				return nil, fmt.Errorf("pathfinder: config %s: %w", name, err)
			}
			name = abs
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("pathfinder: config: %w", err)
		}
		if err := c.apply(name, data); err != nil {
			return nil, err
		}
	}
	return c, c.check()
}

func (c *config) apply(name string, data []byte) error {
	var f configFile
	md, err := tomlx.Decode("config "+name, data, &f)
	if err != nil {
		return err
	}
	at := func(key ...string) string {
		line, col := tomlx.Position(data, key)
		return fmt.Sprintf("%s:%d:%d", name, line, col)
	}
	c.files = append(c.files, name)
	c.noteOrigins(name, data, &f)
	fmt.Fprintf(c.hash, "%s\x00%d\x00", name, len(data))
	c.hash.Write(data)
	if f.Search.Order != nil {
		c.order = *f.Search.Order
	}
	if f.Search.SitePackages != nil {
		c.sitePackages = *f.Search.SitePackages
	}
	for lib, l := range f.Library {
		if l.Order != nil {
			c.libraryOrder[lib] = *l.Order
		}
	}
	for pname, fp := range f.Plugin {
		p := c.plugins[pname]
		if p == nil {
			p = &pluginConfig{name: pname, memory: 64 << 20, timeout: 5 * time.Second, definedIn: name}
			c.plugins[pname] = p
		}
		if fp.Source != nil {
			p.source, p.definedIn = *fp.Source, name
			if !strings.HasPrefix(p.source, "builtin:") {
				if p.source, err = resolvePath(name, p.source); err != nil {
					return fmt.Errorf("pathfinder: config %s: plugin %q: source: %v", at("plugin", pname, "source"), pname, err)
				}
				c.noteValue("plugin."+pname+".source", p.source)
			}
		}
		if fp.AllowWritable != nil {
			p.allowWritable = *fp.AllowWritable
		}
		if fp.SHA256 != nil {
			p.sha256 = strings.ToLower(*fp.SHA256)
			c.noteValue("plugin."+pname+".sha256", p.sha256)
		}
		if fp.Env != nil {
			p.env = *fp.Env
		}
		if fp.Read != nil {
			p.read = *fp.Read
		}
		if fp.Caps != nil {
			for _, c := range *fp.Caps {
				if c != abi.CapabilitySystemResolve {
					return fmt.Errorf("pathfinder: config %s: plugin.%s.capabilities: unknown capability %q (known: %q)", at("plugin", pname, "capabilities"), pname, c, abi.CapabilitySystemResolve)
				}
			}
			p.caps = *fp.Caps
		}
		if fp.Memory != nil {
			m, err := parseBytes(*fp.Memory)
			if err != nil {
				return fmt.Errorf("pathfinder: config %s: plugin.%s.memory: %v", at("plugin", pname, "memory"), pname, err)
			}
			p.memory = m
		}
		if fp.Timeout != nil {
			d, err := time.ParseDuration(*fp.Timeout)
			if err != nil || d <= 0 {
				return fmt.Errorf("pathfinder: config %s: plugin.%s.timeout: %q is not a positive duration such as \"2s\"", at("plugin", pname, "timeout"), pname, *fp.Timeout)
			}
			p.timeout = d
		}
		if fp.Options != nil {
			p.options = fp.Options
		}
		if p.source == "" {
			return fmt.Errorf("pathfinder: config %s: plugin %q has no source (expected \"builtin:NAME\" or a .wasm path)", at("plugin", pname), pname)
		}
		if s, ok := strings.CutPrefix(p.source, "builtin:"); ok && !builtin.IsStep(s) {
			return fmt.Errorf("pathfinder: config %s: plugin %q: no builtin step %q", at("plugin", pname, "source"), pname, s)
		}
		if p.sha256 != "" {
			if _, err := hex.DecodeString(p.sha256); err != nil || len(p.sha256) != 64 {
				return fmt.Errorf("pathfinder: config %s: plugin %q: sha256 %q is not 64 hex digits", at("plugin", pname, "sha256"), pname, p.sha256)
			}
		}
	}
	if f.Packs.Dirs != nil {
		dirs := make([]string, len(*f.Packs.Dirs))
		for i, d := range *f.Packs.Dirs {
			if dirs[i], err = resolvePath(name, d); err != nil {
				return fmt.Errorf("pathfinder: config %s: packs.dirs: %v", at("packs", "dirs"), err)
			}
		}
		c.packDirs = dirs
		c.noteValue("packs.dirs", dirs)
	}
	if f.Cache.Dir != nil {
		c.cacheDir = *f.Cache.Dir
	}
	if f.Cache.Enabled != nil {
		c.cacheEnabled = *f.Cache.Enabled
	}
	if r := f.System.Resolve; r != nil {
		if *r != "model" && *r != "dlopen" {
			return fmt.Errorf("pathfinder: config %s: system.resolve: %q is not \"model\" or \"dlopen\"", at("system", "resolve"), *r)
		}
		c.resolveDlopen = *r == "dlopen"
	}
	if t := f.System.DlopenTimeout; t != nil {
		d, err := time.ParseDuration(*t)
		if err != nil || d <= 0 {
			return fmt.Errorf("pathfinder: config %s: system.dlopen_timeout: %q is not a positive duration such as \"5s\"", at("system", "dlopen_timeout"), *t)
		}
		c.dlopenTimeout = d
	}
	_ = md
	return nil
}

// check validates the merged result: every step in every order exists.
func (c *config) check() error {
	orders := map[string][]string{"search.order": c.order}
	for lib, o := range c.libraryOrder {
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
			if step != StepAlreadyLoaded && step != StepSystem && c.plugins[step] == nil {
				return fmt.Errorf("pathfinder: %s: %s names unknown step %q (known: %s)", c.where(k), k, step, strings.Join(c.stepNames(), ", "))
			}
			if seen[step] {
				return fmt.Errorf("pathfinder: %s: %s names step %q twice", c.where(k), k, step)
			}
			seen[step] = true
		}
	}
	for _, dir := range c.sitePackages {
		if !filepath.IsAbs(dir) {
			return fmt.Errorf("pathfinder: %s: search.site_packages entry %q is a relative path: refused, never resolved against the working directory", c.where("search.site_packages"), dir)
		}
	}
	for _, name := range c.pluginNames() {
		if err := c.checkPluginFile(c.plugins[name]); err != nil {
			return err
		}
		if err := c.checkGrants(c.plugins[name]); err != nil {
			return err
		}
	}
	return nil
}

func (c *config) stepNames() []string {
	names := []string{StepAlreadyLoaded, StepSystem}
	for n := range c.plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (c *config) orderFor(lib string) []string {
	if o, ok := c.libraryOrder[lib]; ok {
		return o
	}
	return c.order
}

// parseBytes reads "64MiB", "1GiB", "512KiB" or a plain number of bytes.
func parseBytes(s string) (uint64, error) {
	units := []struct {
		suffix string
		mult   uint64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}, {"", 1}}
	for _, u := range units {
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
