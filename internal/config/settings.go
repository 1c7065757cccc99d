package config

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/inspect"
	"github.com/pathfinder-dev/pathfinder/internal/tomlx"
)

// setting is a key's last value and where it was set: the layer's name and contents, so that the
// position is found only when someone asks (finding it for every key was most of a config's load).
type setting struct {
	value any
	file  string
	data  []byte
	key   []string
}

// position is where the setting was made; line and col are 0 when they cannot be told.
func (s *setting) position() (file string, line, col int) {
	line, col = tomlx.Position(s.data, s.key)
	return s.file, line, col
}

// origin is file:line:col, or the file alone when the position cannot be told.
func (s *setting) origin() string {
	if file, line, col := s.position(); line > 0 {
		return fmt.Sprintf("%s:%d:%d", file, line, col)
	}
	return s.file
}

// noteOrigins records, for every key the layer name sets, its value and position: the last layer to
// set a key is where its effective value comes from. It walks the file by reflection, so a key added
// to it is listed without more code.
func (c *Config) noteOrigins(name string, data []byte, f *file) {
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

func (c *Config) noteOrigin(name string, data []byte, key []string, value any) {
	c.origins[strings.Join(key, ".")] = &setting{value: value, file: name, data: data, key: slices.Clone(key)}
}

// noteValue replaces the recorded value of key by what it was resolved to (an absolute path).
func (c *Config) noteValue(key string, value any) {
	if s := c.origins[key]; s != nil {
		s.value = value
	}
}

// OriginOf is where key was last set ("file:line:col"), or "".
func (c *Config) OriginOf(key string) string {
	if s := c.origins[key]; s != nil {
		return s.origin()
	}
	return ""
}

// Settings lists the effective configuration, key by key, with where each value came from. Keys no
// layer set are listed with their default and the origin "default".
func (c *Config) Settings() []inspect.Setting {
	var out []inspect.Setting
	for key, s := range c.origins {
		out = append(out, inspect.Setting{Key: key, Value: s.value, Origin: s.origin()})
	}
	for _, p := range c.Plugins {
		defaults := map[string]any{
			"memory":         FormatBytes(p.Memory),
			"timeout":        FormatDuration(p.Timeout),
			"allow_writable": p.AllowWritable,
		}
		for k, v := range defaults {
			if _, ok := c.origins["plugin."+p.Name+"."+k]; !ok {
				out = append(out, inspect.Setting{Key: "plugin." + p.Name + "." + k, Value: v, Origin: "default"})
			}
		}
	}
	if _, ok := c.origins["packs.dirs"]; !ok {
		out = append(out, inspect.Setting{Key: "packs.dirs", Value: []string{}, Origin: "default"})
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
		keys := []string{"source", "sha256", "allow_writable", "env", "read", "capabilities", "memory", "timeout", "found_via", "options"}
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
