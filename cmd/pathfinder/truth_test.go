package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// The one line a user reads says what really happened: these run the built binary, in a process
// of its own, where the loader's environment is what the test sets.

// markerLib builds a shared object whose constructor creates marker: its code ran in the process.
func markerLib(t *testing.T, path, soname, marker string) {
	t.Helper()
	elfso.Build(t, path, soname, fmt.Sprintf(`#include <fcntl.h>
__attribute__((constructor)) static void ran(void) { open(%q, O_CREAT|O_WRONLY, 0644); }
int cuDriverGetVersion(int *v) { *v = 0; return 34; }
`, marker))
}

// TestStubNeverHandedOut: a build's stubs directory first on LD_LIBRARY_PATH (libcuda.so.1 linked to
// the stub, as container builds do) is passed over for the real library after it; with no real one,
// the error names the stub and why; the stub's code never runs either way.
func TestStubNeverHandedOut(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := noCgoBinary(t)
	e := isolate(t)
	dir, marks := t.TempDir(), t.TempDir()
	stubs := filepath.Join(dir, "cuda", "lib64", "stubs")
	markerLib(t, filepath.Join(stubs, "libcuda.so"), "libcuda.so.1", filepath.Join(marks, "stub"))
	filetree.Symlink(t, "libcuda.so", filepath.Join(stubs, "libcuda.so.1"))
	real := filepath.Join(dir, "driver", "libcuda.so.1")
	markerLib(t, real, "libcuda.so.1", filepath.Join(marks, "driver"))

	env := []string{"LD_LIBRARY_PATH=" + stubs + ":" + filepath.Dir(real)}
	for _, cmd := range []string{"find", "load"} {
		out, errOut, code := e.runBin(t, bin, env, cmd, "cuda", "--json")
		var lib struct{ Path, FoundVia string }
		json.Unmarshal([]byte(out), &lib)
		if code != exitOK || lib.Path != real {
			t.Fatalf("%s cuda: exit %d %s%s; want %s", cmd, code, out, errOut, real)
		}
	}
	out, _, _ := e.runBin(t, bin, env, "explain", "cuda")
	want := "the system loader found a stub at " + filepath.Join(stubs, "libcuda.so.1") + " (LD_LIBRARY_PATH holds a stubs directory)"
	if !strings.Contains(out, want) {
		t.Fatalf("explain cuda:\n%s\nwant it to say %q", out, want)
	}

	env = []string{"LD_LIBRARY_PATH=" + stubs}
	out, _, code := e.runBin(t, bin, env, "load", "cuda", "--json")
	var fail failure
	json.Unmarshal([]byte(out), &fail)
	if code != exitNotFound || fail.Error != "refused" || !strings.Contains(fail.Message, want) {
		t.Fatalf("load cuda with only the stub: exit %d %s; want a refusal saying %q", code, out, want)
	}
	if _, err := os.Stat(filepath.Join(marks, "stub")); err == nil {
		t.Fatal("the stub's code ran")
	}
}

// TestOneLiners: what find and load print when a file is found but refused, found but not
// loadable, or not found with a kind or target of its own.
func TestOneLiners(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := noCgoBinary(t)
	e := isolate(t)
	root, site := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(root, "lib64"), 0o755)
	bad := filepath.Join(root, "lib64", "libcudart.so.12")
	os.WriteFile(bad, []byte("not a library"), 0o644)
	out, _, code := e.runBin(t, bin, []string{"CUDA_PATH=" + root}, "find", "cudart", "--json")
	var fail failure
	json.Unmarshal([]byte(out), &fail)
	if code != exitNotFound || fail.Error != "refused" || !strings.HasPrefix(fail.Message, "found "+bad+` for "cudart" but refused it: not an ELF file`) {
		t.Fatalf("find cudart: exit %d %s", code, out)
	}

	// nvjpeg needs a library that is nowhere: find tells beforehand, load fails with the loader's words.
	gone := filepath.Join(t.TempDir(), "libgone.so.1")
	gccLib(t, gone, "libgone.so.1")
	lib := filepath.Join(site, "nvidia/cu13/lib/libnvjpeg.so.13")
	gccLib(t, lib, "libnvjpeg.so.13", "-Wl,--no-as-needed", gone)
	os.Remove(gone)
	env := []string{"PATHFINDER_SITE_PACKAGES=" + site}
	out, errOut, code := e.runBin(t, bin, env, "find", "nvjpeg")
	if code != exitOK || out != lib+"\n" || !strings.Contains(errOut, "pathfinder: warning: nvjpeg: a load of "+lib+" would fail: it needs libgone.so.1, which the loader would not find") {
		t.Fatalf("find nvjpeg: exit %d %q %q", code, out, errOut)
	}
	_, errOut, code = e.runBin(t, bin, env, "load", "nvjpeg")
	if code != exitNotFound || !strings.HasPrefix(errOut, "pathfinder: found "+lib+` for "nvjpeg" but could not load it: `) || !strings.Contains(errOut, "libgone.so.1: cannot open shared object file") {
		t.Fatalf("load nvjpeg: exit %d %q", code, errOut)
	}
	out, _, _ = e.runBin(t, bin, env, "explain", "nvjpeg")
	if !strings.Contains(out, "but a load would fail: it needs libgone.so.1") {
		t.Fatalf("explain nvjpeg:\n%s", out)
	}
	if !strings.Contains(readme(t), "Exit status: 0 when everything asked for was found (for find, also a file the loader would refuse: it prints the path, warns on stderr and says why in load_problem, as it loads nothing), 1 when something was not found, found but refused, not loadable by load,") {
		t.Error("README's exit status does not say what find and load do here")
	}

}

// TestExplainHint_onlyFindAndLoad: find's and load's lines point at explain, with the flags that
// show the same search; explain's own answer, and --json's message, do not point at themselves.
func TestExplainHint_onlyFindAndLoad(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	tests := []struct {
		args []string
		hint string // in stderr; "" for none
	}{
		{[]string{"find", "cccl", "--kind", "header-dir"}, "(pathfinder explain cccl --kind header-dir lists them)"},
		{[]string{"find", "cudnn", "--target", "windows/amd64"}, "(pathfinder explain cudnn --target windows/amd64 lists them)"},
		{[]string{"load", "cufft"}, "(pathfinder explain cufft lists them)"},
		{[]string{"explain", "cufft"}, ""},
		{[]string{"explain", "cccl", "--kind", "header-dir"}, ""},
		{[]string{"find", "cufft", "--json"}, ""},
	}
	for _, tt := range tests {
		out, errOut, code := e.run(t, tt.args...)
		if code != exitNotFound {
			t.Fatalf("%v: exit %d %s %s", tt.args, code, out, errOut)
		}
		if tt.hint != "" && !strings.HasSuffix(errOut, tt.hint+"\n") {
			t.Errorf("%v: %q lacks the hint %s", tt.args, errOut, tt.hint)
		}
		if tt.hint == "" && strings.Contains(out+errOut, "lists them") {
			t.Errorf("%v: points at itself:\n%s%s", tt.args, out, errOut)
		}
	}
}

// TestREADME_kindNames: the names README gives as examples of each kind are names of that kind,
// and the name of a bitcode library's file finds what it is.
func TestREADME_kindNames(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	m := regexp.MustCompile(`--kind header-dir # also binary \(([^)]*)\), static-lib \(([^)]*)\), bitcode \(([^):]*)`).FindStringSubmatch(readme(t))
	if m == nil {
		t.Fatal("README's find --kind line not found")
	}
	for i, kind := range []string{"binary", "static-lib", "bitcode"} {
		for _, name := range strings.Split(m[i+1], ", ") {
			if name == "..." {
				continue
			}
			_, errOut, code := e.run(t, "find", name, "--kind", kind)
			if code == exitUsage || strings.Contains(errOut, "unknown") {
				t.Errorf("README: %s is a %s; find says: exit %d %s", name, kind, code, errOut)
			}
		}
	}
	_, errOut, _ := e.run(t, "find", "libdevice", "--kind", "bitcode")
	if want := `pathfinder: unknown bitcode library "libdevice": "libdevice" is a bitcode library named "device"` + "\n"; errOut != want {
		t.Errorf("find libdevice --kind bitcode: %q, want %q", errOut, want)
	}
}

// TestExplain_stopsAtTheFirstHit: explain shows the steps run, which end at the step that finds the
// library, as README says; a library found through CUDA_HOME is labelled CUDA_HOME.
func TestExplain_stopsAtTheFirstHit(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	root := t.TempDir()
	gccLib(t, filepath.Join(root, "lib64", "libcudart.so.12"), "libcudart.so.12")
	e.Setenv("CUDA_HOME", root)
	out, _, code := e.run(t, "explain", "cudart")
	step := regexp.MustCompile(`(?m)^ ?\d+\. (\S+)`)
	var ran []string
	for _, m := range step.FindAllStringSubmatch(out, -1) {
		ran = append(ran, m[1])
	}
	if code != exitOK || len(ran) == 0 || ran[len(ran)-1] != "envroots" || !strings.Contains(out, "(found via CUDA_HOME)") {
		t.Fatalf("explain cudart: exit %d, steps run %v; want them to end at envroots, found via CUDA_HOME:\n%s", code, ran, out)
	}
	out, _, _ = e.run(t, "explain", "cudnn")
	if n := len(step.FindAllString(out, -1)); n != 7 {
		t.Errorf("explain cudnn, found nowhere: %d steps shown, want all 7:\n%s", n, out)
	}
	for _, want := range []string{
		"pathfinder explain cudnn # the search step by step, up to the step that finds it (all when none does)",
		"cuda.pathfinder gives a library found through CUDA_HOME the label CUDA_PATH, one label for both variables; pathfinder labels it CUDA_HOME, the variable it used.",
	} {
		if !strings.Contains(squeezeSpaces(readme(t)), want) {
			t.Errorf("README lacks %q", want)
		}
	}
}
