package abi

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// contractValues are the constants docs/abi.md must state with their values: every exported
// constant of limits.go, and the roles. A constant added there without a line here fails the test.
var contractValues = map[string]any{
	"MaxModuleBytes": MaxModuleBytes, "PageBytes": PageBytes, "MaxMemoryPages": MaxMemoryPages,
	"MaxResponseBytes": MaxResponseBytes, "MaxCandidates": MaxCandidates, "MaxTried": MaxTried,
	"MaxIgnored": MaxIgnored, "MaxPathBytes": MaxPathBytes, "MaxLogLines": MaxLogLines,
	"MaxLogBytes": MaxLogBytes, "MaxLogLineBytes": MaxLogLineBytes, "MaxOutputBytes": MaxOutputBytes,
	"MaxResolveName": MaxResolveName, "MaxIdleInstances": MaxIdleInstances,
	"DefaultMemoryBytes": DefaultMemoryBytes, "DefaultTimeout": DefaultTimeout,
	"RoleSitePackages": RoleSitePackages, "RoleCanaryRoot": RoleCanaryRoot, "RoleEnvPrefix": RoleEnvPrefix,
	"ResolveDenied": ResolveDenied, "ResolveNotFound": ResolveNotFound, "ResolveTooLong": ResolveTooLong,
}

// TestContractDoc holds docs/abi.md to package abi: its version, each limit and role with its value
// on the line that names it, every export, import and code by name, and every key the wire carries
// (the descriptor's in docs/packs.md, which the request's library refers to).
func TestContractDoc(t *testing.T) {
	b, err := os.ReadFile("../docs/abi.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if first, _, _ := strings.Cut(doc, "\n"); first != "# The plugin contract, ABI version "+strconv.Itoa(Version) {
		t.Errorf("docs/abi.md starts %q: not ABI version %d", first, Version)
	}
	for _, name := range exportedConsts(t, "limits.go", "abi.go") {
		v, listed := contractValues[name]
		switch {
		case strings.HasPrefix(name, "Export") || strings.HasPrefix(name, "Import") || strings.HasPrefix(name, "Capability") || name == "Version":
			if !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("docs/abi.md does not name %s", name)
			}
		case !listed && (strings.HasPrefix(name, "Role") || strings.HasPrefix(name, "Resolve")):
			t.Errorf("%s is not in contractValues: add it there and to docs/abi.md", name)
		case listed:
			if !docStates(doc, name, v) {
				t.Errorf("docs/abi.md has no line naming `%s` with its value %v", name, v)
			}
		}
	}
	for _, name := range exportedConsts(t, "limits.go") {
		if _, ok := contractValues[name]; !ok {
			t.Errorf("limit %s is not in contractValues: add it there and to docs/abi.md", name)
		}
	}
	packs, err := os.ReadFile("../docs/packs.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[Request](), reflect.TypeFor[Response](), reflect.TypeFor[Description]()} {
		for key, descriptor := range wireKeys(typ) {
			in, page, whose := doc, "docs/abi.md", "wire's"
			if descriptor {
				in, page, whose = string(packs), "docs/packs.md", "descriptor's"
			}
			if !strings.Contains(in, "`"+key+"`") {
				t.Errorf("%s does not name the %s key %q", page, whose, key)
			}
		}
	}
}

// docStates reports whether a line of doc names `name` and beside it v: a string as the start of
// a `code` span, a number or a duration as a word of its own.
func docStates(doc, name string, v any) bool {
	value := regexp.MustCompile("`" + regexp.QuoteMeta(fmt.Sprint(v)))
	if _, ok := v.(string); !ok {
		value = regexp.MustCompile(`(^|[^\w.])` + regexp.QuoteMeta(fmt.Sprint(v)) + `($|[^\w.])`)
	}
	for _, line := range strings.Split(doc, "\n") {
		if strings.Contains(line, "`"+name+"`") && value.MatchString(line) {
			return true
		}
	}
	return false
}

// exportedConsts lists the exported constants the files of this package declare.
func exportedConsts(t *testing.T, files ...string) []string {
	var out []string
	for _, file := range files {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if n.IsExported() && !strings.HasPrefix(n.Name, "Kind") {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// wireKeys are the JSON keys of t and of the structs it holds, each with whether it is a
// descriptor's.
func wireKeys(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	var walk func(t reflect.Type, descriptor bool)
	walk = func(t reflect.Type, descriptor bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if key == "-" {
				continue
			}
			out[key] = out[key] || descriptor
			ft := f.Type
			if ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				walk(ft, descriptor || ft == reflect.TypeFor[Descriptor]())
			}
		}
	}
	walk(t, false)
	return out
}

// TestREADME_limits: README's Security model states the response's limits as package abi has them.
func TestREADME_limits(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(b)), " ")
	comma := func(n int) string {
		s := strconv.Itoa(n)
		if len(s) > 3 {
			s = s[:len(s)-3] + "," + s[len(s)-3:]
		}
		return s
	}
	for _, says := range []string{
		"A response may be " + strconv.Itoa(MaxResponseBytes>>20) + " MiB and hold " + comma(MaxCandidates) + " candidates",
		comma(MaxTried) + " places tried (past " + strconv.Itoa(MaxTried-1) + ", the rest are counted in one last entry)",
		"and " + strconv.Itoa(MaxIgnored) + " inputs passed over (the rest are dropped)",
		"keeps " + comma(MaxLogLines) + " lines and " + strconv.Itoa(MaxLogBytes>>10) + " KiB together",
	} {
		if !strings.Contains(readme, says) {
			t.Errorf("README does not say %q", says)
		}
	}
}
