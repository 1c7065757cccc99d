package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/pathfinder-dev/pathfinder/abi"
	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/cachedir"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/sandboxfs"
	"github.com/pathfinder-dev/pathfinder/internal/trust"
)

// Plugin is a configured plugin step.
type Plugin struct {
	Name    string
	Source  Source
	SHA256  string   // the pinned hash of its module, lower case; "" when not pinned
	Env     []string // the variables it may read; InstallRootVars stands for the library's
	Read    []Grant  // the directories it may read
	Caps    []string // the host functions it may call: abi.CapabilitySystemResolve
	Memory  uint64
	Timeout time.Duration
	Options map[string]string
	// FoundVia labels what it finds, whatever directory it lies in; "" gives each directory its
	// grant's label (FoundViaFor).
	FoundVia string
	// DefinedIn is the layer that set its source.
	DefinedIn string
	// AllowWritable accepts a plugin file that others than its owner may write.
	AllowWritable bool
}

// Source is where a plugin's module comes from: one of the builtin steps, or a file.
type Source struct {
	Builtin string // the builtin step's name, for "builtin:NAME"
	File    string // the .wasm file's absolute path, otherwise
}

// String is the source as the config writes it ("builtin:wheels"), with a file's path absolute.
func (s Source) String() string {
	if s.Builtin != "" {
		return "builtin:" + s.Builtin
	}
	return s.File
}

// parseSource reads a source written in the layer name: "builtin:NAME" names a builtin step, and
// anything else is a file, relative to the layer's directory.
func parseSource(name, s string) (Source, error) {
	if step, ok := strings.CutPrefix(s, "builtin:"); ok {
		if !builtin.IsStep(step) {
			return Source{}, fmt.Errorf("no builtin step %q", step)
		}
		return Source{Builtin: step}, nil
	}
	file, err := resolvePath(name, s)
	if err != nil {
		return Source{}, fmt.Errorf("source: %v", err)
	}
	return Source{File: file}, nil
}

// Code reads the plugin's module: the builtin steps module, or the source file, which must be a
// regular file (a FIFO would block the read) no larger than a module may be.
func (p *Plugin) Code() ([]byte, error) {
	if p.Source.Builtin != "" {
		return builtin.StepsModule(), nil
	}
	f, fi, err := sandboxfs.Open(p.Source.File)
	if err == nil && fi.IsDir() {
		f.Close()
		err = errors.New("a directory")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p.Source.File, observe.Cause(err))
	}
	defer f.Close()
	if fi.Size() > abi.MaxModuleBytes {
		return nil, fmt.Errorf("%s: %d bytes, over the %d-byte limit on a module", p.Source.File, fi.Size(), abi.MaxModuleBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, abi.MaxModuleBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p.Source.File, observe.Cause(err))
	}
	return b, nil
}

// DescribeProblems compares what a plugin says it needs with what it is granted: another ABI, a
// variable it reads that the config does not grant (it would read as unset), or, for a module that
// registers several searches, none under the plugin's name.
func (p *Plugin) DescribeProblems(d *abi.Description, cat *catalog.Catalog) []error {
	var out []error
	if d.ABI != abi.Version {
		out = append(out, fmt.Errorf("describes itself as ABI %d: %s", d.ABI, abi.VersionAdvice(d.ABI)))
	}
	if p.Source.Builtin != "" {
		return out // one module for every builtin step: its description is theirs together
	}
	if len(d.Names) > 1 && !slices.Contains(d.Names, p.Name) {
		out = append(out, fmt.Errorf("registers the searches %s, none named %q: rename the step to one of them", strings.Join(d.Names, ", "), p.Name))
	}
	var missing []string
	for _, v := range d.Env {
		if !p.envGranted(v, cat) {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		out = append(out, fmt.Errorf("asks for env %s (its describe export), which [plugin.%s] env does not grant: it would read as unset; grant it with env = %s",
			strings.Join(missing, ", "), p.Name, inspect.TOMLValue(append(slices.Clone(p.Env), missing...))))
	}
	return out
}

// Info is what the config says of plugin p, for listings; what the module says of itself is the
// caller's to add.
func (c *Config) Info(p *Plugin) inspect.PluginInfo {
	read := make([]string, len(p.Read))
	for i, g := range p.Read {
		read[i] = g.String()
	}
	return inspect.PluginInfo{
		Name:          p.Name,
		Source:        p.Source.String(),
		Pinned:        p.SHA256 != "",
		Env:           nonNil(p.Env),
		Read:          read,
		Capabilities:  nonNil(p.Caps),
		Memory:        FormatBytes(p.Memory),
		Timeout:       FormatDuration(p.Timeout),
		AllowWritable: p.AllowWritable,
		FoundVia:      p.FoundVia,
		Options:       p.Options,
		DefinedIn:     c.OriginOf("plugin." + p.Name + ".source"),
		UsedIn:        nonNil(c.UsedIn(p.Name)),
	}
}

// CheckPin hashes code, the plugin's module, and refuses it when the plugin is pinned to another
// hash: the one pin check, when the config is read, when a module is loaded and when it is listed.
func (p *Plugin) CheckPin(code []byte) (sha string, err error) {
	sum := sha256.Sum256(code)
	sha = hex.EncodeToString(sum[:])
	if p.SHA256 != "" && sha != p.SHA256 {
		return sha, fmt.Errorf("%s has sha256 %s, not the pinned %s: refused (a changed plugin needs a new pin)", p.Source, sha, p.SHA256)
	}
	return sha, nil
}

// CheckPins refuses a pinned plugin whose file does not match its pin, when the config is read, so
// the error names the pin's file:line:col before any search. Hashing a module costs milliseconds
// (tens on slow disks), so a match is remembered under the cache dir (base, "" for none): the next
// process re-hashes only a changed file (cachedir.PinMemo). Loading the module checks the pin again,
// always, on the bytes it loads.
func (c *Config) CheckPins(base string) error {
	for _, name := range c.PluginNames() {
		p := c.Plugins[name]
		if p.SHA256 == "" {
			continue
		}
		memo := cachedir.Pin(base, p.Source.File, p.SHA256)
		if memo.Holds() {
			continue
		}
		code, err := p.Code()
		if err != nil {
			return c.pluginErrorAt(p, "source", "read", err)
		}
		if _, err := p.CheckPin(code); err != nil {
			return c.pluginErrorAt(p, "sha256", "pin", err)
		}
		memo.Remember()
	}
	return nil
}

// checkPluginFile refuses, when the config is read, a plugin file that is missing or not a regular
// file, and one that others than its owner may write or replace, unless the config says
// allow_writable = true: whoever can write it can run code in every process that searches. A file
// that is not pinned by its hash must be out of every other user's reach (trust.OthersCanChange: it,
// every directory above it and every symlink on the way is this user's or root's, and none is
// writable by others), as ssh wants of a key file; a pinned one is checked by its hash each time it
// is loaded instead, so a swapped file is refused there.
func (c *Config) checkPluginFile(p *Plugin) error {
	file := p.Source.File
	if file == "" {
		return nil
	}
	fi, err := os.Stat(file)
	switch {
	case err != nil:
		return c.pluginErrorAt(p, "source", "read", fmt.Errorf("%s: %v", file, observe.Cause(err)))
	case !fi.Mode().IsRegular():
		return c.pluginErrorAt(p, "source", "read", fmt.Errorf("%s is not a regular file (expected a .wasm module)", file))
	case runtime.GOOS == "windows" || p.AllowWritable:
		return nil
	case fi.Mode().Perm()&0o022 != 0:
		return c.pluginErrorAt(p, "source", "read", fmt.Errorf("%s is writable by others than its owner (mode %04o): refused; run chmod go-w on it, or set allow_writable = true in [plugin.%s]",
			file, fi.Mode().Perm(), p.Name))
	}
	if p.SHA256 != "" {
		return nil
	}
	if err := trust.OthersCanChange(file); err != nil {
		return c.pluginErrorAt(p, "source", "read", fmt.Errorf("%s: %v, so another user could replace it: refused; pin it with sha256, keep it where only you or root can write, or set allow_writable = true in [plugin.%s]",
			file, err, p.Name))
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
