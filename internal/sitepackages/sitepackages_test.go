package sitepackages

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// put writes data at root/rel, executable, creating directories.
func put(t *testing.T, root, rel string, data []byte) string {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

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
		put(t, root, rel, []byte("\x7fELF"))
	}
	tests := []struct {
		name    string
		windows bool
		dirs    []string
		files   []string          // executables
		env     map[string]string // values relative to the tree's root where they start with "@"
		want    []string          // relative to the tree's root
	}{
		{
			name: "windows venv, conda and user site", windows: true,
			dirs: []string{"venv/Lib/site-packages", "venv/lib/python3.12/site-packages", "conda/Lib/site-packages",
				"appdata/Python/Python39/site-packages", "appdata/Python/Python312/site-packages", "appdata/Python/Python313/other"},
			env:  map[string]string{"VIRTUAL_ENV": "@venv", "CONDA_PREFIX": "@conda", "APPDATA": "@appdata"},
			want: []string{"venv/Lib/site-packages", "conda/Lib/site-packages", "appdata/Python/Python312/site-packages", "appdata/Python/Python39/site-packages"},
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
			env:  map[string]string{"VIRTUAL_ENV": "@venv", "HOME": "@home", "APPDATA": "@venv"},
			want: []string{"venv/lib/python3.13/site-packages", "venv/lib/python3.11/site-packages", "home/.local/lib/python3.12/site-packages"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := mk(t, tt.dirs...)
			for _, f := range tt.files {
				exe(t, root, f)
			}
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = strings.NewReplacer("@", root+"/", "|", string(os.PathListSeparator)).Replace(v)
			}
			rec := &observe.Recorder{}
			got := Layout{Windows: tt.windows}.Discover(nil, func(k string) string { return env[k] }, rec)
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
	put(t, pyenv, "shims/python3", []byte("#!/usr/bin/env bash\nexec pyenv exec python3 \"$@\"\n"))
	for _, v := range []string{"3.11.7", "3.12.4"} {
		put(t, pyenv, "versions/"+v+"/bin/python3", []byte("\x7fELF"))
		os.MkdirAll(filepath.Join(pyenv, "versions", v, "lib", "python"+v[:4], "site-packages"), 0o755)
	}
	put(t, pyenv, "version", []byte("3.11.7\n"))
	sys := filepath.Join(root, "usr")
	put(t, sys, "bin/python3", []byte("\x7fELF"))
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
			got := Layout{}.Discover(nil, func(k string) string { return env[k] }, &observe.Recorder{})
			if (tt.want == "") != (len(got) == 0) || tt.want != "" && got[0] != tt.want {
				t.Fatalf("discover = %q; want %q", got, tt.want)
			}
		})
	}
}
