// Command gen writes internal/catalog/builtin_gen.go, the builtin pack's catalog as Go, from
// builtin/packs/nvidia.toml: a process that reads no other pack decodes no TOML. Run it as
// `go generate ./internal/catalog`; its test fails when the committed file is not what it writes.
package main

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/gosource"
)

func main() { file.Main() }

var file = gosource.File{Name: "builtin_gen.go", Package: "internal/catalog", From: "builtin/packs/nvidia.toml", Body: builtinEntries}

// builtinEntries is the catalog New reads from the builtin pack, with its hash, as Go.
func builtinEntries() ([]byte, error) {
	pack := catalog.Pack{Name: "builtin:nvidia.toml", Data: builtin.NVIDIAPack()}
	c, err := catalog.New(pack)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "import \"github.com/pathfinder-dev/pathfinder/abi\"\n\n// builtinHash is hashPacks of the builtin pack alone.\nconst builtinHash = %q\n\n", c.Hash())
	b.WriteString("// builtinEntries is the builtin pack's catalog, in pack order.\nvar builtinEntries = [...]Entry{\n")
	for _, k := range catalog.Kinds {
		for _, n := range c.Names(k.Kind) {
			e, _ := c.Lookup(k.Kind, n)
			fmt.Fprintf(&b, "{Kind: abi.Kind(%q), Pack: %q, Descriptor: abi.Descriptor{\n", e.Kind, e.Pack)
			v := reflect.ValueOf(e.Descriptor)
			for i := range v.NumField() {
				if !v.Field(i).IsZero() {
					fmt.Fprintf(&b, "%s: %#v,\n", v.Type().Field(i).Name, v.Field(i).Interface())
				}
			}
			b.WriteString("}},\n")
		}
	}
	return []byte(b.String() + "}\n"), nil
}
