package search

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// Inspect is what the pathfinder command reads of f beyond the Go API: its settings, packs,
// plugins and caches. Its type is internal: a Go program has no use for it.
func (f *Engine) Inspect() inspect.Finder { return inspector{f} }

type inspector struct{ f *Engine }

func (i inspector) ConfigFiles() []string       { return append([]string(nil), i.f.cfg.Files...) }
func (i inspector) Settings() []inspect.Setting { return i.f.cfg.Settings() }
func (i inspector) Packs() []inspect.PackInfo   { return i.f.packs.Info() }
func (i inspector) PackDirs() []inspect.PackDir {
	return append([]inspect.PackDir(nil), i.f.packs.Dirs...)
}
func (i inspector) SitePackages() []string     { return append([]string(nil), i.f.sitePackages(nil)...) }
func (i inspector) Order(name string) []string { return i.f.cfg.OrderFor(name) }

// Cache is where the caches are, or why they are off, and the first error writing them met.
func (i inspector) Cache() inspect.Cache {
	c := inspect.Cache{Dir: i.f.cache.Dir, Off: i.f.cache.Off, Disabled: i.f.cache.Disabled}
	err := i.f.results.WriteError()
	if e := i.f.engineMade.Load(); err == nil && e != nil {
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
func (i inspector) IgnoredInputs() []IgnoredInput {
	i.f.mu.Lock()
	reported := stepsIgnored{}
	for step, ins := range i.f.ignored {
		reported.add(step, ins...)
	}
	i.f.mu.Unlock()
	return i.f.ignoredFor(nil, reported)
}

func (i inspector) FileNames(kind Kind, name string) []string {
	if e, ok := i.f.catalog.Lookup(kind, name); ok {
		return e.FileNames(i.f.platform)
	}
	return nil
}

// Plugins lists every configured plugin, by name, loading each module to ask it what it is (a
// module is compiled once and cached, as for a search). What is wrong is in Problems.
func (i inspector) Plugins(ctx context.Context) []inspect.PluginInfo {
	if !i.f.enter() { // a closed Engine has no runtime to ask
		return nil
	}
	defer i.f.leave()
	var out []inspect.PluginInfo
	for _, n := range i.f.cfg.PluginNames() {
		info, _ := i.f.pluginInfo(ctx, i.f.cfg.Plugins[n])
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
	sum := sha256.Sum256(code)
	info.SHA256 = hex.EncodeToString(sum[:])
	if p.SHA256 != "" && p.SHA256 != info.SHA256 {
		problem("pin", fmt.Errorf("sha256 is %s, but %s pins %s: refused", info.SHA256, f.cfg.Where("plugin."+p.Name+".sha256"), p.SHA256))
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
