package host_test

import (
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/host"
)

// TestAPI_ownTypes: host is the API and only that. Nothing it exports is, or shows, a type of an
// internal package: every exported name, field, parameter and result is its own, the standard
// library's or another public package's of this module, and those are held to the same rule
// (host/search's answers, host/driver's Report, abi's Descriptor, builtin/tables' rows).
func TestAPI_ownTypes(t *testing.T) {
	const module = "github.com/pathfinder-dev/pathfinder/"
	public := []string{"host", "host/search", "host/driver", "abi", "builtin", "builtin/tables"}
	// The compiler's export data, as go list builds it: type-checking from source would take the
	// whole of wazero with it.
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}"}
	for _, p := range public {
		args = append(args, module+p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	export := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, file, _ := strings.Cut(line, "=")
		export[path] = file
	}
	lookup := func(path string) (io.ReadCloser, error) { return os.Open(export[path]) }
	imp := importer.ForCompiler(token.NewFileSet(), "gc", lookup)
	ours := func(p *types.Package) bool { return p != nil && strings.HasPrefix(p.Path(), module) }
	seen := map[types.Type]bool{}
	var check func(where string, typ types.Type)
	check = func(where string, typ types.Type) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		switch typ := typ.(type) {
		case *types.Alias:
			if ours(typ.Obj().Pkg()) { // not any, the universe's
				t.Errorf("%s is an alias of %s", where, types.Unalias(typ))
			}
			check(where, types.Unalias(typ))
		case *types.Named:
			if p := typ.Obj().Pkg(); ours(p) && strings.Contains(p.Path()+"/", "/internal/") {
				t.Errorf("%s shows %s, a type of an internal package", where, typ)
				return
			}
			if ours(typ.Obj().Pkg()) {
				check(where, typ.Underlying())
				for i := range typ.NumMethods() {
					if m := typ.Method(i); m.Exported() {
						check(where+"."+m.Name(), m.Type())
					}
				}
			}
		case *types.Pointer:
			check(where, typ.Elem())
		case *types.Slice:
			check(where, typ.Elem())
		case *types.Array:
			check(where, typ.Elem())
		case *types.Map:
			check(where, typ.Key())
			check(where, typ.Elem())
		case *types.Struct:
			for i := range typ.NumFields() {
				if f := typ.Field(i); f.Exported() {
					check(where+"."+f.Name(), f.Type())
				}
			}
		case *types.Signature:
			for _, tuple := range []*types.Tuple{typ.Params(), typ.Results()} {
				for i := range tuple.Len() {
					check(where, tuple.At(i).Type())
				}
			}
		}
	}
	for _, path := range public {
		pkg, err := imp.Import(module + path)
		if err != nil {
			t.Fatal(err)
		}
		before := len(seen)
		scope := pkg.Scope()
		for _, name := range scope.Names() {
			obj := scope.Lookup(name)
			if !obj.Exported() {
				continue
			}
			where := pkg.Name() + "." + name
			if tn, ok := obj.(*types.TypeName); ok && tn.IsAlias() {
				t.Errorf("%s is an alias of %s", where, types.Unalias(tn.Type()))
				continue
			}
			check(where, obj.Type())
		}
		if len(seen)-before < 3 {
			t.Fatalf("only %d new types checked in %s: the walk lost its API", len(seen)-before, path)
		}
	}
	if len(seen) < 40 {
		t.Fatalf("only %d types checked: the walk lost the API", len(seen))
	}
}

// TestAPI_searchErrorAsREADME: SearchError is two fields, as README says, and every method README
// names is one of its methods.
func TestAPI_searchErrorAsREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	sentence := regexp.MustCompile("(?s)`\\*SearchError` is, as `exec.Error` is, .*?\\(`Name`, `Err`\\).*?its methods tell the rest: (.*?)\\. The\n").FindSubmatch(readme)
	if sentence == nil {
		t.Fatal("README's sentence on SearchError not found")
	}
	typ := reflect.TypeFor[host.SearchError]()
	var fields []string
	for f := range typ.Fields() {
		if f.IsExported() {
			fields = append(fields, f.Name)
		}
	}
	if strings.Join(fields, " ") != "Name Err" {
		t.Errorf("SearchError's fields are %v; README says Name and Err", fields)
	}
	list := regexp.MustCompile(`\s*\([^)]*\)`).ReplaceAll(sentence[1], nil) // what each does, in parentheses
	methods := regexp.MustCompile("(?:^|, | and )`(\\w+)`").FindAllSubmatch(list, -1)
	if len(methods) < 8 {
		t.Fatalf("README names %d methods: the pattern lost them", len(methods))
	}
	for _, m := range methods {
		if _, ok := reflect.TypeFor[*host.SearchError]().MethodByName(string(m[1])); !ok {
			t.Errorf("README names SearchError.%s, which is no method of it", m[1])
		}
	}
}
