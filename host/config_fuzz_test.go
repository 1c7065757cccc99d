package host

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/builtin"
)

// FuzzConfig feeds the config decoder any bytes as the last layer: it must return a "pathfinder:"
// error or a config whose every order names known steps, and never panic.
func FuzzConfig(f *testing.F) {
	f.Add(builtin.DefaultConfig())
	f.Add([]byte("[search]\norder = [\"wheels\", \"system\"]\n[library.cudart]\norder = [\"conda\"]\n"))
	f.Add([]byte("[plugin.site]\nsource = \"/nonexistent/site.wasm\"\nsha256 = \"00\"\nallow_writable = true\n[plugin.site.options]\nroot = \"/opt\"\n"))
	f.Add([]byte("[packs]\ndirs = [\"packs\", \"\"]\n[cache]\nenabled = false\n"))
	f.Add([]byte("[plugin.wheels]\nmemory = \"1GiB\"\ntimeout = \"1ms\"\ncapabilities = [\"system_resolve\", \"x\"]\n"))
	f.Add([]byte("plugin.a.source = 'builtin:wheels'\nsearch = { order = ['a'] }\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &config{libraryOrder: map[string][]string{}, plugins: map[string]*pluginConfig{}, hash: sha256.New()}
		if err := c.apply("builtin:pathfinder.toml", builtin.DefaultConfig()); err != nil {
			t.Fatal(err)
		}
		err := c.apply("/fuzz/pathfinder.toml", data)
		if err == nil {
			err = c.check()
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "pathfinder: ") {
				t.Fatalf("error without the prefix: %v", err)
			}
			return
		}
		for _, o := range append([][]string{c.order}, mapValues(c.libraryOrder)...) {
			for _, step := range o {
				if step != StepAlreadyLoaded && step != StepSystem && c.plugins[step] == nil {
					t.Fatalf("order names unknown step %q", step)
				}
			}
		}
		for _, p := range c.plugins {
			if p.source == "" || p.memory == 0 || p.timeout <= 0 {
				t.Fatalf("plugin %+v", p)
			}
		}
		FormatSettings((&Finder{cfg: c}).Settings())
	})
}

func mapValues(m map[string][]string) [][]string {
	var out [][]string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
