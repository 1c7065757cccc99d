// Package wasmbuild builds the builtin steps module reproducibly, and computes the manifest that
// proves the committed module matches its sources.
//
// The module is one WASI reactor holding every first-party step: the C of each step
// (plugins/<name>/*.c), the C SDK (abi/c) and the step table generated from each step's abi.Plugin
// in Go (builtin/steps_gen.c), built by clang against wasi-libc. A Go-built module carries the Go
// runtime (3.7 MB), and wazero's cost to compile, load from its cache and instantiate a module grows
// with its size, so the shipped steps are C and their Go packages are the reference
// (docs/performance.md). On Debian: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32.
package wasmbuild

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Where the sources are, relative to the module root.
const (
	SDK     = "abi/c"
	Plugins = "plugins"
	GoTable = "builtin/steps_gen.go"
	CTable  = "builtin/steps_gen.c"
	Module  = "builtin/steps.wasm"
)

// Flags are clang's flags: a WASI reactor, no debug information or names (so no build paths), the
// same bytes from the same compiler; link-time optimisation, so that the SDK's small functions are
// inlined into the steps' files as they would be in one file (1.2 KB less).
var Flags = []string{"--target=wasm32-wasi", "--sysroot=/usr", "-Oz", "-flto", "-std=c11", "-Wall", "-Wextra", "-Werror",
	"-mexec-model=reactor", "-Wl,--strip-all", "-Wl,-z,stack-size=65536", "-I" + SDK}

// ErrNoCompiler says clang or its WASI sysroot is missing.
var ErrNoCompiler = errors.New("clang with a wasm32-wasi sysroot is not installed (Debian: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32)")

// ignore is the first line of every C file in a folder that holds Go: the go tool refuses C files in
// a package without cgo, and this build constraint keeps it off them.
const ignore = "//go:build ignore"

// Compiler returns clang's version line, or ErrNoCompiler.
func Compiler() (string, error) {
	out, err := exec.Command("clang", "--version").Output()
	if err != nil {
		return "", ErrNoCompiler
	}
	if _, err := os.Stat("/usr/lib/wasm32-wasi/libc.a"); err != nil {
		return "", ErrNoCompiler
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line), nil
}

// Step is a first-party step: a folder plugins/<Name> holding its C and its Go reference, whose
// abi.Plugin gives the name, version and variables the module registers it with.
type Step struct {
	Name, Version string
	Env           []string
}

var (
	stepName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`) // also a C identifier: search_<name>
	envName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	version  = regexp.MustCompile(`^[A-Za-z0-9.+_-]*$`)
)

// Steps reads the first-party steps under the module root: every folder of plugins/ that holds C,
// with its Go's `var Plugin = abi.Plugin{Name: ..., Version: ..., Env: []string{...}}`, sorted.
func Steps(root string) ([]Step, error) {
	dirs, err := filepath.Glob(filepath.Join(root, Plugins, "*", "*.c"))
	if err != nil {
		return nil, err
	}
	var steps []Step
	seen := map[string]bool{}
	for _, c := range dirs {
		dir := filepath.Dir(c)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		s, err := readPlugin(dir)
		if err != nil {
			return nil, err
		}
		if want := filepath.Base(dir); s.Name != want {
			return nil, fmt.Errorf("%s: the step's folder is %q but its abi.Plugin is named %q: the folder name is the step name", rel(root, dir), want, s.Name)
		}
		if !stepName.MatchString(s.Name) {
			return nil, fmt.Errorf("%s: step name %q: lower-case letters, digits and _ only (its C search is search_%s)", rel(root, dir), s.Name, s.Name)
		}
		steps = append(steps, s)
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].Name < steps[j].Name })
	return steps, nil
}

// readPlugin finds `var Plugin = abi.Plugin{...}` in the Go files of dir and reads its literals.
func readPlugin(dir string) (Step, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		if err != nil {
			return Step{}, err
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name != "Plugin" || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.CompositeLit)
					if sel, isSel := typeOf(lit); !ok || !isSel || sel != "abi.Plugin" {
						continue
					}
					s, err := pluginLiteral(lit)
					if err != nil {
						return Step{}, fmt.Errorf("%s: var Plugin: %v (go generate ./builtin reads it)", f, err)
					}
					return s, nil
				}
			}
		}
	}
	return Step{}, fmt.Errorf("%s holds C but no Go file there declares `var Plugin = abi.Plugin{...}`, its Go reference", dir)
}

func typeOf(lit *ast.CompositeLit) (string, bool) {
	if lit == nil {
		return "", false
	}
	sel, ok := lit.Type.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", false
	}
	return x.Name + "." + sel.Sel.Name, true
}

func pluginLiteral(lit *ast.CompositeLit) (Step, error) {
	var s Step
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return s, errors.New("fields must be named")
		}
		key, _ := kv.Key.(*ast.Ident)
		if key == nil {
			continue
		}
		switch key.Name {
		case "Name", "Version":
			v, err := stringLit(kv.Value)
			if err != nil {
				return s, fmt.Errorf("%s: %v", key.Name, err)
			}
			if key.Name == "Name" {
				s.Name = v
			} else if s.Version = v; !version.MatchString(v) {
				return s, fmt.Errorf("Version %q: letters, digits and .+_- only", v)
			}
		case "Env":
			if id, ok := kv.Value.(*ast.Ident); ok && id.Name == "nil" {
				continue
			}
			l, ok := kv.Value.(*ast.CompositeLit)
			if !ok {
				return s, errors.New("Env: a []string{...} of string literals")
			}
			for _, x := range l.Elts {
				v, err := stringLit(x)
				if err != nil || !envName.MatchString(v) {
					return s, errors.New("Env: a []string{...} of string literals, each a variable's name")
				}
				s.Env = append(s.Env, v)
			}
		}
	}
	return s, nil
}

func stringLit(e ast.Expr) (string, error) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", errors.New("not a string literal")
	}
	return strconv.Unquote(lit.Value)
}

// Tables returns the step table in Go (builtin's step list) and in C (the module's registrations).
func Tables(steps []Step) (goSrc, cSrc []byte, err error) {
	var g, c bytes.Buffer
	g.WriteString("// Code generated by go generate ./builtin from plugins/*/*.go; DO NOT EDIT.\n\npackage builtin\n\n")
	g.WriteString("// steps are the step names the builtin module registers: the folders of plugins/ that hold C.\nvar steps = [...]string{")
	c.WriteString(ignore + "\n\n// Code generated by go generate ./builtin from plugins/*/*.go; DO NOT EDIT.\n\n")
	c.WriteString("// The steps the builtin module registers, sorted by name: search_<name> from plugins/<name>/*.c,\n" +
		"// with the name, version and variables of its Go reference's abi.Plugin.\n#include \"sdk.h\"\n\n")
	for i, s := range steps {
		if i > 0 {
			g.WriteString(", ")
		}
		fmt.Fprintf(&g, "%q", s.Name)
		fmt.Fprintf(&c, "void search_%s(const request *, response *);\n", s.Name)
	}
	g.WriteString("}\n")
	c.WriteString("\nconst plugin *const plugins[] = {\n")
	for _, s := range steps {
		env := "NULL"
		if len(s.Env) > 0 {
			env = "(const char *const[]){"
			for _, e := range s.Env {
				env += strconv.Quote(e) + ", "
			}
			env += "NULL}"
		}
		fmt.Fprintf(&c, "\t&(const plugin){%q, %q, %s, search_%s},\n", s.Name, s.Version, env, s.Name)
	}
	c.WriteString("\tNULL,\n};\n")
	goSrc, err = format.Source(g.Bytes())
	return goSrc, c.Bytes(), err
}

// sources returns the module's C files (and with headers, its headers), relative to root, sorted.
func sources(root string, headers bool) ([]string, error) {
	exts := []string{".c"}
	if headers {
		exts = append(exts, ".h")
	}
	var files []string
	for _, ext := range exts {
		for _, pattern := range []string{SDK + "/*" + ext, Plugins + "/*/*" + ext} {
			m, err := filepath.Glob(filepath.Join(root, pattern))
			if err != nil {
				return nil, err
			}
			for _, f := range m {
				files = append(files, rel(root, f))
			}
		}
	}
	files = append(files, CTable)
	sort.Strings(files)
	for _, f := range files {
		if strings.HasPrefix(f, SDK+"/") || !strings.HasSuffix(f, ".c") {
			continue
		}
		if line, _ := firstLine(filepath.Join(root, f)); line != ignore {
			return nil, fmt.Errorf("%s: the first line must be %q: the go tool refuses C files in a package without cgo", f, ignore)
		}
	}
	return files, nil
}

func firstLine(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Scan()
	return strings.TrimSpace(s.Text()), s.Err()
}

func rel(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

// Build compiles the module into out. root is the module root.
func Build(root, out string) error {
	if _, err := Compiler(); err != nil {
		return err
	}
	files, err := sources(root, false)
	if err != nil {
		return err
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return err
	}
	args := append(append(append([]string{}, Flags...), "-o", out), files...)
	cmd := exec.Command("clang", args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("clang %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// Manifest is the hash of every C source and header of the module. (The compiler that built it is
// recorded by Generate on a line of its own.)
func Manifest(root string) (string, error) {
	files, err := sources(root, true)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# generated by go generate ./builtin; checked by builtin's tests\n")
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), f)
	}
	return b.String(), nil
}

// Generate writes the step tables, rebuilds builtin/steps.wasm and writes its manifest, under the
// module root above dir.
func Generate(dir string) error {
	root, err := moduleRoot(dir)
	if err != nil {
		return err
	}
	cc, err := Compiler()
	if err != nil {
		return err
	}
	steps, err := Steps(root)
	if err != nil {
		return err
	}
	goSrc, cSrc, err := Tables(steps)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, GoTable), goSrc, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, CTable), cSrc, 0o644); err != nil {
		return err
	}
	wasm := filepath.Join(root, Module)
	if err := Build(root, wasm); err != nil {
		return err
	}
	m, err := Manifest(root)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(wasm)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	m += "cc " + cc + "\n" + hex.EncodeToString(sum[:]) + "  " + Module + "\n"
	return os.WriteFile(wasm+".sum", []byte(m), 0o644)
}

func moduleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
	}
}
