package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/builtin"
	"github.com/pathfinder-dev/pathfinder/internal/catalog"
	"github.com/pathfinder-dev/pathfinder/internal/inspect"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func TestPacks_discovery(t *testing.T) {
	sys, home, venv, envDir, cfgDir := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	filetree.Put(t, sys, "packs.d/b-sys.toml", pack("sysb"))
	filetree.Put(t, sys, "packs.d/a-sys.toml", pack("sysa")) // read before b: name order
	filetree.Put(t, sys, "packs.d/README.md", []byte("not a pack"))
	filetree.Put(t, sys, "packs.d/.#a-sys.toml", []byte("an editor's lock file"))
	filetree.Put(t, home, "config/pathfinder/packs.d/user.toml", pack("user"))
	filetree.Put(t, venv, "share/pathfinder/packs.d/venv.toml", pack("venv"))
	envFile := filetree.Put(t, envDir, "one.toml", pack("envfile"))
	filetree.Put(t, envDir, "dir/two.toml", pack("envdir"))
	filetree.Put(t, cfgDir, "packs/cfg.toml", pack("cfg"))
	config := filetree.Put(t, cfgDir, "pathfinder.toml", []byte("[packs]\ndirs = [\"packs\"]\n"))
	env := testEnv{
		"HOME":             home,
		"XDG_CONFIG_HOME":  filepath.Join(home, "config"),
		"VIRTUAL_ENV":      venv,
		"CONDA_PREFIX":     venv, // the same prefix twice: its packs are read once
		"PATHFINDER_PACKS": envFile + string(os.PathListSeparator) + filepath.Join(envDir, "dir"),
	}
	f := newFinderOpts(t, Options{LookupEnv: env.lookup, SystemConfigDir: sys, ConfigFile: config})
	var got []string
	for _, p := range f.Packs() {
		got = append(got, fmt.Sprintf("%s %s %v", p.File, p.Origin, p.Libraries[DynamicLib]))
	}
	want := []string{
		"builtin:nvidia.toml builtin ",
		filepath.Join(sys, "packs.d/a-sys.toml") + " system [sysa]",
		filepath.Join(sys, "packs.d/b-sys.toml") + " system [sysb]",
		filepath.Join(home, "config/pathfinder/packs.d/user.toml") + " user [user]",
		filepath.Join(venv, "share/pathfinder/packs.d/venv.toml") + " $VIRTUAL_ENV [venv]",
		envFile + " $PATHFINDER_PACKS [envfile]",
		filepath.Join(envDir, "dir/two.toml") + " $PATHFINDER_PACKS [envdir]",
		filepath.Join(cfgDir, "packs/cfg.toml") + " config " + config + ":2:1 [cfg]",
	}
	got[0] = got[0][:strings.Index(got[0], "[")] // the builtin pack's fifty names
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("packs\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, name := range []string{"sysa", "sysb", "user", "venv", "envfile", "envdir", "cfg", "cudart"} {
		if f.FileNames(DynamicLib, name) == nil {
			t.Errorf("%s is not in the catalog", name)
		}
	}
	dirs := f.PackDirs()
	if len(dirs) < 5 || !dirs[0].Present || dirs[0].Origin != inspect.PackFromSystem {
		t.Fatalf("pack dirs %+v", dirs)
	}
}

func TestPacks_replaces(t *testing.T) {
	sys, user := t.TempDir(), t.TempDir()
	filetree.Put(t, sys, "packs.d/acme.toml", pack("acmefft"))
	filetree.Put(t, user, "pathfinder/packs.d/fix.toml", append(pack("acmefft", "replaces = true"), "\n[[library]]\nname = \"cudart\"\nreplaces = true\npackaged_with = \"ctk\"\nlinux_sonames = [\"libcudart.so.14\"]\n"...))
	f := newFinderOpts(t, Options{SystemConfigDir: sys, LookupEnv: testEnv{"XDG_CONFIG_HOME": user}.lookup})
	if got := strings.Join(f.FileNames(DynamicLib, "cudart"), " "); got != "libcudart.so.14" {
		t.Fatalf("cudart file names %q: the user pack replaces the builtin one", got)
	}
	packs := f.Packs()
	fix := packs[len(packs)-1]
	if len(fix.Replaces) != 2 || !strings.Contains(fix.Replaces[0], `library "acmefft" of `+filepath.Join(sys, "packs.d/acme.toml")) ||
		!strings.Contains(fix.Replaces[1], `library "cudart" of builtin:nvidia.toml`) {
		t.Fatalf("replaces %q", fix.Replaces)
	}
	if by := packs[0].ReplacedBy; len(by) != 1 || !strings.Contains(by[0], `library "cudart" by `+fix.File) {
		t.Fatalf("builtin pack replaced by %q", by)
	}
}

func TestPacks_Errors(t *testing.T) {
	cublasDep := `dependencies = ["cublas"]`
	tests := []struct {
		name  string
		files map[string][]byte // under the system dir
		env   testEnv
		want  []string // every one must be in the error
	}{
		{"two packs define one library", map[string][]byte{"packs.d/a.toml": pack("acme"), "packs.d/b.toml": pack("acme")},
			nil, []string{`library "acme" is defined by both $SYS/packs.d/a.toml:1 and $SYS/packs.d/b.toml:1`, "replaces = true"}},
		{"a pack shadows a builtin library", map[string][]byte{"packs.d/a.toml": pack("cudart")},
			nil, []string{`library "cudart" is defined by both builtin:nvidia.toml:`, "$SYS/packs.d/a.toml:1"}},
		{"a cycle across packs", map[string][]byte{"packs.d/a.toml": pack("x", `dependencies = ["y"]`), "packs.d/b.toml": pack("y", `dependencies = ["x"]`)},
			nil, []string{"dependency cycle: x -> y -> x"}},
		{"an unknown dependency", map[string][]byte{"packs.d/a.toml": pack("x", `dependencies = ["cublass"]`)},
			nil, []string{`$SYS/packs.d/a.toml:1: library "x" depends on unknown library "cublass"`}},
		{"malformed", map[string][]byte{"packs.d/a.toml": []byte("[[library]\n")},
			nil, []string{"pack $SYS/packs.d/a.toml:1:10:"}},
		{"duplicate key", map[string][]byte{"packs.d/a.toml": append(pack("x", cublasDep), "\nname = \"y\"\n"...)},
			nil, []string{"$SYS/packs.d/a.toml:", "name"}},
		{"unknown key", map[string][]byte{"packs.d/a.toml": pack("x", "sonames = []")},
			nil, []string{`$SYS/packs.d/a.toml:5:1: unknown key "library.sonames"`}},
		{"a relative PATHFINDER_PACKS entry", nil,
			testEnv{"PATHFINDER_PACKS": "packs"}, []string{`$PATHFINDER_PACKS entry "packs" is a relative path`}},
		{"a missing PATHFINDER_PACKS entry", nil,
			testEnv{"PATHFINDER_PACKS": "/nonexistent/packs"}, []string{"/nonexistent/packs ($PATHFINDER_PACKS): no such file or directory"}},
		{"a missing config pack dir", map[string][]byte{"pathfinder.toml": []byte("[packs]\ndirs = [\"/nonexistent/d\"]\n")},
			nil, []string{"/nonexistent/d (config $SYS/pathfinder.toml:2:1): no such file or directory"}},
		{"an empty pack dir", map[string][]byte{"pathfinder.toml": []byte("[packs]\ndirs = [\"\"]\n")},
			nil, []string{"$SYS/pathfinder.toml:2:1: packs.dirs: an empty path"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := t.TempDir()
			for name, data := range tt.files {
				filetree.Put(t, sys, name, data)
			}
			env := tt.env
			if env == nil {
				env = testEnv{}
			}
			f, err := New(Options{SystemConfigDir: sys, LookupEnv: env.lookup})
			if err == nil {
				f.Close()
				t.Fatal("New succeeded")
			}
			for _, w := range tt.want {
				if w = strings.ReplaceAll(w, "$SYS", sys); !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.HasPrefix(err.Error(), "pathfinder: ") {
				t.Errorf("error %q has the program's prefix, which the command adds", err)
			}
		})
	}
}

// A relative $VIRTUAL_ENV is never resolved against the working directory: it is skipped, and the
// listing says so, but it does not break every command.
func TestPacks_relativeVenv(t *testing.T) {
	f := newFinderOpts(t, Options{SystemConfigDir: t.TempDir(), LookupEnv: testEnv{"VIRTUAL_ENV": "venv"}.lookup})
	for _, d := range f.PackDirs() {
		if d.Origin == inspect.PackFromVenv {
			if !strings.Contains(d.Note, "relative path") {
				t.Fatalf("venv pack dir %+v", d)
			}
			return
		}
	}
	t.Fatal("the relative venv is not listed")
}

// A vendor library from a pack is found where the pack says, and its dependency from the builtin pack
// is known. (Loading them is the CLI's end-to-end test, in a process of its own: a library loaded here
// would be "already loaded" for every later test.)
func TestPacks_vendorLibraryWithDependency(t *testing.T) {
	venv := t.TempDir()
	site := filepath.Join(venv, "lib/python3.12/site-packages")
	filetree.Put(t, site, "acme/lib/libacmefft.so.2", elfLib(t, "libacmefft.so.2"))
	filetree.Put(t, venv, "share/pathfinder/packs.d/acme.toml", []byte(`[[library]]
name = "acmefft"
packaged_with = "other"
linux_sonames = ["libacmefft.so.2"]
site_packages_linux = ["acme/lib"]
dependencies = ["cublas"]
`))
	f := newFinderOpts(t, Options{SystemConfigDir: t.TempDir(), LookupEnv: testEnv{"VIRTUAL_ENV": venv, "PATHFINDER_CACHE_DIR": sharedCacheDir}.lookup})
	lib, err := f.Find(bg, "acmefft")
	if err != nil {
		t.Fatal(err)
	}
	if lib.Path != filepath.Join(site, "acme/lib/libacmefft.so.2") || lib.FoundVia != "site-packages" || lib.Step != "wheels" {
		t.Fatalf("acmefft %+v", lib)
	}
	if e, _ := f.catalog.Lookup(DynamicLib, "acmefft"); e == nil || strings.Join(e.Dependencies, ",") != "cublas" {
		t.Fatalf("acmefft's descriptor %+v", e)
	}
}

// Every pack in docs/packs.md reads, over the builtin pack, as the docs say it does.
func TestPacks_docs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/packs.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for _, part := range strings.Split(string(doc), "```toml\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		if !strings.Contains(block, "[[") {
			continue // pyproject.toml
		}
		blocks++
		if _, err := catalog.New(catalog.Pack{Name: "builtin:nvidia.toml", Data: builtin.NVIDIAPack()}, catalog.Pack{Name: "docs", Data: []byte(block)}); err != nil {
			t.Errorf("%v in\n%s", err, block)
		}
	}
	if blocks != 3 {
		t.Fatalf("%d packs in docs/packs.md, want 3", blocks)
	}
}
