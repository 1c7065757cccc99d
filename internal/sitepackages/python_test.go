package sitepackages

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/observe"
)

// pythonPaths asks python which site-packages directories it searches, in the order its sys.path
// holds them: the sites of site.getsitepackages() and, when site.ENABLE_USER_SITE, the user site.
func pythonPaths(t *testing.T, python string, env []string) []string {
	t.Helper()
	cmd := exec.Command(python, "-c", `import json, site, sys
sites = set(site.getsitepackages())
if site.ENABLE_USER_SITE:
    sites.add(site.getusersitepackages())
print(json.dumps([p for p in sys.path if p in sites]))`)
	cmd.Env = env
	out, err := cmd.Output()
	var paths []string
	if err != nil || json.Unmarshal(out, &paths) != nil {
		t.Fatalf("%s: %v: %s", python, err, out)
	}
	return paths
}

// TestDiscover_realPython holds discovery to what real Pythons do: each python3 here (the one on
// PATH, past a pyenv shim, and Debian's /usr/bin/python3), outside a venv and in venvs made by
// python3 -m venv with and without --system-site-packages, with a user site under a test HOME, with
// and without PYTHONNOUSERSITE. Discovery must name the same directories in the same order.
func TestDiscover_realPython(t *testing.T) {
	if testing.Short() {
		t.Skip("makes venvs")
	}
	var pythons []string
	if out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output(); err == nil {
		pythons = append(pythons, strings.TrimSpace(string(out)))
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil && !slices.Contains(pythons, "/usr/bin/python3") {
		pythons = append(pythons, "/usr/bin/python3")
	}
	if len(pythons) == 0 {
		t.Skip("no python3")
	}
	for _, python := range pythons {
		t.Run(python, func(t *testing.T) {
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			version, err := exec.Command(python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
			if err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Join(home, ".local", "lib", "python"+strings.TrimSpace(string(version)), "site-packages"), 0o755)
			venvs := map[string]string{}
			for name, args := range map[string][]string{"isolated": nil, "system": {"--system-site-packages"}} {
				venvs[name] = filepath.Join(dir, name)
				if out, err := exec.Command(python, append([]string{"-m", "venv", "--without-pip", venvs[name]}, args...)...).CombinedOutput(); err != nil {
					t.Fatalf("venv: %v\n%s", err, out)
				}
			}
			for _, tt := range []struct {
				name, exe string
				env       map[string]string
			}{
				{"installation", python, map[string]string{"PATH": filepath.Dir(python)}},
				{"installation, PYTHONNOUSERSITE", python, map[string]string{"PATH": filepath.Dir(python), "PYTHONNOUSERSITE": "1"}},
				{"venv", venvs["isolated"] + "/bin/python3", map[string]string{"VIRTUAL_ENV": venvs["isolated"], "PATH": venvs["isolated"] + "/bin"}},
				{"venv --system-site-packages", venvs["system"] + "/bin/python3", map[string]string{"VIRTUAL_ENV": venvs["system"], "PATH": venvs["system"] + "/bin"}},
				{"venv --system-site-packages, PYTHONNOUSERSITE", venvs["system"] + "/bin/python3", map[string]string{"VIRTUAL_ENV": venvs["system"], "PATH": venvs["system"] + "/bin", "PYTHONNOUSERSITE": "1"}},
			} {
				t.Run(tt.name, func(t *testing.T) {
					env := map[string]string{"HOME": home}
					for k, v := range tt.env {
						env[k] = v
					}
					var list []string
					for k, v := range env {
						list = append(list, k+"="+v)
					}
					want := pythonPaths(t, tt.exe, list)
					got := Searched(Layout{}.Discover(nil, func(k string) string { return env[k] }, &observe.Recorder{}))
					if !slices.Equal(got, want) {
						t.Fatalf("discovery %q\npython    %q", got, want)
					}
				})
			}
		})
	}
}
