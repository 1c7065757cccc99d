package main

import (
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The --json conventions: a command that answers per name prints one object per line; one that
// answers as a whole prints one document. Every command with --json is in one of the two.
var (
	jsonLinesCommands    = []string{"find", "load", "list", "plugins", "config"}
	jsonDocumentCommands = []string{"explain", "driver", "packs", "doctor"}
)

// TestJSON_convention: each command's --json says which convention it follows, and its output
// follows it; pathfinder's help and README say the same of the same commands.
func TestJSON_convention(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	empty := t.TempDir()
	args := map[string][]string{ // names that are not found, so that nothing is loaded
		"find": {"find", "nvfatbin", "nosuchlib", "--json"}, "load": {"load", "nvfatbin", "nosuchlib", "--json"},
		"list": {"list", "--json"}, "plugins": {"plugins", "--json"}, "config": {"config", "--json"},
		"explain": {"explain", "nvfatbin", "--json"}, "driver": {"driver", "--root", empty, "--json"},
		"packs": {"packs", "--json"}, "doctor": {"doctor", "--root", empty, "--json"},
	}
	var textOnly []string
	for _, c := range commands {
		fs, _, _ := c.flagSet(new(string))
		f := fs.Lookup("json")
		isLines, isDoc := slices.Contains(jsonLinesCommands, c.name), slices.Contains(jsonDocumentCommands, c.name)
		switch {
		case f == nil:
			if isLines || isDoc {
				t.Errorf("%s has no --json", c.name)
			}
			textOnly = append(textOnly, c.name)
			continue
		case isLines && !strings.HasPrefix(f.Usage, "print one JSON object per line, one per "):
			t.Errorf("%s --json says %q, want one JSON object per line", c.name, f.Usage)
		case isDoc && !strings.HasPrefix(f.Usage, "print one JSON document"):
			t.Errorf("%s --json says %q, want one JSON document", c.name, f.Usage)
		case !isLines && !isDoc:
			t.Fatalf("%s has --json but follows no convention here", c.name)
		}
		out, errOut, _ := e.run(t, args[c.name]...)
		if out == "" {
			t.Fatalf("%s --json printed nothing: %s", c.name, errOut)
		}
		if isLines {
			objects := jsonLines[map[string]any](t, out)
			if c.name == "find" || c.name == "load" {
				if len(objects) != 2 || objects[0]["name"] != "nvfatbin" || objects[1]["name"] != "nosuchlib" {
					t.Errorf("%s: one line per name, in order: %s", c.name, out)
				}
			}
			continue
		}
		dec := json.NewDecoder(strings.NewReader(out))
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			t.Errorf("%s --json: %v\n%s", c.name, err, out)
		}
		if _, err := dec.Token(); err != io.EOF || strings.Count(out, "\n") < 3 {
			t.Errorf("%s --json is not one indented document:\n%s", c.name, out)
		}
	}
	// pathfinder --help and README say so, naming the same commands.
	sentence := "--json: " + commaAnd(jsonLinesCommands) + " print one JSON object per line, one per name (library, step or key); " +
		commaAnd(jsonDocumentCommands) + " print one JSON document. config check FILE --json prints one object, for the file: file, ok, problems. " +
		commaAnd(textOnly) + " print text only."
	help, _, _ := e.run(t, "--help")
	if !strings.Contains(strings.Join(strings.Fields(help), " "), sentence) {
		t.Errorf("pathfinder --help lacks %q", sentence)
	}
	if !strings.Contains(readme(t), sentence) {
		t.Errorf("README lacks %q", sentence)
	}
}

// TestJSON_checkAndDoctor: config check FILE and doctor speak JSON as the help says, with the same
// exit status as their text.
func TestJSON_checkAndDoctor(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	dir := t.TempDir()
	good := write(t, filepath.Join(dir, "good.toml"), []byte("[search]\norder = [\"wheels\"]\n"))
	bad := write(t, filepath.Join(dir, "bad.toml"), []byte("[serch]\norder = [\"wheels\"]\n"))
	for _, tt := range []struct {
		file     string
		ok       bool
		problems int
		code     int
	}{{good, true, 0, exitOK}, {bad, false, 1, exitUsage}} {
		_, _, textCode := e.run(t, "config", "check", tt.file)
		out, errOut, code := e.run(t, "config", "check", tt.file, "--json")
		lines := jsonLines[struct {
			File     string
			OK       bool
			Problems []string
		}](t, out)
		if code != tt.code || textCode != code || errOut != "" || len(lines) != 1 || lines[0].File != tt.file || lines[0].OK != tt.ok || len(lines[0].Problems) != tt.problems {
			t.Errorf("config check %s --json: exit %d (text %d), %q %q", tt.file, code, textCode, out, errOut)
		}
	}
	_, _, textCode := e.run(t, "doctor", "--root", dir)
	out, errOut, code := e.run(t, "doctor", "--root", dir, "--json", "--all")
	var doc struct {
		Libraries string
		Driver    struct{ State string }
		Problems  []struct{ Problem, Fix string }
		Found     []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitNotFound || textCode != code || errOut != "" {
		t.Fatalf("doctor --json: exit %d (text %d), %v: %s %s", code, textCode, err, out, errOut)
	}
	if !strings.HasPrefix(doc.Libraries, "0 of ") || doc.Driver.State != "no-driver" || len(doc.Problems) == 0 || doc.Problems[0].Fix == "" || len(doc.Found) < 50 {
		t.Errorf("doctor --json: %+v", doc)
	}
}

func commaAnd(s []string) string {
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// TestList_namesOnce: list --names gives each name once (cudart is a library and a header set), and
// with --kind only that kind's.
func TestList_namesOnce(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	out, _, code := e.run(t, "list", "--names")
	names := strings.Fields(out)
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("list --names gives %s twice", n)
		}
		seen[n] = true
	}
	if code != exitOK || !seen["cudart"] || !seen["cccl"] || !seen["nvcc"] {
		t.Fatalf("list --names: exit %d %q", code, out)
	}
	out, _, _ = e.run(t, "list", "--names", "--kind", "header-dir")
	if headers := strings.Fields(out); !slices.Contains(headers, "cccl") || slices.Contains(headers, "ptxas") { // ptxas is only a binary
		t.Errorf("list --names --kind header-dir: %q", out)
	}
	all, _, _ := e.run(t, "list", "--kind", "header-dir", "--json")
	if n := len(jsonLines[map[string]any](t, all)); n != strings.Count(out, "\n") {
		t.Errorf("%d header sets in --json, %d in --names", n, strings.Count(out, "\n"))
	}
}

// TestPlugins_hostSteps: plugins lists already-loaded and system first, as steps of the host, with
// what they look at and the orders that name them, in text and in --json.
func TestPlugins_hostSteps(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	config := write(t, t.TempDir()+"/p.toml", []byte("[search]\norder = [\"wheels\", \"system\"]\n\n[library.nvml]\norder = [\"system\"]\n"))
	out, errOut, code := e.run(t, "plugins", "--config", config)
	if code != exitOK {
		t.Fatalf("plugins: exit %d %s", code, errOut)
	}
	want := `already-loaded
  source        host
  looks at      the libraries this process has loaded already, by file name (dynamic libraries only)
  used in       library.cuda.order, library.nvcudla.order

system
  source        host
  looks at      the OS loader's own search (on Linux: LD_LIBRARY_PATH, /etc/ld.so.cache, the default directories); find asks a model of it and loads nothing, load asks the loader (dynamic libraries only)
  used in       search.order, library.cuda.order, library.nvcudla.order, library.nvml.order

canary
  source        builtin:canary
`
	if !strings.HasPrefix(out, want) {
		t.Fatalf("plugins:\n%s\nwant it to start with\n%s", out, want)
	}
	out, _, _ = e.run(t, "plugins", "--config", config, "--json")
	steps := jsonLines[struct {
		Name, Source string
		LooksAt      string   `json:"looks_at"`
		UsedIn       []string `json:"used_in"`
	}](t, out)
	if len(steps) < 7 || steps[0].Name != "already-loaded" || steps[0].Source != "host" || steps[1].Name != "system" ||
		steps[1].Source != "host" || !strings.Contains(steps[1].LooksAt, "ld.so.cache") || len(steps[1].UsedIn) != 4 || steps[2].Source != "builtin:canary" {
		t.Fatalf("plugins --json: %+v", steps)
	}
	if !strings.HasPrefix(out, `{"name":"already-loaded","source":"host","looks_at":`) {
		t.Errorf("already-loaded line: %s", out)
	}
}

// TestFindTogether_json: find --all-from-one-toolkit --json prints a line per name, as find does,
// whether the set is found in one root or not.
func TestFindTogether_json(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	cuda, site := t.TempDir(), t.TempDir()
	gccLib(t, filepath.Join(cuda, "lib64/libcudart.so.12"), "libcudart.so.12")
	gccLib(t, filepath.Join(cuda, "lib64/libnvrtc.so.12"), "libnvrtc.so.12")
	gccLib(t, filepath.Join(site, "nvidia/cu13/lib/libnvJitLink.so.13"), "libnvJitLink.so.13")
	e.Setenv("CUDA_HOME", cuda)
	e.Setenv("PATHFINDER_SITE_PACKAGES", site)
	var all strings.Builder
	for _, tt := range []struct {
		names []string
		code  int
	}{
		{[]string{"cudart", "nvrtc"}, exitOK},
		{[]string{"cudart", "nvJitLink"}, exitNotFound},
		{[]string{"cudart", "nosuchlib"}, exitNotFound},
		{[]string{"cudart", "cufft"}, exitNotFound}, // its attempts are this machine's: not in the golden file
	} {
		out, errOut, code := e.run(t, append([]string{"find", "--all-from-one-toolkit", "--json"}, tt.names...)...)
		lines := jsonLines[map[string]any](t, out)
		if code != tt.code || len(lines) != len(tt.names) {
			t.Fatalf("%v: exit %d, %d lines; want %d, one per name:\n%s%s", tt.names, code, len(lines), tt.code, out, errOut)
		}
		for i, l := range lines {
			if l["name"] != tt.names[i] || l["kind"] != "dynamic-lib" || (l["path"] == nil) == (l["error"] == nil) {
				t.Errorf("%v: line %d is %v", tt.names, i, l)
			}
		}
		if !slices.Contains(tt.names, "cufft") {
			all.WriteString(out)
		}
	}
	golden(t, "find-together.json", strings.NewReplacer(cuda, "$CUDA", site, "$SITE").Replace(all.String()))
	if want := "error is not-found, refused (a file was found and failed validation: message names it and why), load-failed (the loader would not load the file found: message gives the loader's words), incompatible (files were found, and none is of a CUDA the driver runs, or of the CUDA major the answers before it came from: message names the driver, the newest CUDA it runs and each file passed over with why), unknown, not-available, or, for find --all-from-one-toolkit, mixed-toolkits (no one root holds every name of one CUDA major: message names each root and what it lacks, or each name's CUDA)"; !strings.Contains(readme(t), want) {
		t.Errorf("README lacks %q", want)
	}
}
