package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func TestFind_json(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	site := t.TempDir()
	gccLib(t, filepath.Join(site, "nvidia/cu13/lib/libcudart.so.13"), "libcudart.so.13")
	e.Setenv("PATHFINDER_SITE_PACKAGES", site)
	// Flags after the names, two names, one unknown: one JSON line each, exit 1.
	out, _, code := e.run(t, "find", "cudart", "cudartt", "--json")
	if code != exitNotFound {
		t.Fatalf("exit %d, want %d", code, exitNotFound)
	}
	golden(t, "find.json", strings.ReplaceAll(out, site, "$SITE"))

	out, errOut, code := e.run(t, "find", "--json", "cudart")
	var line map[string]any
	if err := json.Unmarshal([]byte(out), &line); err != nil || code != exitOK {
		t.Fatalf("find --json cudart: exit %d, %v: %s %s", code, err, out, errOut)
	}
	for _, k := range []string{"name", "kind", "path", "found_via", "step"} {
		if _, ok := line[k]; !ok {
			t.Errorf("JSON line lacks %q: %s", k, out)
		}
	}
	out, _, code = e.run(t, "find", "cudart")
	if code != exitOK || out != filepath.Join(site, "nvidia/cu13/lib/libcudart.so.13")+"\n" {
		t.Fatalf("find cudart: exit %d, %q", code, out)
	}
}

func TestFind_notFound(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	out, _, code := e.run(t, "find", "nvfatbin", "--json")
	var line struct {
		Name, Error, Message string
		Attempts             []map[string]string
	}
	if err := json.Unmarshal([]byte(out), &line); err != nil {
		t.Fatal(err, out)
	}
	if code != exitNotFound || line.Error != "not-found" || line.Name != "nvfatbin" || len(line.Attempts) < 5 || !strings.Contains(line.Message, "libnvfatbin.so.13 or libnvfatbin.so.12") {
		t.Fatalf("exit %d, %+v", code, line)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[search]\norder = [\"wheels\"]\ncolour = \"blue\"\n"), 0o644)
	badStep := filepath.Join(t.TempDir(), "step.toml")
	os.WriteFile(badStep, []byte("[library.cudart]\norder = [\"wheels\", \"nowhere\"]\n"), 0o644)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no command", nil, exitUsage, "usage: pathfinder COMMAND"},
		{"unknown command", []string{"fnd"}, exitUsage, `unknown command "fnd"`},
		{"unknown flag", []string{"find", "cudart", "--jsn"}, exitUsage, "unknown flag --jsn"},
		{"no names", []string{"find"}, exitUsage, "no library named"},
		{"unknown key in config", []string{"find", "cudart", "--config", bad}, exitUsage, bad + ":3:1: unknown key \"search.colour\""},
		{"unknown step in config", []string{"find", "cudart", "--config", badStep}, exitUsage, `library.cudart.order names unknown step "nowhere"`},
		{"missing config", []string{"list", "--config", "/nonexistent/p.toml"}, exitUsage, "no such file"},
		{"explain takes one", []string{"explain", "a", "b"}, exitUsage, "explain: takes one library name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, stderr, code := e.run(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.stderr)
			}
		})
	}
}

func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	for _, c := range commands {
		for _, args := range [][]string{{c.name, "--help"}, {"help", c.name}} {
			out, _, code := e.run(t, args...)
			if code != exitOK || !strings.Contains(out, "usage: pathfinder "+c.name) {
				t.Errorf("%v: exit %d, %q", args, code, out)
			}
		}
	}
	out, _, code := e.run(t, "--help")
	if code != exitOK || !strings.Contains(out, "doctor") {
		t.Fatalf("--help: %d %q", code, out)
	}
}

func TestExplain(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	cuda := t.TempDir()
	gccLib(t, filepath.Join(cuda, "lib/libnvblas.so.13"), "libnvblas.so.13")
	os.WriteFile(filepath.Join(cuda, "lib/libnvblas.so.12"), []byte("not a library"), 0o644)
	e.Setenv("CUDA_HOME", cuda)
	out, _, code := e.run(t, "explain", "nvblas")
	for _, want := range []string{
		"steps: wheels → conda → already-loaded → system → envroots",
		"envroots        found",
		"✓ " + cuda + "/lib/libnvblas.so.13  (found via CUDA_HOME)",
		cuda + "/lib64  no such directory",
		"$CUDA_PATH  not set",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	out, _, _ = e.run(t, "explain", "nvblas", "--json")
	var ex struct {
		Steps []struct{ Step, Outcome string }
	}
	if err := json.Unmarshal([]byte(out), &ex); err != nil || len(ex.Steps) != 5 {
		t.Fatalf("explain --json: %v %s", err, out)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	out, _, code := e.run(t, "list", "--json")
	type listed struct {
		Name, Kind, Category string
		Available            bool
	}
	libs := jsonLines[listed](t, out)
	if code != exitOK {
		t.Fatal(code)
	}
	perKind := map[string]int{}
	for _, l := range libs {
		perKind[l.Kind]++
	}
	// The catalog's 49 dynamic libraries and cudnn; 29 header sets and nccl's and cudnn's; 15 binaries
	// and ptxas; cudadevrt; three bitcode libraries.
	want := map[string]int{"dynamic-lib": 50, "header-dir": 31, "binary": 16, "static-lib": 1, "bitcode": 3}
	for k, n := range want {
		if perKind[k] != n {
			t.Errorf("%s: %d names, want %d", k, perKind[k], n)
		}
	}
	out, _, _ = e.run(t, "list", "--target", "windows/amd64", "--kind", "dynamic-lib", "--json")
	for _, l := range jsonLines[listed](t, out) {
		if l.Name == "cufile" && l.Available || l.Name == "cudart" && !l.Available {
			t.Errorf("on windows/amd64: %+v", l)
		}
	}
	out, _, _ = e.run(t, "list")
	golden(t, "list.txt", out)
}

func TestDoctor(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	conda := t.TempDir()
	gccLib(t, filepath.Join(conda, "lib/libnvjpeg.so.13"), "libnvjpeg.so.13")
	e.Setenv("CONDA_PREFIX", conda)
	out, _, code := e.run(t, "doctor", "--all", "--root", t.TempDir())
	for _, want := range []string{"CONDA_PREFIX=" + conda, "nvjpeg", conda + "/lib/libnvjpeg.so.13  (conda, CUDA 13)", "not found (looked for libcudart.so.13 or libcudart.so.12", "1 of 50 found"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	if code != exitNotFound { // the empty machine has no driver: a problem
		t.Fatalf("exit %d", code)
	}
}

// TestLoad_noCgoBinary builds pathfinder with CGO_ENABLED=0 and loads a library and its dependency
// with it: purego's dlopen works without cgo.
func TestLoad_noCgoBinary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := noCgoBinary(t)
	e := isolate(t)
	site := t.TempDir()
	fft := filepath.Join(site, "nvidia/cu13/lib/libcufft.so.12")
	gccLib(t, fft, "libcufft.so.12")
	gccLib(t, filepath.Join(site, "nvidia/cu13/lib/libcufftw.so.12"), "libcufftw.so.12", fft)
	cmd := exec.Command(bin, "load", "cufftw", "cufft", "--json")
	cmd.Env = e.Environ("PATHFINDER_SITE_PACKAGES=" + site)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("load: %v\n%s", err, out)
	}
	want := fmt.Sprintf(`{"name":"cufftw","kind":"dynamic-lib","path":"%[1]s/nvidia/cu13/lib/libcufftw.so.12","found_via":"site-packages","step":"wheels","cuda":"13","version_from":"catalog","already_loaded":false,"dependencies":[{"name":"cufft","kind":"dynamic-lib","path":"%[1]s/nvidia/cu13/lib/libcufft.so.12","found_via":"site-packages","step":"wheels","cuda":"13","version_from":"catalog","already_loaded":false}]}
{"name":"cufft","kind":"dynamic-lib","path":"%[1]s/nvidia/cu13/lib/libcufft.so.12","found_via":"site-packages","step":"wheels","cuda":"13","version_from":"catalog","already_loaded":false}
`, site)
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func TestDriver_fakeRoot(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	root := t.TempDir()
	filetree.Write(t, root, map[string]string{
		"proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.144.03  Release Build  (dvs-builder@U16-I3-B03-4-3)  Mon Dec 30 17:10:20 UTC 2024\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n",
		"sys/module/nvidia/version":  "550.144.03\n",
		"dev/nvidiactl":              "",
	})
	out, errOut, code := e.run(t, "driver", "--root", root, "--json", "--methods", "sysfs,procfs")
	var report map[string]any
	if err := json.Unmarshal([]byte(out), &report); err != nil || code != exitOK {
		t.Fatalf("driver --json: exit %d %v\n%s%s", code, err, out, errOut)
	}
	if report["driver_version"] != "550.144.03" || report["max_cuda"] != "12.4" {
		t.Fatalf("report %v", report)
	}
	dir := t.TempDir()
	if _, errOut, code := e.run(t, "driver", "--root", root, "--format", "nfd", "--output", dir, "--methods", "sysfs"); code != exitOK {
		t.Fatalf("nfd: exit %d %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "pathfinder"))
	if err != nil || !strings.Contains(string(b), "nvidia.com/cuda.driver-version.major=550") {
		t.Fatalf("feature file: %v %q", err, b)
	}
	if _, _, code := e.run(t, "driver", "--root", t.TempDir()); code != exitNotFound {
		t.Fatalf("empty root: exit %d, want %d", code, exitNotFound)
	}
}

func TestFind_kindsTargetsAndOneToolkit(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	cuda := t.TempDir()
	filetree.Write(t, cuda, map[string]string{
		"include/cuda_runtime.h":           "",
		"include/cccl/cuda/std/version":    "",
		"nvvm/libdevice/libdevice.10.bc":   "BC\xc0\xde",
		"lib64/libcudadevrt.a":             "!<arch>\n",
		"bin/x64/nvcc.exe":                 "MZ",
		"include/cuda/std/not-the-version": "",
	})
	gccLib(t, filepath.Join(cuda, "lib64/libcudart.so.12"), "libcudart.so.12")
	gccLib(t, filepath.Join(cuda, "lib64/libnvrtc.so.12"), "libnvrtc.so.12")
	e.Setenv("CUDA_HOME", cuda)
	tests := []struct {
		args []string
		want string
		code int
	}{
		{[]string{"find", "cudart", "--kind", "header-dir"}, cuda + "/include\n", exitOK},
		{[]string{"find", "cccl", "--kind", "header-dir"}, cuda + "/include/cccl\n", exitOK},
		{[]string{"find", "device", "--kind", "bitcode"}, cuda + "/nvvm/libdevice/libdevice.10.bc\n", exitOK},
		{[]string{"find", "cudadevrt", "--kind", "static-lib"}, cuda + "/lib64/libcudadevrt.a\n", exitOK},
		// A Windows layout checked from Linux: the MZ stub is not a PE file, and explain says so.
		{[]string{"find", "nvcc", "--kind", "binary", "--target", "windows/amd64"}, "", exitNotFound},
		{[]string{"find", "--all-from-one-toolkit", "cudart", "nvrtc"}, cuda + "/lib64/libcudart.so.12\n" + cuda + "/lib64/libnvrtc.so.12\n", exitOK},
		{[]string{"find", "cudart", "--kind", "shader"}, "", exitUsage},
		{[]string{"find", "cudart", "--target", "plan9/mips"}, "", exitUsage},
		{[]string{"load", "cudart", "--target", "windows/amd64"}, "", exitUsage},
	}
	for _, tt := range tests {
		out, errOut, code := e.run(t, tt.args...)
		if code != tt.code || out != tt.want {
			t.Errorf("%v: exit %d, %q (stderr %q); want %d, %q", tt.args, code, out, errOut, tt.code, tt.want)
		}
	}
	out, _, _ := e.run(t, "explain", "nvcc", "--kind", "binary", "--target", "windows/amd64")
	if !strings.Contains(out, "bin/x64/nvcc.exe  refused: not a PE file") {
		t.Errorf("explain for windows/amd64 lacks the PE refusal:\n%s", out)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := pluginCacheDir(); err == nil {
		os.RemoveAll(dir)
	}
	for _, v := range binaries.Range {
		if b := v.(*built[string]); b.v != "" {
			os.RemoveAll(filepath.Dir(b.v))
		}
	}
	os.Exit(code)
}
