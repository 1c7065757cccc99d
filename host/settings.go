package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/pathfinder-dev/pathfinder/host/internal/tomlx"
)

// Setting is one key of the effective configuration and where its value came from.
type Setting struct {
	Key    string `json:"key"`    // "search.order", "plugin.wheels.read", "library.cuda.order"
	Value  any    `json:"value"`  // a string, bool, []string or map[string]string, as the file wrote it (paths resolved)
	TOML   string `json:"-"`      // Value as TOML
	Origin string `json:"origin"` // "builtin:pathfinder.toml:17:1", "/etc/pathfinder/pathfinder.toml:3:1", or "default"
}

// setting is a key's last value and where it was set: the layer's name and contents, so that the
// position is found only when someone asks (finding it for every key was most of a config's load).
type setting struct {
	value any
	file  string
	data  []byte
	key   []string
}

// origin is file:line:col, or the file alone when the position cannot be told.
func (s *setting) origin() string {
	if line, col := tomlx.Position(s.data, s.key); line > 0 {
		return fmt.Sprintf("%s:%d:%d", s.file, line, col)
	}
	return s.file
}

// noteOrigins records, for every key the layer name sets, its value and position: the last layer to
// set a key is where its effective value comes from. It walks configFile by reflection, so a key
// added to configFile is listed without more code.
func (c *config) noteOrigins(name string, data []byte, f *configFile) {
	if c.origins == nil {
		c.origins = map[string]*setting{}
	}
	var walk func(key []string, v reflect.Value)
	walk = func(key []string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				c.noteOrigin(name, data, key, v.Elem().Interface())
			}
		case reflect.Struct:
			t := v.Type()
			for i := 0; i < t.NumField(); i++ {
				tag, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
				if tag != "" && tag != "-" {
					walk(append(key[:len(key):len(key)], tag), v.Field(i))
				}
			}
		case reflect.Map:
			if v.IsNil() {
				return
			}
			if v.Type().Elem().Kind() != reflect.Struct { // a table of values set as a whole: options
				c.noteOrigin(name, data, key, v.Interface())
				return
			}
			iter := v.MapRange()
			for iter.Next() {
				walk(append(key[:len(key):len(key)], iter.Key().String()), iter.Value())
			}
		}
	}
	walk(nil, reflect.ValueOf(f).Elem())
}

func (c *config) noteOrigin(name string, data []byte, key []string, value any) {
	c.origins[strings.Join(key, ".")] = &setting{value: value, file: name, data: data, key: slices.Clone(key)}
}

// noteValue replaces the recorded value of key by what it was resolved to (an absolute path).
func (c *config) noteValue(key string, value any) {
	if s := c.origins[key]; s != nil {
		s.value = value
	}
}

// originOf is where key was last set ("file:line:col"), or "".
func (c *config) originOf(key string) string {
	if s := c.origins[key]; s != nil {
		return s.origin()
	}
	return ""
}

// where names the config position of key for messages: "config FILE:LINE:COL", or "config".
func (c *config) where(key string) string {
	if at := c.originOf(key); at != "" {
		return "config " + at
	}
	return "config"
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

// Settings lists the effective configuration, key by key, with where each value came from. Keys no
// layer set are listed with their default and the origin "default".
func (f *Finder) Settings() []Setting {
	c := f.cfg
	var out []Setting
	for key, s := range c.origins {
		out = append(out, Setting{Key: key, Value: s.value, Origin: s.origin()})
	}
	for _, p := range c.plugins {
		defaults := map[string]any{
			"memory":         formatBytes(p.memory),
			"timeout":        formatDuration(p.timeout),
			"allow_writable": p.allowWritable,
		}
		for k, v := range defaults {
			if _, ok := c.origins["plugin."+p.name+"."+k]; !ok {
				out = append(out, Setting{Key: "plugin." + p.name + "." + k, Value: v, Origin: "default"})
			}
		}
	}
	if _, ok := c.origins["packs.dirs"]; !ok {
		out = append(out, Setting{Key: "packs.dirs", Value: []string{}, Origin: "default"})
	}
	for i := range out {
		out[i].TOML = tomlValue(out[i].Value)
	}
	sort.Slice(out, func(i, j int) bool { return settingLess(out[i].Key, out[j].Key) })
	return out
}

// settingLess orders keys as pathfinder.toml does: search, packs, library, plugin, cache, system, then the
// rest; within a plugin, source first.
func settingLess(a, b string) bool {
	rank := func(k string) (int, string, int, string) {
		sections := []string{"search", "packs", "library", "plugin", "cache", "system"}
		top, rest, _ := strings.Cut(k, ".")
		r := len(sections)
		for i, s := range sections {
			if s == top {
				r = i
			}
		}
		table, leaf := rest, ""
		if i := strings.LastIndex(rest, "."); i >= 0 {
			table, leaf = rest[:i], rest[i+1:]
		}
		keys := []string{"source", "sha256", "allow_writable", "env", "read", "capabilities", "memory", "timeout", "options"}
		lr := len(keys)
		for i, s := range keys {
			if s == leaf {
				lr = i
			}
		}
		if top != "plugin" && top != "library" {
			table, leaf, lr = "", rest, 0
		}
		return r, table, lr, leaf
	}
	ra, ta, la, leafA := rank(a)
	rb, tb, lb, leafB := rank(b)
	switch {
	case ra != rb:
		return ra < rb
	case ta != tb:
		return ta < tb
	case la != lb:
		return la < lb
	}
	return leafA < leafB
}

// FormatSettings writes settings as a TOML document, each value followed by its origin in a comment
// (aligned within a table).
func FormatSettings(settings []Setting) string {
	var b strings.Builder
	for i := 0; i < len(settings); {
		table := settingTable(settings[i].Key)
		j := i
		width := 0
		for ; j < len(settings) && settingTable(settings[j].Key) == table; j++ {
			width = max(width, len(settingLine(settings[j])))
		}
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[%s]\n", tomlTable(table))
		for _, s := range settings[i:j] {
			line := settingLine(s)
			fmt.Fprintf(&b, "%s%s  # %s\n", line, strings.Repeat(" ", min(width, 48)-min(len(line), 48)), s.Origin)
		}
		i = j
	}
	return b.String()
}

func settingTable(key string) string { return key[:max(strings.LastIndex(key, "."), 0)] }

func settingLine(s Setting) string {
	return tomlKey(s.Key[strings.LastIndex(s.Key, ".")+1:]) + " = " + s.TOML
}

func tomlTable(t string) string {
	parts := strings.Split(t, ".")
	for i, p := range parts {
		parts[i] = tomlKey(p)
	}
	return strings.Join(parts, ".")
}

// tomlKey writes a key bare when TOML allows it, quoted otherwise.
func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return tomlString(k)
		}
	}
	return k
}

// tomlValue writes v as a TOML value on one line.
func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return tomlString(v)
	case bool:
		return strconv.FormatBool(v)
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = tomlString(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case map[string]string:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var kv []string
		for _, k := range keys {
			kv = append(kv, tomlKey(k)+" = "+tomlString(v[k]))
		}
		if len(kv) == 0 {
			return "{}"
		}
		return "{ " + strings.Join(kv, ", ") + " }"
	}
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(map[string]any{"v": v}); err == nil {
		return strings.TrimSpace(strings.TrimPrefix(b.String(), "v = "))
	}
	return tomlString(fmt.Sprint(v))
}

// tomlString is a TOML basic string: Go's quoting, but with \u escapes, which TOML has, for the \x
// ones it lacks.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			b.WriteString(`\uFFFD`)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// formatBytes writes n as parseBytes reads it, in the largest whole unit.
func formatBytes(n uint64) string {
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return fmt.Sprintf("%d%s", n/u.mult, u.suffix)
		}
	}
	return strconv.FormatUint(n, 10)
}

// formatDuration writes d as time.ParseDuration reads it, without Go's zero units ("2m", not "2m0s").
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// CheckConfigFile validates one config file as the only layer over the built-in defaults, with the
// descriptor packs this machine has: its syntax and keys, its steps, libraries and pack dirs, and
// every plugin it defines a source for, loaded and asked what it is (a missing or writable file, a
// sha256 that does not match its pin, another ABI, env it asks for that it is not granted). opts
// supplies the environment and the system directory, as for New; its ConfigFile is ignored.
func CheckConfigFile(ctx context.Context, file string, opts Options) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return fmt.Errorf("pathfinder: config %s: %w", file, err)
	}
	opts.ConfigFile, opts.onlyConfigFile = abs, true
	f, err := New(opts)
	if err != nil {
		return err
	}
	defer f.Close()
	var problems []string
	for _, p := range f.Plugins(ctx) {
		if !strings.HasPrefix(p.DefinedIn, abs+":") && p.DefinedIn != abs {
			continue // a builtin step this file does not redefine
		}
		for _, pr := range p.Problems {
			problems = append(problems, fmt.Sprintf("pathfinder: config %s: plugin %q: %s", p.DefinedIn, p.Name, strings.TrimPrefix(pr, "pathfinder: ")))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}
