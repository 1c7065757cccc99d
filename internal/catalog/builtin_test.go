package catalog

import (
	"os"
	"reflect"
	"testing"

	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/cachedir"
)

// builtinPack is the builtin pack as the configuration lists it.
var builtinPack = Pack{Name: "builtin:nvidia.toml", Data: builtin.NVIDIAPack()}

// TestBuiltinCatalog holds the catalog made from builtin_gen.go to the one New reads from the pack
// (gen's TestBuiltinGenIsCurrent holds the file to the pack), and keeps it out of the cache.
func TestBuiltinCatalog(t *testing.T) {
	read, err := New(builtinPack)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"", t.TempDir()} {
		c, err := Cached(dir, builtinPack)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c, read) {
			t.Errorf("Cached(%q) of the builtin pack differs from what New reads", dir)
		}
		if dir != "" {
			if _, err := os.Stat(cachedir.CatalogFile(dir, c.Hash())); !os.IsNotExist(err) {
				t.Errorf("the builtin catalog was written to the cache (%v): it is in the binary", err)
			}
		}
	}
}
