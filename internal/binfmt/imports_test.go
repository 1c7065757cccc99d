package binfmt

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports_onlyBinfmtReads: of the module's non-test Go files, only this package's import
// debug/elf or debug/pe, so ELF and PE are read, and checked, in one place. The test fixtures under
// internal/testutil write images (fakepe) and are no reader; that they are test code is held here
// too: no non-test file imports them but the benchmark program (bench/), which builds the same
// real shared objects the tests do and which nothing imports.
func TestImports_onlyBinfmtReads(t *testing.T) {
	const module = "github.com/pathfinder-dev/pathfinder/"
	root := filepath.Join("..", "..")
	readers := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || fileExists(filepath.Join(p, "go.mod"))) {
				return filepath.SkipDir // data, or another module (deploy/kubernetes)
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case path == "debug/elf" || path == "debug/pe":
				switch {
				case strings.HasPrefix(rel, "internal/binfmt/"):
					readers++
				case !strings.HasPrefix(rel, "internal/testutil/"):
					t.Errorf("%s imports %s: ELF and PE are read by internal/binfmt alone", rel, path)
				}
			case strings.HasPrefix(path, module+"internal/testutil/") && !strings.HasPrefix(rel, "internal/testutil/") && !strings.HasPrefix(rel, "bench/"):
				t.Errorf("%s imports %s, a test fixture, outside a test", rel, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if readers == 0 {
		t.Fatal("no file of internal/binfmt imports debug/elf or debug/pe: the walk missed the module")
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
