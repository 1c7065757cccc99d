// Command gen writes internal/config/builtin_gen.go, builtin/pathfinder.toml decoded, as Go: a
// process that reads no other layer decodes no TOML. Run it as `go generate ./internal/config`; its
// test fails when the committed file is not what it writes.
package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/config"
	"github.com/pathfinder-dev/pathfinder/internal/gosource"
)

var file = gosource.File{Name: "builtin_gen.go", Package: "internal/config", From: "builtin/pathfinder.toml", Body: builtinFile}

func main() { file.Main() }

// builtinFile is the function builtinFile: builtin/pathfinder.toml decoded (a *file), as a literal.
func builtinFile() ([]byte, error) {
	f, err := config.DecodeBuiltin()
	if err != nil {
		return nil, err
	}
	return []byte("// builtinFile is builtin/pathfinder.toml decoded.\nfunc builtinFile() *file {\n\treturn &" +
		goLiteral(reflect.ValueOf(f).Elem()) + "\n}\n\nfunc ptr[T any](v T) *T { return &v }\n"), nil
}

// goLiteral writes v as a Go expression of package config: its set fields only, map keys sorted.
func goLiteral(v reflect.Value) string {
	typ := strings.ReplaceAll(v.Type().String(), "config.", "")
	switch v.Kind() {
	case reflect.Pointer:
		return "ptr(" + goLiteral(v.Elem()) + ")"
	case reflect.Struct:
		var fields []string
		for i := range v.NumField() {
			if !v.Field(i).IsZero() {
				fields = append(fields, v.Type().Field(i).Name+": "+goLiteral(v.Field(i)))
			}
		}
		return typ + "{\n" + strings.Join(fields, ",\n") + ",\n}"
	case reflect.Map:
		var keys []string
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		var elems []string
		for _, k := range keys {
			elems = append(elems, fmt.Sprintf("%q: %s", k, goLiteral(v.MapIndex(reflect.ValueOf(k)))))
		}
		return typ + "{\n" + strings.Join(elems, ",\n") + ",\n}"
	}
	return fmt.Sprintf("%#v", v.Interface()) // strings, bools and []string
}
