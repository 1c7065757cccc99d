package engine

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// What the pathfinder command reads of an Engine beyond what host gives a Go program: its
// settings, packs, plugins and caches.

// ConfigFiles lists the configuration layers that were read, in order.
func (f *Engine) ConfigFiles() []string { return append([]string(nil), f.cfg.Files...) }

// Settings lists the effective configuration, key by key, with where each value came from. Keys no
// layer set are listed with their default and the origin "default".
func (f *Engine) Settings() []inspect.Setting { return f.cfg.Settings() }

// Packs lists the descriptor packs that were read, in the order they were read.
func (f *Engine) Packs() []inspect.PackInfo { return f.packs.Info() }

// PackDirs lists every place packs were looked for, in order, and whether it exists.
func (f *Engine) PackDirs() []inspect.PackDir { return append([]inspect.PackDir(nil), f.packs.Dirs...) }

// SitePackages is the site-packages directories the wheels step searches, in order.
func (f *Engine) SitePackages() []string { return append([]string(nil), f.sitePackages(nil)...) }

// Order returns the step order that applies to the library name.
func (f *Engine) Order(name string) []string { return f.cfg.OrderFor(name) }

// Cache is where the caches are, or why they are off, and the first error writing them met.
func (f *Engine) Cache() inspect.Cache {
	c := inspect.Cache{Dir: f.cache.Dir, Off: f.cache.Off, Disabled: f.cache.Disabled}
	err := f.results.WriteError()
	if e := f.engineMade.Load(); err == nil && e != nil {
		err = e.CacheWriteError()
	}
	if err != nil {
		// The path is some file in the cache: the dir is named with it.
		c.WriteError = observe.Cause(err).Error()
	}
	return c
}

// IgnoredInputs is what the Engine's settings pass over, and what its searches' steps said they
// passed over: read it after the searches.
func (f *Engine) IgnoredInputs() []IgnoredInput {
	f.mu.Lock()
	reported := stepsIgnored{}
	reported.merge(f.ignored)
	f.mu.Unlock()
	return f.ignoredFor(nil, reported)
}

// FileNames returns the file names a search for name of kind looks for on the Engine's platform.
func (f *Engine) FileNames(kind Kind, name string) []string {
	if e, ok := f.catalog.Lookup(kind, name); ok {
		return e.FileNames(f.platform)
	}
	return nil
}

// Descriptor returns the catalog's descriptor of name of kind: where each step looks for it.
func (f *Engine) Descriptor(kind Kind, name string) (abi.Descriptor, bool) {
	if e, ok := f.catalog.Lookup(kind, name); ok {
		return e.Descriptor, true
	}
	return abi.Descriptor{}, false
}

// Plugins lists every configured plugin, by name, loading each module to ask it what it is (a
// module is compiled once and cached, as for a search). What is wrong is in Problems.
func (f *Engine) Plugins(ctx context.Context) []inspect.PluginInfo {
	if !f.enter() { // a closed Engine has no runtime to ask
		return nil
	}
	defer f.leave()
	var out []inspect.PluginInfo
	for _, n := range f.cfg.PluginNames() {
		info, _ := f.pluginInfo(ctx, f.cfg.Plugins[n])
		out = append(out, info)
	}
	return out
}

// pluginInfo is what the config says of plugin p and what its module says of itself, with every
// problem, each a *PluginError, also in the info's Problems (without the plugin's name).
func (f *Engine) pluginInfo(ctx context.Context, p *config.Plugin) (inspect.PluginInfo, []error) {
	info := f.cfg.Info(p)
	var problems []error
	problem := func(op string, err error) {
		pe, ok := err.(*PluginError)
		if !ok {
			pe = &PluginError{Plugin: p.Name, Op: op, Err: err}
		}
		problems = append(problems, pe)
		info.Problems = append(info.Problems, pe.Err.Error()) // the listing names the plugin already
	}
	code, err := p.Code()
	if err != nil {
		problem("read", err)
		return info, problems
	}
	if info.SHA256, err = p.CheckPin(code); err != nil {
		problem("pin", err)
		return info, problems
	}
	deadline := f.now().Add(p.Timeout)
	mod, err := f.module(ctx, p, nil, deadline)
	if err != nil {
		problem("load", err)
		return info, problems
	}
	d, err := mod.Describe(ctx, deadline.Sub(f.now()))
	switch {
	case err != nil:
		problem("describe", err)
	case d == nil: // optional: ABI stays 0, and the version is checked when the plugin first searches
	default:
		info.ABI, info.Version, info.Searches, info.Wants = d.ABI, d.Version, d.Names, d.Env
		if p.Source.Builtin != "" {
			// One module holds every builtin step; its description is theirs together.
			info.Searches, info.Wants = []string{p.Source.Builtin}, nil
		}
		for _, err := range p.DescribeProblems(d, f.catalog) {
			problem("describe", err)
		}
	}
	return info, problems
}

// CheckConfigFile validates one config file as the only layer over the built-in defaults, with the
// descriptor packs this machine has (`pathfinder config check`): its syntax and keys, its steps, libraries and pack dirs, and
// every plugin it defines a source for, loaded and asked what it is (a missing or writable file, a
// sha256 that does not match its pin, another ABI, env it asks for that it is not granted). The
// problems of its plugins are joined (errors.Join), each a ConfigError at the plugin's source.
// The other options (LookupEnv, Platform, SystemConfigDir) apply as they do to New; ConfigFile is
// replaced by file.
func (o Options) CheckConfigFile(ctx context.Context, file string) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return &ConfigError{File: file, Err: err}
	}
	o.ConfigFile, o.onlyConfigFile = abs, true
	f, err := New(o)
	if err != nil {
		return err
	}
	defer f.Close()
	var all []error
	for _, name := range f.cfg.PluginNames() {
		p := f.cfg.Plugins[name]
		if p.DefinedIn != abs {
			continue // a builtin step this file does not redefine
		}
		_, problems := f.pluginInfo(ctx, p)
		for _, pe := range problems {
			ce := f.cfg.ErrorAt("plugin."+name+".source", pe)
			all = append(all, (*ConfigError)(ce))
		}
	}
	return errors.Join(all...)
}
