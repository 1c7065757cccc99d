package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/compat"
	"github.com/pathfinder-dev/pathfinder/internal/cudaversion"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/fakepe"
)

// compatSite is a site-packages with the CUDA 13 and the CUDA 12 runtime wheels, each with the
// dist-info pip writes.
func compatSite(t *testing.T) string {
	t.Helper()
	site := t.TempDir()
	for _, w := range []struct{ rel, soname, dist, version string }{
		{"nvidia/cu13/lib", "libcudart.so.13", "nvidia-cuda-runtime", "13.0.96"},
		{"nvidia/cuda_runtime/lib", "libcudart.so.12", "nvidia-cuda-runtime-cu12", "12.4.127"},
	} {
		rel := w.rel + "/" + w.soname
		gccLib(t, filepath.Join(site, rel), w.soname)
		info := filepath.Join(site, strings.ReplaceAll(w.dist, "-", "_")+"-"+w.version+".dist-info")
		write(t, filepath.Join(info, "METADATA"), []byte("Metadata-Version: 2.1\nName: "+w.dist+"\nVersion: "+w.version+"\n"))
		write(t, filepath.Join(info, "RECORD"), []byte(rel+",sha256=x,1\n"))
	}
	return site
}

// TestExplain_compatibility: explain says what the check knew, each candidate's CUDA and where it
// was read, and why one was passed over; with no driver, one note says nothing was checked.
func TestExplain_compatibility(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	site := compatSite(t)
	e.Setenv("PATHFINDER_SITE_PACKAGES", site)
	e.Setenv("PATHFINDER_COMPATIBILITY", "strict")
	e.Setenv("PATHFINDER_DRIVER_VERSION", "550.54.14")
	out, _, code := e.run(t, "explain", "cudart")
	for _, want := range []string{
		"    compatibility: strict; driver 550.54.14 runs CUDA 12.4 at most\n",
		"      ✗ " + site + "/nvidia/cu13/lib/libcudart.so.13  passed over: CUDA 13.0: driver 550.54.14 runs CUDA 12.4 at most (CUDA 13.0 needs 580.65.06)\n",
		"        CUDA 13.0, version 13.0.96, from the wheel: ",
		"      ✓ " + site + "/nvidia/cuda_runtime/lib/libcudart.so.12  (found via site-packages)\n",
		"        CUDA 12.4, version 12.4.127, from the wheel: ",
		"(runs: full)\n",
	} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("explain: exit %d, no %q in:\n%s", code, want, out)
		}
	}

	// No driver to check against: the search says so once, and its candidates are taken in order.
	e.Setenv("PATHFINDER_DRIVER_VERSION", "")
	if _, err := os.Stat("/sys/module/nvidia"); err == nil {
		t.Skip("this machine has an NVIDIA driver: the rest is for one without")
	}
	out, _, _ = e.run(t, "explain", "cudart")
	if strings.Count(out, "no driver check") != 1 || !strings.Contains(out, "✓ "+site+"/nvidia/cu13/lib/libcudart.so.13") {
		t.Errorf("explain without a driver: want one note and the first candidate taken:\n%s", out)
	}
}

// TestFind_incompatible: nothing that runs is exit 1 with the incompatible code, in text and JSON;
// a bad mode is exit 2 naming the valid ones, from the environment and from the config.
func TestFind_incompatible(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	site := t.TempDir()
	gccLib(t, filepath.Join(site, "nvidia/cu13/lib/libcudart.so.13"), "libcudart.so.13")
	e.Setenv("PATHFINDER_SITE_PACKAGES", site)
	e.Setenv("PATHFINDER_COMPATIBILITY", "strict")
	e.Setenv("PATHFINDER_DRIVER_VERSION", "550.54.14")
	_, errOut, code := e.run(t, "find", "cudart")
	if code != exitNotFound || !strings.Contains(errOut, `pathfinder: nothing found for "cudart" runs here: driver 550.54.14 runs CUDA 12.4 at most; passed over `+site) ||
		!strings.Contains(errOut, "pathfinder explain cudart shows each candidate's CUDA") {
		t.Errorf("find: exit %d, stderr %q", code, errOut)
	}
	out, _, code := e.run(t, "load", "cudart", "--json")
	if l := jsonLines[failure](t, out); code != exitNotFound || l[0].Error != "incompatible" || len(l[0].Attempts) == 0 {
		t.Errorf("load --json: exit %d, %s", code, out)
	}

	e.Setenv("PATHFINDER_COMPATIBILITY", "strickt")
	if _, errOut, code := e.run(t, "find", "cudart"); code != exitUsage || !strings.Contains(errOut, `unknown compatibility mode "strickt" (strict, best-effort or off)`) {
		t.Errorf("a bad PATHFINDER_COMPATIBILITY: exit %d, %q", code, errOut)
	}
	e.Setenv("PATHFINDER_COMPATIBILITY", "")
	config := filepath.Join(t.TempDir(), "p.toml")
	write(t, config, []byte("[library.cudart]\ncompatibility = \"loose\"\n"))
	if _, errOut, code := e.run(t, "find", "cudart", "--config", config); code != exitUsage || !strings.Contains(errOut, config+`:2:1: library.cudart.compatibility: unknown compatibility mode "loose"`) {
		t.Errorf("a bad [library.cudart] compatibility: exit %d, %q", code, errOut)
	}
}

// TestDocs_compatibility: docs/compatibility.md's tables name what the code has: each source of a
// version, and each mode.
func TestDocs_compatibility(t *testing.T) {
	t.Parallel()
	doc := repoFile(t, "docs/compatibility.md")
	rows := func(header string) []string {
		_, table, _ := strings.Cut(doc, header)
		var names []string
		for _, line := range strings.Split(table, "\n")[2:] {
			if !strings.HasPrefix(line, "| `") {
				break
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			names = append(names, name)
		}
		return names
	}
	var sources []string
	for _, s := range cudaversion.Sources() {
		sources = append(sources, string(s))
	}
	if got := rows("| `version_from` | what it reads |"); !slices.Equal(got, sources) {
		t.Errorf("docs/compatibility.md lists the sources %v; the code asks %v, in that order", got, sources)
	}
	var modes []string
	for _, m := range compat.Modes {
		modes = append(modes, string(m))
	}
	if got := rows("| mode | what it passes over |"); !slices.Equal(got, modes) {
		t.Errorf("docs/compatibility.md lists the modes %v; the code has %v", got, modes)
	}
}

// TestFind_cudaOfEveryKind: header sets, binaries, static and bitcode libraries say which CUDA they
// belong to as libraries do, and a Windows DLL is dated by its VS_VERSIONINFO.
func TestFind_cudaOfEveryKind(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	root := t.TempDir()
	write(t, filepath.Join(root, "version.json"), []byte(`{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "cuda_nvcc": {"name": "CUDA NVCC", "version": "12.4.131"}}`))
	nvcc := filepath.Join(root, "bin", "nvcc")
	write(t, nvcc+".c", []byte("int main(void) { return 0; }\n"))
	if out, err := exec.Command("gcc", "-o", nvcc, nvcc+".c").CombinedOutput(); err != nil {
		t.Skipf("gcc: %v\n%s", err, out)
	}
	write(t, filepath.Join(root, "include", "cuda_runtime.h"), nil)
	write(t, filepath.Join(root, "lib64", "libcudadevrt.a"), []byte("!<arch>\n"))
	write(t, filepath.Join(root, "nvvm", "libdevice", "libdevice.10.bc"), []byte("BC\xc0\xde"))
	e.Setenv("CUDA_HOME", root)
	for _, c := range []struct{ kind, name, version string }{
		{"binary", "nvcc", "12.4.131"}, {"header-dir", "cudart", ""}, {"static-lib", "cudadevrt", ""}, {"bitcode", "device", ""},
	} {
		out, errOut, code := e.run(t, "find", c.name, "--kind", c.kind, "--json")
		l := jsonLines[map[string]any](t, out)[0]
		if code != exitOK || l["cuda"] != "12.4" || l["version_from"] != "toolkit" || (c.version != "") != (l["version"] == c.version) {
			t.Errorf("find %s --kind %s: exit %d, %s %s", c.name, c.kind, code, out, errOut)
		}
	}

	site := t.TempDir()
	dll := fakepe.DLLWithVersion(0x8664, fakepe.VersionInfo{FileVersion: [4]uint16{6, 14, 11, 12080}, ProductVersion: [4]uint16{6, 14, 11, 12080}})
	write(t, filepath.Join(site, "nvidia", "cuda_runtime", "bin", "cudart64_12.dll"), dll)
	e.Setenv("PATHFINDER_SITE_PACKAGES", site)
	out, _, code := e.run(t, "find", "cudart", "--target", "windows/amd64", "--json")
	if l := jsonLines[map[string]any](t, out)[0]; code != exitOK || l["cuda"] != "12.8" || l["version_from"] != "version-info" {
		t.Errorf("find cudart --target windows/amd64: exit %d, %s", code, out)
	}
}
