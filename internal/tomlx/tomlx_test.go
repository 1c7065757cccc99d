package tomlx

import (
	"errors"
	"strings"
	"testing"
)

func TestDecode_Errors(t *testing.T) {
	type target struct {
		Search struct {
			Order   *[]string `toml:"order"`
			Enabled *bool     `toml:"enabled"`
		} `toml:"search"`
		Plugin map[string]struct {
			Read    *[]string         `toml:"read"`
			Options map[string]string `toml:"options"`
		} `toml:"plugin"`
	}
	tests := []struct {
		name, data, want, key string
	}{
		{"a string for an array", "[search]\norder = \"wheels\"\n", `p.toml:2:1: search.order: expected an array, found a string`, "search.order"},
		{"an array of numbers", "[search]\n\n  order = [1, 2]\n", `p.toml:3:3: search.order: expected a string, found an integer`, "search.order"},
		{"a number for a boolean", "[search]\nenabled = 3\n", `p.toml:2:1: search.enabled: expected true or false, found an integer`, "search.enabled"},
		{"a quoted table name", "[plugin.\"a.b\"]\nread = \"/opt\"\n", `p.toml:2:1: plugin."a.b".read: expected an array, found a string`, `plugin."a.b".read`},
		{"a table for a string", "[plugin.x.options]\nroot = { a = 1 }\n", `p.toml:2:1: plugin.x.options.root: expected a string, found a table`, "plugin.x.options.root"},
		{"syntax at the end of line 1", "[search\norder = []\n", "p.toml:1:8: expected '.' or ']' to end table name", ""},
		{"syntax at the end of line 2", "[search]\norder = \n", "p.toml:2:9: expected value but found '\\n' instead", ""},
		{"syntax inside a line", "[search]\norder = [] x\n", "p.toml:2:11: expected a top-level item to end with a newline", ""},
		{"unknown key", "[search]\nordr = []\n", `p.toml:2:1: unknown key "search.ordr" (did you mean "search.order"?)`, "search.ordr"},
		{"unknown table", "[serch]\norder = []\n", `p.toml:1:1: unknown key "serch" (did you mean "search"?)`, "serch"},
		{"unknown key, nothing near", "[search]\ncolour = 1\n", `p.toml:2:1: unknown key "search.colour"`, "search.colour"},
		{"unknown key in a map's table", "[plugin.x]\nred = []\n", `p.toml:2:1: unknown key "plugin.x.red" (did you mean "plugin.x.read"?)`, "plugin.x.red"},
		{"a key set twice", "[search]\norder = []\n  order = [\"conda\"]\n", `p.toml:3:3: key "search.order" is set twice (first on line 2)`, "search.order"},
		{"a table set twice", "[search]\norder = []\n[search]\n", `p.toml:3:1: key "search" is set twice (first on line 1)`, "search"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v target
			err := Decode("p.toml", []byte(tt.data), &v)
			var te *Error
			if !errors.As(err, &te) || !strings.HasPrefix(err.Error(), tt.want) || te.Key != tt.key {
				t.Fatalf("Decode: %v (%#v); want %q for key %q", err, te, tt.want, tt.key)
			}
			if strings.Contains(tt.name, "nothing near") && strings.Contains(err.Error(), "did you mean") {
				t.Fatalf("Decode: %v; want no suggestion", err)
			}
			if tt.want[len(tt.want)-1] == ')' && !strings.HasSuffix(err.Error(), tt.want) {
				t.Fatalf("Decode: %v; want it to end %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "toml: ") || strings.Contains(err.Error(), "destination") || strings.Contains(err.Error(), "already been defined") {
				t.Fatalf("toml's own words: %v", err)
			}
		})
	}
}
