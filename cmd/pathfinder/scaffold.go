package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/engine"
)

// abiModule is the module that holds the plugin contract and its guest SDK.
const abiModule = "github.com/pathfinder-dev/pathfinder"

var stepName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`) })

func cmdPlugin(fs *flag.FlagSet) func(context.Context, *cli, []string) int {
	module := fs.String("module", "", "the new plugin's Go `MODULE` path (default example.com/pathfinder-plugins/NAME)")
	checkout := fs.String("pathfinder", "", "replace "+abiModule+" in go.mod with the checkout in `DIR` (default: the checkout the current directory is in, if any)")
	return func(_ context.Context, c *cli, args []string) int {
		if len(args) > 0 && args[0] != "new" {
			return c.usageError("unknown subcommand %q%s", args[0], didYouMeanOrValid(args[0], []string{"new"}))
		}
		if len(args) < 2 || len(args) > 3 {
			return c.usageError("expected new NAME [DIR]")
		}
		name := args[1]
		if !stepName().MatchString(name) || name == engine.StepAlreadyLoaded || name == engine.StepSystem {
			return c.usageError("%q is not a step name: lower-case letters, digits, '-' and '_', starting with a letter, and not %q or %q", name, engine.StepAlreadyLoaded, engine.StepSystem)
		}
		if builtin.IsStep(name) {
			return c.usageError("%q is the name of a builtin step: a site plugin needs its own name (mine-%s, site-%s, ...)", name, name, name)
		}
		dir := name
		if len(args) == 3 {
			dir = args[2]
		}
		dir, err := filepath.Abs(dir)
		if err != nil {
			c.errorf("plugin: %v", err)
			return exitUsage
		}
		if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
			c.errorf("plugin: %s exists and is not empty; nothing was written", dir)
			return exitUsage
		}
		sc := scaffold{Name: name, Module: *module, GoVersion: "1.26.0", Require: "v0.0.0-00010101000000-000000000000"}
		if sc.Module == "" {
			sc.Module = "example.com/pathfinder-plugins/" + name
		}
		if *checkout != "" {
			root, goVersion, err := checkoutAt(*checkout)
			if err != nil {
				c.errorf("plugin: --pathfinder %s: %v", *checkout, err)
				return exitUsage
			}
			sc.Replace, sc.GoVersion = root, goVersion
		} else if root, goVersion, ok := findCheckout(dir); ok {
			sc.Replace, sc.GoVersion = root, goVersion
		} else if root, goVersion, ok := builtFrom(); ok {
			sc.Replace, sc.GoVersion = root, goVersion
		} else if bi, ok := debug.ReadBuildInfo(); ok && strings.HasPrefix(bi.Main.Version, "v") {
			sc.Require = bi.Main.Version
		}
		files, err := sc.write(dir)
		if err != nil {
			c.errorf("plugin: %v", err)
			return exitUsage
		}
		fmt.Fprintf(c.stdout, "created %s: %s\n", dir, strings.Join(files, ", "))
		if sc.Replace != "" {
			fmt.Fprintf(c.stdout, "go.mod replaces %s with the checkout at %s: the module is not published yet\n", abiModule, sc.Replace)
		} else {
			fmt.Fprintf(c.stdout, "go.mod requires %s %s, which is not published yet: go test fails until go.mod replaces it with a checkout; run this again with --pathfinder DIR (a pathfinder checkout)\n", abiModule, sc.Require)
		}
		fmt.Fprintf(c.stdout, `
next:
  cd %[1]s
  go test ./...                                                   # the search, natively, on a fake tree
  GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o %[2]s.wasm .
  sha256sum %[2]s.wasm

then, in pathfinder.toml (docs/plugins.md explains each key):
  [plugin.%[2]s]
  source = "%[1]s/%[2]s.wasm"
  sha256 = "..."            # the sum above
  read = ["/opt/%[2]s"]

  [library.cudart]          # or [search] for every library
  order = ["%[2]s", "wheels", "conda", "already-loaded", "system", "envroots"]

and check it with: pathfinder config check FILE && pathfinder plugins --config FILE
`, dir, name)
		return exitOK
	}
}

// findCheckout looks for a pathfinder checkout holding the working directory or dir.
func findCheckout(dir string) (root, goVersion string, ok bool) {
	starts := []string{dir}
	if wd, err := os.Getwd(); err == nil {
		starts = []string{wd, dir}
	}
	for _, start := range starts {
		for d := start; ; d = filepath.Dir(d) {
			if root, goVersion, err := checkoutAt(d); err == nil {
				return root, goVersion, true
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", "", false
}

// builtFrom is the checkout this binary was built from (go install ./cmd/pathfinder, go run), when
// it still holds this file's package; a binary built with -trimpath does not know it.
func builtFrom() (root, goVersion string, ok bool) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", "", false
	}
	root, goVersion, err := checkoutAt(filepath.Dir(filepath.Dir(filepath.Dir(file))))
	return root, goVersion, err == nil
}

// checkoutAt reads dir/go.mod and says whether dir is the root of a pathfinder checkout, and the Go
// version it needs.
func checkoutAt(dir string) (root, goVersion string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	f, err := os.Open(filepath.Join(abs, "go.mod"))
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	module := ""
	goVersion = "1.26.0"
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && fields[0] == "module" {
			module = strings.Trim(fields[1], `"`)
		}
		if len(fields) == 2 && fields[0] == "go" {
			goVersion = fields[1]
		}
	}
	if module != abiModule {
		return "", "", fmt.Errorf("%s/go.mod is not module %s", abs, abiModule)
	}
	return abs, goVersion, nil
}

// scaffold is what a new plugin is made of.
type scaffold struct {
	Name, Module, GoVersion string
	Require                 string // the version of abiModule required
	Replace                 string // the checkout that replaces abiModule, or ""
}

func (sc *scaffold) write(dir string) ([]string, error) {
	goMod := fmt.Sprintf("module %s\n\ngo %s\n\nrequire %s %s\n", sc.Module, sc.GoVersion, abiModule, sc.Require)
	if sc.Replace != "" {
		goMod += fmt.Sprintf("\n// %s is not published yet: this is the checkout `pathfinder plugin new` ran in, or was built from.\nreplace %s => %s\n", abiModule, abiModule, sc.Replace)
	}
	files := []struct{ name, data string }{
		{"go.mod", goMod},
		{"main.go", scaffoldMain},
		{"native.go", scaffoldNative},
		{"search.go", scaffoldSearch},
		{"search_test.go", scaffoldTest},
		{"README.md", scaffoldReadme},
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		data := strings.ReplaceAll(f.data, "NAME", sc.Name)
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(data), 0o644); err != nil {
			return names, err
		}
		names = append(names, f.name)
	}
	return names, nil
}

const scaffoldMain = `//go:build wasip1

// Command NAME is a pathfinder search plugin. Build it with:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o NAME.wasm .
package main

import "github.com/pathfinder-dev/pathfinder/abi"

func init() { abi.Register(plugin) }

func main() {}
`

const scaffoldNative = `//go:build !wasip1

package main

import (
	"fmt"
	"os"
)

// main explains itself when the plugin is built for the host by mistake (go build ./... builds it).
func main() {
	fmt.Fprintln(os.Stderr, "NAME is a pathfinder plugin, not a program: build it with\n"+
		"  GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o NAME.wasm .")
	os.Exit(2)
}
`

const scaffoldSearch = `package main

import (
	"path"
	"strconv"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// plugin is what main.go registers. Its name is the step name pathfinder.toml uses.
var plugin = abi.Plugin{
	Name:    "NAME",
	Version: "0.1.0",
	Env:     nil, // environment variables it reads; the config must grant each one (env = [...])
	Search:  search,
}

// defaultRoot is searched when the config gives no "root" option.
const defaultRoot = "/opt/NAME"

// search proposes the library's files under the root, in the library's own toolkit directories
// (lib64 and lib for cudart, include for its headers, bin for nvcc, ...), newest file name first. It
// sees only what the config grants (read = ["/opt/NAME"]), and the host checks every candidate it
// proposes before anything uses it. Everything looked at and not taken goes in resp.Tried, so that
// pathfinder explain can say why.
func search(env abi.Env, req *abi.Request) *abi.Response {
	resp := &abi.Response{}
	root := req.Options["root"]
	if root == "" {
		root = defaultRoot
	}
	if !path.IsAbs(root) {
		resp.Error = "option root " + strconv.Quote(root) + " is not an absolute path"
		return resp
	}
	var dirs []string
	for _, d := range req.Library.AnchorDirs(req.Platform) {
		dirs = append(dirs, path.Join(root, d))
	}
	abi.Find(env, req, resp, dirs)
	return resp
}
`

const scaffoldTest = `package main

import (
	"testing"
	"testing/fstest"

	"github.com/pathfinder-dev/pathfinder/abi"
)

// The search runs natively here, over an in-memory tree; pathfinder runs the same function as wasm.
func TestSearch(t *testing.T) {
	cudart := abi.Descriptor{
		Name:               "cudart",
		LinuxSonames:       []string{"libcudart.so.13", "libcudart.so.12"},
		AnchorRelDirsLinux: []string{"lib64", "lib"},
	}
	elf := &fstest.MapFile{Data: []byte("\x7fELF")}
	tests := []struct {
		name    string
		files   fstest.MapFS
		options map[string]string
		want    string // the first candidate, or ""
		err     string
	}{
		{"default root", fstest.MapFS{"opt/NAME/lib64/libcudart.so.12": elf}, nil, "/opt/NAME/lib64/libcudart.so.12", ""},
		{"newest name first", fstest.MapFS{"opt/NAME/lib/libcudart.so.12": elf, "opt/NAME/lib/libcudart.so.13": elf}, nil, "/opt/NAME/lib/libcudart.so.13", ""},
		{"root option", fstest.MapFS{"srv/cuda/lib64/libcudart.so.13": elf}, map[string]string{"root": "/srv/cuda"}, "/srv/cuda/lib64/libcudart.so.13", ""},
		{"nothing there", fstest.MapFS{}, nil, "", ""},
		{"relative root", fstest.MapFS{}, map[string]string{"root": "cuda"}, "", ` + "`" + `option root "cuda" is not an absolute path` + "`" + `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &abi.Request{
				ABI:      abi.Version,
				Step:     "NAME",
				Kind:     abi.KindDynamicLib,
				Platform: abi.Platform{OS: "linux", Arch: "amd64"},
				Library:  cudart,
				Options:  tt.options,
			}
			resp := search(abi.Env{FS: tt.files}, req)
			got := ""
			if len(resp.Candidates) > 0 {
				got = resp.Candidates[0].Path
			}
			if got != tt.want || resp.Error != tt.err {
				t.Fatalf("candidate %q, error %q; want %q, %q (tried: %v)", got, resp.Error, tt.want, tt.err, resp.Tried)
			}
			if tt.want == "" && tt.err == "" && len(resp.Tried) == 0 {
				t.Fatal("found nothing and said nowhere it looked")
			}
		})
	}
}
`

const scaffoldReadme = "# NAME\n\n" +
	"A pathfinder search plugin, made by `pathfinder plugin new NAME`. The search is in `search.go`;\n" +
	"`main.go` registers it when built for WebAssembly.\n\n" +
	"```sh\n" +
	"go test ./...                                                     # natively, on a fake tree\n" +
	"GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o NAME.wasm .  # the plugin\n" +
	"sha256sum NAME.wasm                                               # for the pin\n" +
	"```\n\n" +
	"In `pathfinder.toml` (a relative `source` is relative to the config file's directory):\n\n" +
	"```toml\n" +
	"[plugin.NAME]\n" +
	"source = \"NAME.wasm\"\n" +
	"sha256 = \"...\"                 # refused when the file does not match\n" +
	"read = [\"/opt/NAME\"]            # the only directories it can see\n\n" +
	"[plugin.NAME.options]\n" +
	"root = \"/opt/NAME\"\n\n" +
	"[library.cudart]               # or [search] order, for every library\n" +
	"order = [\"NAME\", \"wheels\", \"conda\", \"already-loaded\", \"system\", \"envroots\"]\n" +
	"```\n\n" +
	"Then `pathfinder config check pathfinder.toml`, `pathfinder plugins` and `pathfinder explain cudart`.\n" +
	"See docs/plugins.md in the pathfinder repository for the whole walk-through.\n"
