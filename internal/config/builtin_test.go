package config

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/pathfinder-dev/pathfinder/builtin"
)

// TestBuiltinFile holds builtinFile (builtin_gen.go) to what builtin/pathfinder.toml decodes to, and
// the layer applied from it to the one applied from the file (gen's TestBuiltinGenIsCurrent holds the
// file's source to the TOML).
func TestBuiltinFile(t *testing.T) {
	f, err := DecodeBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(builtinFile(), f) {
		t.Errorf("builtinFile() = %+v, want %+v", builtinFile(), f)
	}
	decoded, generated := Defaults(), Defaults()
	if err := decoded.Apply("builtin:pathfinder.toml", builtin.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	if err := generated.apply("builtin:pathfinder.toml", builtin.DefaultConfig(), builtinFile()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decoded.Settings(), generated.Settings()) || !bytes.Equal(decoded.Hash(), generated.Hash()) {
		t.Error("the built-in layer applied from builtinFile differs from the one decoded from the file")
	}
}
