package wasmbuild

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

const cFile = ignore + "\n#include \"sdk.h\"\n"

func plugin(name, fields string) string {
	return "package " + name + "\n\nimport \"github.com/pathfinder-dev/pathfinder/abi\"\n\nvar Plugin = abi.Plugin{" + fields + "}\n"
}

func TestSteps(t *testing.T) {
	root := filetree.New(t, map[string]string{
		"builtin/builtin.go":        "package builtin\n",
		"plugins/zeta/zeta.go":      plugin("zeta", `Name: "zeta", Version: "1.2", Env: []string{"ZETA_HOME", "Z"}, Search: Search`),
		"plugins/zeta/zeta_test.go": plugin("zeta", `Name: "not this one"`),
		"plugins/zeta/zeta.c":       cFile,
		"plugins/alpha/doc.go":      "package alpha\n",
		"plugins/alpha/alpha.go":    plugin("alpha", `Name: "alpha", Version: "1", Env: nil, Search: Search`),
		"plugins/alpha/alpha.c":     cFile,
		"plugins/alpha/glob.c":      cFile,
		"plugins/goonly/goonly.go":  plugin("goonly", `Name: "goonly"`), // no C: not in the module
	})
	got, err := Steps(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Step{{Name: "alpha", Version: "1"}, {Name: "zeta", Version: "1.2", Env: []string{"ZETA_HOME", "Z"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Steps = %+v, want %+v", got, want)
	}
	goSrc, cSrc, err := Tables(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`var steps = [...]string{"alpha", "zeta"}`} {
		if !strings.Contains(string(goSrc), w) {
			t.Errorf("Go table lacks %q:\n%s", w, goSrc)
		}
	}
	for _, w := range []string{ignore + "\n", "void search_alpha(const request *, response *);",
		`&(const plugin){"alpha", "1", NULL, search_alpha},`,
		`&(const plugin){"zeta", "1.2", (const char *const[]){"ZETA_HOME", "Z", NULL}, search_zeta},`} {
		if !strings.Contains(string(cSrc), w) {
			t.Errorf("C table lacks %q:\n%s", w, cSrc)
		}
	}
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(CTable)), cSrc, 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := sources(root, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{CTable, "plugins/alpha/alpha.c", "plugins/alpha/glob.c", "plugins/zeta/zeta.c"}; !reflect.DeepEqual(files, want) {
		t.Errorf("sources = %q, want %q", files, want)
	}
}

func TestSteps_errors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"folder and name differ", map[string]string{"plugins/a/a.go": plugin("a", `Name: "b"`), "plugins/a/a.c": cFile},
			`plugins/a: the step's folder is "a" but its abi.Plugin is named "b"`},
		{"no Go reference", map[string]string{"plugins/a/a.c": cFile, "plugins/a/a.go": "package a\n"},
			"holds C but no Go file there declares `var Plugin = abi.Plugin{...}`"},
		{"env from a variable", map[string]string{"plugins/a/a.go": plugin("a", `Name: "a", Env: vars`), "plugins/a/a.c": cFile},
			"Env: a []string{...} of string literals"},
		{"name from a constant", map[string]string{"plugins/a/a.go": plugin("a", `Name: name`), "plugins/a/a.c": cFile},
			"Name: not a string literal"},
		{"not a C identifier", map[string]string{"plugins/a-b/a.go": plugin("a", `Name: "a-b"`), "plugins/a-b/a.c": cFile},
			`step name "a-b": lower-case letters, digits and _ only`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Steps(filetree.New(t, tt.files))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestManifest_needsConstraint: a C file beside Go without //go:build ignore would break go build
// (the go tool refuses C files in a package without cgo), so the build refuses it first.
func TestManifest_needsConstraint(t *testing.T) {
	root := filetree.New(t, map[string]string{"plugins/a/a.c": "#include \"sdk.h\"\n", CTable: cFile, SDK + "/sdk.c": "// no Go here\n"})
	if _, err := Manifest(root); err == nil || !strings.Contains(err.Error(), `plugins/a/a.c: the first line must be "//go:build ignore"`) {
		t.Fatalf("err = %v", err)
	}
	os.WriteFile(filepath.Join(root, "plugins/a/a.c"), []byte(cFile), 0o644)
	m, err := Manifest(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{SDK + "/sdk.c", CTable, "plugins/a/a.c"} {
		if !strings.Contains(m, "  "+f+"\n") {
			t.Errorf("manifest lacks %s:\n%s", f, m)
		}
	}
}
