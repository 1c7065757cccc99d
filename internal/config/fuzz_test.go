package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
)

// FuzzConfig feeds the config decoder any bytes as the last layer: it must return an *Error (with
// no program prefix: the command adds it) or a config whose every order names known steps, and
// never panic.
func FuzzConfig(f *testing.F) {
	f.Add(builtin.DefaultConfig())
	f.Add([]byte("[search]\norder = [\"wheels\", \"system\"]\n[library.cudart]\norder = [\"conda\"]\n"))
	f.Add([]byte("[plugin.site]\nsource = \"/nonexistent/site.wasm\"\nsha256 = \"00\"\nallow_writable = true\n[plugin.site.options]\nroot = \"/opt\"\n"))
	f.Add([]byte("[packs]\ndirs = [\"packs\", \"\"]\n[cache]\nenabled = false\n"))
	f.Add([]byte("[plugin.wheels]\nmemory = \"1GiB\"\ntimeout = \"1ms\"\ncapabilities = [\"system_resolve\", \"x\"]\n"))
	f.Add([]byte("plugin.a.source = 'builtin:wheels'\nsearch = { order = ['a'] }\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Defaults()
		if err := c.Apply("builtin:pathfinder.toml", builtin.DefaultConfig()); err != nil {
			t.Fatal(err)
		}
		err := c.Apply("/fuzz/pathfinder.toml", data)
		if err == nil {
			err = c.Check()
		}
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || strings.HasPrefix(err.Error(), "pathfinder: ") {
				t.Fatalf("not a config error, or with the program's prefix: %v", err)
			}
			return
		}
		for _, o := range append([][]string{c.Order}, mapValues(c.LibraryOrder)...) {
			for _, step := range o {
				if step != StepAlreadyLoaded && step != StepSystem && c.Plugins[step] == nil {
					t.Fatalf("order names unknown step %q", step)
				}
			}
		}
		for _, p := range c.Plugins {
			if p.Source == (Source{}) || p.Memory == 0 || p.Timeout <= 0 {
				t.Fatalf("plugin %+v", p)
			}
		}
		inspect.FormatSettings(c.Settings())
	})
}

func mapValues(m map[string][]string) [][]string {
	var out [][]string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
