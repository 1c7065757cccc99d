package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/host/internal/cachefile"
	"github.com/pathfinder-dev/pathfinder/host/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/host/internal/observe"
	"github.com/pathfinder-dev/pathfinder/host/internal/wasm"
)

// PluginInfo is a configured plugin step: where it comes from, what it is, and what it is granted.
type PluginInfo struct {
	Name   string `json:"name"`
	Source string `json:"source"` // "builtin:wheels", or the .wasm file's absolute path
	SHA256 string `json:"sha256"` // of the module's bytes as they are now; "" when unreadable
	Pinned bool   `json:"pinned"` // the config pins the hash (and SHA256 matched it, or Problems says not)
	// What the module says about itself through its describe export; ABI 0 when it has none (the
	// version is then checked when it first searches) or could not be loaded (see Problems).
	ABI      int      `json:"abi"`
	Version  string   `json:"version,omitempty"`
	Searches []string `json:"searches,omitempty"` // the searches the module registers
	Wants    []string `json:"wants_env,omitempty"`
	// What the config grants.
	Env           []string          `json:"env"`
	Read          []string          `json:"read"`
	Capabilities  []string          `json:"capabilities"`
	Memory        string            `json:"memory"`
	Timeout       string            `json:"timeout"`
	AllowWritable bool              `json:"allow_writable,omitempty"`
	Options       map[string]string `json:"options,omitempty"`
	DefinedIn     string            `json:"defined_in"` // the file:line:col of its source key
	UsedIn        []string          `json:"used_in"`    // the step orders that name it
	// Problems are why the plugin cannot run, or what it asks for that it is not granted.
	Problems []string `json:"problems,omitempty"`
}

// Plugins lists every configured plugin, by name, loading each module to ask it what it is (a module
// is compiled once and cached, as for a search). It never fails: what is wrong is in Problems.
func (f *Finder) Plugins(ctx context.Context) []PluginInfo {
	names := make([]string, 0, len(f.cfg.plugins))
	for n := range f.cfg.plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []PluginInfo
	for _, n := range names {
		out = append(out, f.pluginInfo(ctx, f.cfg.plugins[n]))
	}
	return out
}

func (f *Finder) pluginInfo(ctx context.Context, p *pluginConfig) PluginInfo {
	info := PluginInfo{
		Name:          p.name,
		Source:        p.source,
		Pinned:        p.sha256 != "",
		Env:           nonNil(p.env),
		Read:          nonNil(p.read),
		Capabilities:  nonNil(p.caps),
		Memory:        formatBytes(p.memory),
		Timeout:       formatDuration(p.timeout),
		AllowWritable: p.allowWritable,
		Options:       p.options,
		DefinedIn:     f.cfg.originOf("plugin." + p.name + ".source"),
		UsedIn:        nonNil(f.cfg.usedIn(p.name)),
	}
	problem := func(err error) { // the listing names the plugin already
		msg := strings.TrimPrefix(err.Error(), "pathfinder: ")
		info.Problems = append(info.Problems, strings.TrimPrefix(msg, fmt.Sprintf("plugin %q: ", p.name)))
	}
	code, err := pluginCode(p)
	if err != nil {
		problem(err)
		return info
	}
	sum := sha256.Sum256(code)
	info.SHA256 = hex.EncodeToString(sum[:])
	if p.sha256 != "" && p.sha256 != info.SHA256 {
		info.Problems = append(info.Problems, fmt.Sprintf("sha256 is %s, but %s pins %s: refused", info.SHA256, f.cfg.where("plugin."+p.name+".sha256"), p.sha256))
		return info
	}
	mod, _, err := f.module(ctx, p, nil)
	if err != nil {
		problem(err)
		return info
	}
	d, err := mod.Describe(ctx, p.timeout)
	switch {
	case err != nil:
		problem(err)
	case d == nil: // optional: ABI stays 0, and the version is checked when the plugin first searches
	default:
		info.ABI, info.Version, info.Searches, info.Wants = d.ABI, d.Version, d.Names, d.Env
		if entry, ok := strings.CutPrefix(p.source, "builtin:"); ok {
			// One module holds every builtin step; its description is theirs together.
			info.Searches, info.Wants = []string{entry}, nil
		}
		info.Problems = append(info.Problems, describeProblems(p, d, f.catalog)...)
	}
	return info
}

// pluginCode reads a plugin's module: the builtin steps module, or the source file, which must be a
// regular file (a FIFO would block the read) no larger than a module may be.
func pluginCode(p *pluginConfig) ([]byte, error) {
	if strings.HasPrefix(p.source, "builtin:") {
		return builtin.StepsModule(), nil
	}
	f, fi, err := observe.Open(p.source)
	if err == nil && fi.IsDir() {
		f.Close()
		err = errors.New("a directory")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p.source, unwrapPath(err))
	}
	defer f.Close()
	if fi.Size() > wasm.MaxModuleBytes {
		return nil, fmt.Errorf("%s: %d bytes, over the %d-byte limit on a module", p.source, fi.Size(), wasm.MaxModuleBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, wasm.MaxModuleBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p.source, unwrapPath(err))
	}
	return b, nil
}

// describeProblems compares what a plugin says it needs with what it is granted: another ABI, a
// variable it reads that the config does not grant (it would read as unset), or, for a module that
// registers several searches, none under the plugin's name.
func describeProblems(p *pluginConfig, d *abi.Description, cat *catalog.Catalog) []string {
	var out []string
	if d.ABI != abi.Version {
		out = append(out, fmt.Sprintf("describes itself as ABI %d: host %d, plugin %d", d.ABI, abi.Version, d.ABI))
	}
	if strings.HasPrefix(p.source, "builtin:") {
		return out // one module for every builtin step: its description is theirs together
	}
	if len(d.Names) > 1 && !slices.Contains(d.Names, p.name) {
		out = append(out, fmt.Sprintf("registers the searches %s, none named %q: rename the step to one of them", strings.Join(d.Names, ", "), p.name))
	}
	var missing []string
	for _, v := range d.Env {
		if !envGranted(p, v, cat) {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		out = append(out, fmt.Sprintf("asks for env %s (its describe export), which [plugin.%s] env does not grant: it would read as unset; grant it with env = %s",
			strings.Join(missing, ", "), p.name, tomlValue(append(slices.Clone(p.env), missing...))))
	}
	return out
}

// envGranted reports whether p may read variable v for some library: granted by name, or through
// @install-root-env-vars when a library of the catalog declares it.
func envGranted(p *pluginConfig, v string, cat *catalog.Catalog) bool {
	if slices.Contains(p.env, v) {
		return true
	}
	if !slices.Contains(p.env, grantInstallRoots) || cat == nil {
		return false
	}
	for _, k := range catalog.Kinds {
		for _, n := range cat.Names(k.Kind) {
			if e, ok := cat.Lookup(k.Kind, n); ok && slices.Contains(e.InstallRootEnvVars, v) {
				return true
			}
		}
	}
	return false
}

// checkPins refuses a pinned plugin whose file does not match its pin, when the config is read, so
// the error names the pin's file:line:col before any search. Hashing a module costs milliseconds
// (tens on slow disks), so a match is remembered under the cache dir (base, "" for none) with what a
// stat of the file saw; the next process re-hashes only a changed file. Loading the module checks
// the pin again, always, on the bytes it loads: the memo only saves an early check.
func (c *config) checkPins(base string) error {
	for _, name := range c.pluginNames() {
		p := c.plugins[name]
		if p.sha256 == "" {
			continue
		}
		var memo, seen string
		if !strings.HasPrefix(p.source, "builtin:") && base != "" {
			sum := sha256.Sum256([]byte(p.source))
			memo = filepath.Join(base, "pins", hex.EncodeToString(sum[:16]))
			fi, err := os.Stat(p.source)
			seen = p.sha256 + " " + observe.StatSeen(fi, err) + "\n"
			if b, ok := cachefile.Read(memo); ok && string(b) == seen {
				continue
			}
		}
		code, err := pluginCode(p)
		if err != nil {
			return fmt.Errorf("pathfinder: %s: plugin %q: %v%s", c.where("plugin."+name+".source"), name, err, c.usedInNote(name))
		}
		if sum := sha256.Sum256(code); hex.EncodeToString(sum[:]) != p.sha256 {
			return fmt.Errorf("pathfinder: %s: plugin %q: %s has sha256 %s, not the pinned %s: refused (a changed plugin needs a new pin)%s",
				c.where("plugin."+name+".sha256"), name, p.source, hex.EncodeToString(sum[:]), p.sha256, c.usedInNote(name))
		}
		if memo != "" {
			cachefile.Write(memo, []byte(seen))
		}
	}
	return nil
}

func (c *config) pluginNames() []string {
	names := make([]string, 0, len(c.plugins))
	for n := range c.plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// usedInNote is " (named in search.order, library.cudart.order)", or "" for a plugin no order names.
func (c *config) usedInNote(name string) string {
	if u := c.usedIn(name); len(u) > 0 {
		return " (named in " + strings.Join(u, ", ") + ")"
	}
	return ""
}

// checkPluginFile refuses, when the config is read, a plugin file that is missing or not a regular
// file, and one that others than its owner may write or replace, unless the config says
// allow_writable = true: whoever can write it can run code in every process that searches. A file
// that is not pinned by its hash must be out of every other user's reach (cachefile.Untrusted: it,
// every directory above it and every symlink on the way is this user's or root's, and none is
// writable by others), as ssh wants of a key file; a pinned one is checked by its hash each time it
// is loaded instead, so a swapped file is refused there.
func (c *config) checkPluginFile(p *pluginConfig) error {
	if strings.HasPrefix(p.source, "builtin:") {
		return nil
	}
	where, used := c.where("plugin."+p.name+".source"), c.usedInNote(p.name)
	fi, err := os.Stat(p.source)
	switch {
	case err != nil:
		return fmt.Errorf("pathfinder: %s: plugin %q: %s: %v%s", where, p.name, p.source, unwrapPath(err), used)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("pathfinder: %s: plugin %q: %s is not a regular file (expected a .wasm module)%s", where, p.name, p.source, used)
	case runtime.GOOS == "windows" || p.allowWritable:
		return nil
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("pathfinder: %s: plugin %q: %s is writable by others than its owner (mode %04o): refused; run chmod go-w on it, or set allow_writable = true in [plugin.%s]%s",
			where, p.name, p.source, fi.Mode().Perm(), p.name, used)
	}
	if p.sha256 != "" {
		return nil
	}
	if why := cachefile.Untrusted(p.source); why != "" {
		return fmt.Errorf("pathfinder: %s: plugin %q: %s: %s, so another user could replace it: refused; pin it with sha256, keep it where only you or root can write, or set allow_writable = true in [plugin.%s]%s",
			where, p.name, p.source, why, p.name, used)
	}
	return nil
}

// checkGrants refuses a read grant that names the whole file system or the kernel's files
// (overBroad): the plugin would read every secret the process can, and no library is there. A
// grant through a variable or @token is judged when it is resolved, for each search.
func (c *config) checkGrants(p *pluginConfig) error {
	for _, r := range p.read {
		if strings.HasPrefix(r, "$") || strings.HasPrefix(r, "@") {
			continue
		}
		if why := overBroad(hostPaths, r); why != "" {
			return fmt.Errorf("pathfinder: %s: plugin.%s.read: %q: %s", c.where("plugin."+p.name+".read"), p.name, r, why)
		}
	}
	return nil
}

// usedIn lists the step orders that name plugin name: "search.order", "library.cudart.order".
func (c *config) usedIn(name string) []string {
	var out []string
	if slices.Contains(c.order, name) {
		out = append(out, "search.order")
	}
	libs := make([]string, 0, len(c.libraryOrder))
	for lib, o := range c.libraryOrder {
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

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
