package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/internal/candidate"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/guestpath"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/printable"
	"github.com/pathfinder-dev/pathfinder/internal/wasm"
)

// module returns the compiled module of plugin p, compiling it on first use by deadline (the step's:
// its timeout bounds the compile as it bounds the call).
func (f *Engine) module(ctx context.Context, p *config.Plugin, rec *observe.Recorder, deadline time.Time) (*wasm.Module, error) {
	if p.Source.File != "" {
		rec.Stat(p.Source.File) // a changed plugin file is a changed search
	}
	f.mu.Lock()
	m := f.modules[p.Name]
	f.mu.Unlock()
	if m != nil {
		return m, nil
	}
	fail := func(op string, err error) (*wasm.Module, error) {
		return nil, &PluginError{Plugin: p.Name, Op: op, Err: err}
	}
	code, err := p.Code()
	if err != nil {
		return fail("read", err)
	}
	if p.SHA256 != "" { // an unpinned module is not hashed: the builtin one is loaded by every process
		if _, err := p.CheckPin(code); err != nil {
			return fail("pin", err)
		}
	}
	if m, err = f.engine().Load(ctx, code, p.Memory, deadline.Sub(f.now())); err != nil {
		return fail("load", err)
	}
	if p.Source.File != "" { // a site plugin that wants more than it is granted is refused, not half-run
		if d, err := m.Describe(ctx, deadline.Sub(f.now())); err != nil {
			return fail("describe", err)
		} else if d != nil {
			if probs := p.DescribeProblems(d, f.catalog); len(probs) > 0 {
				msgs := make([]string, len(probs))
				for i, e := range probs {
					msgs[i] = e.Error()
				}
				return fail("describe", errors.New(strings.Join(msgs, "; ")))
			}
		}
	}
	f.mu.Lock()
	f.modules[p.Name] = m
	f.mu.Unlock()
	return m, nil
}

// granted is what one plugin call may see: the mounts and env for the runtime, the roots for the
// request, the directories for validation, and notes on grants that were refused.
type granted struct {
	wasm  wasm.Grants
	roots []abi.Root
	dirs  candidate.Granted
	notes []string
}

// note adds a line about the grants to the step's log, escaped: it may hold a directory's name.
func (g *granted) note(line string) { g.notes = append(g.notes, printable.String(line)) }

// grant resolves plugin p's env and read grants for library e, recording what it looks at in rec.
func (f *Engine) grant(p *config.Plugin, e *catalog.Entry, rec *observe.Recorder) *granted {
	paths, openRoot := guestpath.Host, f.openRoot
	if f.hooks.paths != nil {
		paths, openRoot = *f.hooks.paths, f.hooks.openRoot
	}
	getenv := rec.Getenv(f.getenv)
	g := &granted{wasm: wasm.Grants{Env: map[string]string{}, Record: rec},
		dirs: candidate.Granted{Paths: paths, Rec: rec, Now: f.hooks.now}}
	for _, name := range p.EnvVars(e) {
		if v := getenv(name); v != "" {
			// A value holding an absolute host path is given in the guest's form (the same as the
			// host's on Unix): the plugin joins and checks it as it would a Unix path.
			gv, err := paths.EnvToGuest(v)
			if err != nil {
				g.note(fmt.Sprintf("not granted $%s: %v", name, err))
				continue
			}
			g.wasm.Env[name] = gv
		}
	}
	add := func(dir, role, label string) {
		if dir == "" {
			return
		}
		// The guest sees dir at its guest path; the host keeps the canonical host form (cleaned,
		// without a \\?\ prefix), which is what candidates map back to. A relative path is refused
		// here, never resolved against the working directory.
		guest, err := paths.ToGuest(dir)
		if err == nil {
			dir, err = paths.ToHost(guest)
		}
		if err != nil {
			g.note(fmt.Sprintf("not granted (%s): %v", role, err))
			return
		}
		if slices.ContainsFunc(g.dirs.Dirs, func(d candidate.Dir) bool { return d.Path == dir }) {
			g.roots = append(g.roots, abi.Root{Path: guest, Role: role})
			return
		}
		if err := f.overBroad(paths, dir); err != nil {
			g.note(fmt.Sprintf("not granted %s (%s): %v", dir, role, err))
			return
		}
		root, err := openRoot(dir, rec)
		if err != nil {
			g.note(fmt.Sprintf("not granted %s (%s): %v", dir, role, err))
			return
		}
		g.dirs.Dirs = append(g.dirs.Dirs, candidate.Dir{Path: dir, Root: root, Label: label})
		g.wasm.Mounts = append(g.wasm.Mounts, wasm.Mount{Path: dir, Guest: guest, Root: root})
		g.roots = append(g.roots, abi.Root{Path: guest, Role: role})
	}
	if slices.Contains(p.Caps, abi.CapabilitySystemResolve) {
		g.wasm.SystemResolve = func(name string) (string, error) {
			p, _, err := f.systemResolve(name, rec) // the note is the @canary-roots grant's
			if err != nil {
				return "", err
			}
			return paths.ToGuest(p)
		}
	}
	for _, r := range p.Read {
		switch r.Kind {
		case config.GrantCanaryRoots:
			for _, c := range e.CanaryAnchors {
				lib, note, err := f.systemResolve(c, rec)
				if note != "" {
					g.note(note)
				}
				if err != nil {
					g.note(fmt.Sprintf("canary %q: %v", c, err))
					continue
				}
				// The one place a canary's root is worked out: the step searches what is granted here.
				root, ok := paths.ToolkitRoot(lib)
				if !ok {
					g.note(fmt.Sprintf("canary %s at %s is not in a toolkit layout (lib64, lib, targets/<triple>/lib, bin): no root to derive", c, lib))
					continue
				}
				g.note(fmt.Sprintf("canary %s at %s: toolkit root %s", c, lib, root))
				add(root, abi.RoleCanaryRoot, p.FoundViaFor(r, ""))
			}
		case config.GrantSitePackages:
			// Each site with where it comes from, and the ones Python's rules leave out with why.
			for _, s := range f.usedDiscovery(rec).sites {
				if s.Off != "" {
					g.note(fmt.Sprintf("site-packages %s not searched: %s", s.Dir, s.Off))
					continue
				}
				g.note(fmt.Sprintf("site-packages %s: %s", s.Dir, s.From))
				add(s.Dir, abi.RoleSitePackages, p.FoundViaFor(r, ""))
			}
		case config.GrantInstallRoots:
			for _, v := range e.InstallRootEnvVars {
				add(getenv(v), abi.RoleEnvPrefix+v, p.FoundViaFor(r, v))
			}
		case config.GrantVar:
			add(getenv(r.Name), abi.RoleEnvPrefix+r.Name, p.FoundViaFor(r, r.Name))
		default:
			add(r.Name, "", p.FoundViaFor(r, ""))
		}
	}
	return g
}

// openRoot opens dir as a confined root once per Engine: symlinks inside it cannot lead out.
func (f *Engine) openRoot(dir string, rec *observe.Recorder) (*os.Root, error) {
	fi, err := rec.Stat(dir)
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.roots[dir]; ok {
		// Still the same directory? One deleted and made again (a rebuilt venv) is opened anew.
		if cur, err2 := r.Stat("."); err == nil && err2 == nil && os.SameFile(fi, cur) {
			return r, nil
		}
		r.Close()
		delete(f.roots, dir)
	}
	if err != nil {
		return nil, errors.Unwrap(err)
	}
	if !fi.IsDir() {
		return nil, errors.New("not a directory")
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	f.roots[dir] = r
	return r, nil
}

// overBroad is config.OverBroad, remembered per directory while it is the same directory: it
// resolves every symlink on the way, which was a third of re-validating a cached answer.
func (f *Engine) overBroad(paths guestpath.Map, dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return config.OverBroad(paths, dir)
	}
	if v, ok := f.broad.load(dir); ok && os.SameFile(v.fi, fi) {
		return v.err
	}
	err = config.OverBroad(paths, dir)
	f.broad.store(dir, broadVerdict{fi, err})
	return err
}

// broadVerdict is overBroad's verdict on a directory, while it is the directory fi says.
type broadVerdict struct {
	fi  os.FileInfo
	err error
}

// now is the clock a step's deadline is set and read by: time.Now, or the test's.
func (f *Engine) now() time.Time {
	if f.hooks.now != nil {
		return f.hooks.now()
	}
	return time.Now()
}

// callPlugin builds the request and grants for one plugin step and runs it, all of it by one
// deadline: the plugin's timeout from the step's start, its module's compile included.
func (f *Engine) callPlugin(ctx context.Context, step string, e *catalog.Entry, rec *observe.Recorder) (*abi.Response, *granted, []string, error) {
	p := f.cfg.Plugins[step]
	deadline := f.now().Add(p.Timeout)
	mod, err := f.module(ctx, p, rec, deadline)
	if err != nil {
		return nil, nil, nil, err
	}
	if f.engine().CompileTimeout > 0 {
		deadline = f.now().Add(p.Timeout) // a test lifted the bound on compiles: they are not the step's
	}
	g := f.grant(p, e, rec)
	g.dirs.Deadline = deadline
	req := abi.Request{
		ABI:      abi.Version,
		Step:     step,
		Entry:    p.Source.Builtin, // "" for a plugin file, which registers one search
		Kind:     e.Kind,
		Platform: f.platform,
		Library:  e.Descriptor,
		Roots:    g.roots,
		Options:  p.Options,
	}
	b, err := json.Marshal(&req)
	if err != nil {
		return nil, nil, nil, err
	}
	out, res, err := mod.Call(ctx, g.wasm, b, deadline.Sub(f.now()))
	log := append(g.notes, res.Log...)
	if err != nil {
		return nil, nil, log, &PluginError{Plugin: step, Op: "search", Err: err}
	}
	resp, err := candidate.DecodeResponse(out)
	if err != nil {
		return nil, nil, log, &PluginError{Plugin: step, Op: "search", Err: err}
	}
	return resp, g, log, nil
}
