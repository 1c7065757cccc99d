package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/pathfinder-dev/pathfinder/host/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
)

// What the pathfinder command reads of a Finder beyond the Go API (internal/inspect).
func init() {
	inspect.Of = func(f any) inspect.Finder { return inspector{f.(*Finder)} }
	inspect.CheckConfigFile = func(ctx context.Context, file string) error { return checkConfigFile(ctx, file, Options{}) }
}

type inspector struct{ f *Finder }

func (i inspector) ConfigFiles() []string       { return append([]string(nil), i.f.cfg.Files...) }
func (i inspector) Settings() []inspect.Setting { return i.f.cfg.Settings() }
func (i inspector) Packs() []inspect.PackInfo   { return i.f.packs.Info() }
func (i inspector) PackDirs() []inspect.PackDir {
	return append([]inspect.PackDir(nil), i.f.packs.Dirs...)
}
func (i inspector) SitePackages() []string     { return append([]string(nil), i.f.sitePackages(nil)...) }
func (i inspector) CacheDir() string           { return i.f.cacheDir }
func (i inspector) Order(name string) []string { return i.f.cfg.OrderFor(name) }

func (i inspector) IgnoredInputs() []inspect.IgnoredInput {
	var out []inspect.IgnoredInput
	for _, in := range i.f.ignoredFor(nil) {
		out = append(out, inspect.IgnoredInput(in))
	}
	return out
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
	var out []inspect.PluginInfo
	for _, n := range i.f.cfg.PluginNames() {
		out = append(out, i.f.pluginInfo(ctx, i.f.cfg.Plugins[n]))
	}
	return out
}

func (f *Finder) pluginInfo(ctx context.Context, p *config.Plugin) inspect.PluginInfo {
	info := f.cfg.Info(p)
	problem := func(err error) { // the listing names the plugin already
		var pe *PluginError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		info.Problems = append(info.Problems, err.Error())
	}
	code, err := p.Code()
	if err != nil {
		problem(err)
		return info
	}
	sum := sha256.Sum256(code)
	info.SHA256 = hex.EncodeToString(sum[:])
	if p.SHA256 != "" && p.SHA256 != info.SHA256 {
		info.Problems = append(info.Problems, fmt.Sprintf("sha256 is %s, but %s pins %s: refused", info.SHA256, f.cfg.Where("plugin."+p.Name+".sha256"), p.SHA256))
		return info
	}
	mod, err := f.module(ctx, p, nil)
	if err != nil {
		problem(err)
		return info
	}
	d, err := mod.Describe(ctx, p.Timeout)
	switch {
	case err != nil:
		problem(err)
	case d == nil: // optional: ABI stays 0, and the version is checked when the plugin first searches
	default:
		info.ABI, info.Version, info.Searches, info.Wants = d.ABI, d.Version, d.Names, d.Env
		if p.Source.Builtin != "" {
			// One module holds every builtin step; its description is theirs together.
			info.Searches, info.Wants = []string{p.Source.Builtin}, nil
		}
		info.Problems = append(info.Problems, p.DescribeProblems(d, f.catalog)...)
	}
	return info
}

// checkConfigFile validates one config file as the only layer over the built-in defaults, with the
// descriptor packs this machine has: its syntax and keys, its steps, libraries and pack dirs, and
// every plugin it defines a source for, loaded and asked what it is (a missing or writable file, a
// sha256 that does not match its pin, another ABI, env it asks for that it is not granted). opts
// supplies the environment and the system directory, as for New. The problems of several plugins
// are joined (errors.Join), each a ConfigError.
func checkConfigFile(ctx context.Context, file string, opts Options) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return &ConfigError{File: file, Err: err}
	}
	opts.ConfigFile, opts.onlyConfigFile = abs, true
	f, err := New(opts)
	if err != nil {
		return err
	}
	defer f.Close()
	var problems []error
	for _, name := range f.cfg.PluginNames() {
		p := f.cfg.Plugins[name]
		if p.DefinedIn != abs {
			continue // a builtin step this file does not redefine
		}
		for _, pr := range f.pluginInfo(ctx, p).Problems {
			e := f.cfg.ErrorAt("plugin."+name+".source", &config.PluginError{Plugin: name, Op: "describe", Err: errors.New(pr)})
			problems = append(problems, public(e))
		}
	}
	return errors.Join(problems...)
}
