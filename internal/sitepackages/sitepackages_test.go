package sitepackages

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func TestPyLayout_discover(t *testing.T) {
	mk := func(t *testing.T, dirs ...string) string {
		root := t.TempDir()
		for _, d := range dirs {
			if err := os.MkdirAll(root+"/"+d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	exe := func(t *testing.T, root, rel string) {
		filetree.Put(t, root, rel, []byte("\x7fELF"))
	}
	tests := []struct {
		name    string
		windows bool
		dirs    []string
		files   []string          // executables
		venvs   []string          // venvs with system site packages: their pyvenv.cfg
		env     map[string]string // values relative to the tree's root where they start with "@"
		want    []string          // relative to the tree's root
	}{
		{
			name: "windows venv, user site and conda", windows: true,
			dirs: []string{"venv/Lib/site-packages", "venv/lib/python3.12/site-packages", "conda/Lib/site-packages",
				"appdata/Python/Python39/site-packages", "appdata/Python/Python312/site-packages", "appdata/Python/Python313/other"},
			venvs: []string{"venv"},
			env:   map[string]string{"VIRTUAL_ENV": "@venv", "CONDA_PREFIX": "@conda", "APPDATA": "@appdata"},
			want:  []string{"venv/Lib/site-packages", "appdata/Python/Python312/site-packages", "appdata/Python/Python39/site-packages", "conda/Lib/site-packages"},
		},
		{
			name: "windows python.exe on PATH: a venv's Scripts", windows: true,
			dirs:  []string{"env/Lib/site-packages"},
			files: []string{"env/Scripts/python.exe", "env/pyvenv.cfg"},
			env:   map[string]string{"PATH": "relative/dir|@env/Scripts"},
			want:  []string{"env/Lib/site-packages"},
		},
		{
			name: "windows python.exe on PATH: an installation's own directory", windows: true,
			dirs:  []string{"Python312/Lib/site-packages"},
			files: []string{"Python312/python.exe"},
			env:   map[string]string{"PATH": "@Python312"},
			want:  []string{"Python312/Lib/site-packages"},
		},
		{
			name: "windows user base", windows: true,
			dirs: []string{"base/Python313/site-packages"},
			env:  map[string]string{"PYTHONUSERBASE": "@base", "APPDATA": "@nothing"},
			want: []string{"base/Python313/site-packages"},
		},
		{
			name: "unix layout unchanged",
			dirs: []string{"venv/lib/python3.11/site-packages", "venv/lib/python3.13/site-packages", "venv/Lib/site-packages",
				"home/.local/lib/python3.12/site-packages"},
			venvs: []string{"venv"},
			env:   map[string]string{"VIRTUAL_ENV": "@venv", "HOME": "@home", "APPDATA": "@venv"},
			want:  []string{"venv/lib/python3.13/site-packages", "venv/lib/python3.11/site-packages", "home/.local/lib/python3.12/site-packages"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := mk(t, tt.dirs...)
			for _, f := range tt.files {
				exe(t, root, f)
			}
			for _, v := range tt.venvs {
				filetree.Put(t, root, v+"/pyvenv.cfg", []byte("include-system-site-packages = true\n"))
			}
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = strings.NewReplacer("@", root+"/", "|", string(os.PathListSeparator)).Replace(v)
			}
			rec := &observe.Recorder{}
			got := Searched(Layout{Windows: tt.windows}.Discover(nil, func(k string) string { return env[k] }, rec))
			var want []string
			for _, w := range tt.want {
				want = append(want, filepath.Join(root, filepath.FromSlash(w)))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("discover = %q\nwant %q", got, want)
			}
			if len(rec.List()) == 0 {
				t.Fatal("discovery observed nothing: a new venv would not be a new answer")
			}
		})
	}
}

// TestPyLayout_pyenv: the python3 on PATH is pyenv's shim, a script; the site-packages are those of
// the version pyenv would run, found without running anything.
func TestPyLayout_pyenv(t *testing.T) {
	root := t.TempDir()
	pyenv := filepath.Join(root, "home", ".pyenv")
	filetree.Put(t, pyenv, "shims/python3", []byte("#!/usr/bin/env bash\nexec pyenv exec python3 \"$@\"\n"))
	for _, v := range []string{"3.11.7", "3.12.4"} {
		filetree.Put(t, pyenv, "versions/"+v+"/bin/python3", []byte("\x7fELF"))
		os.MkdirAll(filepath.Join(pyenv, "versions", v, "lib", "python"+v[:4], "site-packages"), 0o755)
	}
	filetree.Put(t, pyenv, "version", []byte("3.11.7\n"))
	sys := filepath.Join(root, "usr")
	filetree.Put(t, sys, "bin/python3", []byte("\x7fELF"))
	os.MkdirAll(filepath.Join(sys, "lib", "python3.10", "site-packages"), 0o755)
	project := filepath.Join(root, "project", "src")
	os.MkdirAll(project, 0o755)
	site := func(v string) string {
		return filepath.Join(pyenv, "versions", v, "lib", "python"+v[:4], "site-packages")
	}
	base := map[string]string{"PATH": filepath.Join(pyenv, "shims") + ":" + filepath.Join(sys, "bin"), "PWD": project}

	tests := []struct {
		name string
		env  map[string]string
		file string // a .python-version in the project's parent
		want string
	}{
		{name: "the global version file", want: site("3.11.7")},
		{name: "PYENV_VERSION", env: map[string]string{"PYENV_VERSION": "3.12.4"}, want: site("3.12.4")},
		{name: "a list: the first version that exists", env: map[string]string{"PYENV_VERSION": "3.9.1:3.12.4"}, want: site("3.12.4")},
		{name: ".python-version above the working directory", file: "3.12.4 # the project's\n", want: site("3.12.4")},
		{name: "PYENV_DIR instead of the working directory", file: "3.12.4", env: map[string]string{"PYENV_DIR": root}, want: site("3.11.7")},
		{name: "system: the next python3 on PATH", env: map[string]string{"PYENV_VERSION": "system"}, want: filepath.Join(sys, "lib", "python3.10", "site-packages")},
		{name: "PYENV_ROOT elsewhere: not this shim's", env: map[string]string{"PYENV_ROOT": filepath.Join(root, "other")}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vf := filepath.Join(root, "project", ".python-version")
			os.Remove(vf)
			if tt.file != "" {
				os.WriteFile(vf, []byte(tt.file), 0o644)
			}
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range tt.env {
				env[k] = v
			}
			got := Searched(Layout{}.Discover(nil, func(k string) string { return env[k] }, &observe.Recorder{}))
			if (tt.want == "") != (len(got) == 0) || tt.want != "" && got[0] != tt.want {
				t.Fatalf("discover = %q; want %q", got, tt.want)
			}
		})
	}
}

// TestDiscover_pythonRules: the site-packages of each Python in the order its site module adds them,
// and the user site where the first of them puts it, or off with why: after a venv's own with system
// site packages, before an installation's (PEP 370), never in a venv without them, nor with
// PYTHONNOUSERSITE set as CPython reads it.
func TestDiscover_pythonRules(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"home/.local/lib/python3.12/site-packages", "usr/lib/python3.12/site-packages",
		"iso/lib/python3.12/site-packages", "sys/lib/python3.12/site-packages", "nokey/lib/python3.12/site-packages",
		"conda/lib/python3.12/site-packages", "deb/lib/python3/dist-packages", "deb/local/lib/python3.11/dist-packages",
		"deb/lib/python3.11/dist-packages", "debvenv/lib/python3.11/site-packages"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	filetree.Put(t, root, "usr/bin/python3", []byte("\x7fELF"))
	filetree.Put(t, root, "deb/bin/python3", []byte("\x7fELF"))
	for venv, cfg := range map[string]string{
		"iso":     "home = @usr/bin\ninclude-system-site-packages = false\n",
		"sys":     "home = @usr/bin\nInclude-System-Site-Packages = True\nversion = 3.12.4\n",
		"nokey":   "home = @usr/bin\n",
		"debvenv": "home = @deb/bin\ninclude-system-site-packages = true\n",
	} {
		filetree.Put(t, root, venv+"/pyvenv.cfg", []byte(strings.ReplaceAll(cfg, "@", root+"/")))
		filetree.Put(t, root, venv+"/bin/python3", []byte("\x7fELF"))
	}
	const user, usr = "home/.local/lib/python3.12/site-packages", "usr/lib/python3.12/site-packages"
	tests := []struct {
		name string
		env  map[string]string // "@" is the tree's root
		want []string          // searched, in order
		off  string            // why the user site is not searched
	}{
		{"an installation: the user site first", map[string]string{"PATH": "@usr/bin"}, []string{user, usr}, ""},
		{"PYTHONNOUSERSITE=1", map[string]string{"PATH": "@usr/bin", "PYTHONNOUSERSITE": "1"}, []string{usr}, "$PYTHONNOUSERSITE=1 turns the user site off"},
		{"PYTHONNOUSERSITE=x", map[string]string{"PATH": "@usr/bin", "PYTHONNOUSERSITE": "x"}, []string{usr}, "$PYTHONNOUSERSITE=x turns the user site off"},
		{"PYTHONNOUSERSITE=0 keeps it", map[string]string{"PATH": "@usr/bin", "PYTHONNOUSERSITE": "0"}, []string{user, usr}, ""},
		{"a venv without system site packages: no user site", map[string]string{"VIRTUAL_ENV": "@iso", "PATH": "@iso/bin"},
			[]string{"iso/lib/python3.12/site-packages"}, "Python leaves the user site out of a venv without system site packages (@iso/pyvenv.cfg)"},
		{"the same venv on PATH only", map[string]string{"PATH": "@iso/bin"},
			[]string{"iso/lib/python3.12/site-packages"}, "Python leaves the user site out of a venv without system site packages (@iso/pyvenv.cfg)"},
		{"a venv with system site packages: its own, the user site, its base's", map[string]string{"VIRTUAL_ENV": "@sys"},
			[]string{"sys/lib/python3.12/site-packages", user, usr}, ""},
		{"no include-system-site-packages: included", map[string]string{"VIRTUAL_ENV": "@nokey"},
			[]string{"nokey/lib/python3.12/site-packages", user, usr}, ""},
		{"a venv of Debian's Python: its dist-packages", map[string]string{"VIRTUAL_ENV": "@debvenv", "PYTHONNOUSERSITE": "1"},
			[]string{"debvenv/lib/python3.11/site-packages", "deb/local/lib/python3.11/dist-packages", "deb/lib/python3/dist-packages", "deb/lib/python3.11/dist-packages"},
			"$PYTHONNOUSERSITE=1 turns the user site off"},
		{"conda: the user site first", map[string]string{"CONDA_PREFIX": "@conda", "PATH": "@usr/bin"},
			[]string{user, "conda/lib/python3.12/site-packages", usr}, ""},
		{"no Python: the user site alone", map[string]string{"PATH": "@nowhere"}, []string{user}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"HOME": root + "/home"}
			for k, v := range tt.env {
				env[k] = strings.ReplaceAll(v, "@", root+"/")
			}
			sites := Layout{}.Discover(nil, func(k string) string { return env[k] }, &observe.Recorder{})
			var want []string
			for _, w := range tt.want {
				want = append(want, filepath.Join(root, w))
			}
			if got := Searched(sites); !slices.Equal(got, want) {
				t.Fatalf("searched %q\nwant     %q", got, want)
			}
			off := ""
			for _, s := range sites {
				if s.Dir == filepath.Join(root, user) && s.Off != "" {
					off = s.Off
				}
			}
			if off != strings.ReplaceAll(tt.off, "@", root+"/") {
				t.Fatalf("the user site is off for %q, want %q", off, tt.off)
			}
		})
	}
}
