package main

import (
	"debug/pe"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The layouts of cuda.pathfinder's own test suite where pathfinder once answered otherwise (issue
// 28), each asked of the built binary in a fresh process.

// findCase is one question to the built binary: with env, `pathfinder args` prints want on stdout
// (on stderr when code is not exitOK, where it need only be part of it).
type findCase struct {
	name string
	env  []string
	args string
	want string
	code int
}

// builtAndIsolated builds the binary and returns it with an isolated environment to run it in.
func builtAndIsolated(t *testing.T) (bin string, e *testEnv) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	return noCgoBinary(t), isolate(t)
}

func (e *testEnv) runFindCases(t *testing.T, bin string, cases []findCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := e.runBin(t, bin, tt.env, strings.Fields(tt.args)...)
			if code != tt.code || tt.code == exitOK && out != tt.want+"\n" || tt.code != exitOK && !strings.Contains(errOut, tt.want) {
				t.Fatalf("%v pathfinder %s: exit %d, stdout %q, stderr %q; want %d, %q", tt.env, tt.args, code, out, errOut, tt.code, tt.want)
			}
		})
	}
}

// TestFind_nvvmWindowsDirs: nvvm's DLL in a toolkit's nvvm/bin/x64 (nvvm/bin/arm64), before
// nvvm/bin, through CUDA_PATH and through conda's Library/, as newer cuda.pathfinder has it.
func TestFind_nvvmWindowsDirs(t *testing.T) {
	t.Parallel()
	bin, e := builtAndIsolated(t)
	const x64, arm64 = pe.IMAGE_FILE_MACHINE_AMD64, pe.IMAGE_FILE_MACHINE_ARM64
	both, x64Only, conda := t.TempDir(), t.TempDir(), t.TempDir()
	putPE(t, both, "nvvm/bin/x64/nvvm64_40_0.dll", x64)
	putPE(t, both, "nvvm/bin/arm64/nvvm64_40_0.dll", arm64)
	putPE(t, both, "nvvm/bin/nvvm64_40_0.dll", x64)
	putPE(t, x64Only, "nvvm/bin/x64/nvvm64_40_0.dll", x64)
	putPE(t, conda, "Library/nvvm/bin/x64/nvvm64_40_0.dll", x64)
	dll := func(root, rel string) string { return filepath.Join(root, rel, "nvvm64_40_0.dll") }
	e.runFindCases(t, bin, []findCase{
		{"nvvm/bin/x64 before nvvm/bin", []string{"CUDA_PATH=" + both}, "find nvvm --target windows/amd64", dll(both, "nvvm/bin/x64"), exitOK},
		{"nvvm/bin/arm64 on arm64", []string{"CUDA_PATH=" + both}, "find nvvm --target windows/arm64", dll(both, "nvvm/bin/arm64"), exitOK},
		{"nvvm/bin/x64 alone, CUDA_PATH", []string{"CUDA_PATH=" + x64Only}, "find nvvm --target windows/amd64", dll(x64Only, "nvvm/bin/x64"), exitOK},
		{"nvvm/bin/x64 alone, conda", []string{"CONDA_PREFIX=" + conda}, "find nvvm --target windows/amd64", dll(conda, "Library/nvvm/bin/x64"), exitOK},
	})
}

// TestFind_listsWhatADirectoryHolds: a toolkit directory that holds none of the files is named with
// what it does hold, in explain and in the --json attempts, bounded and escaped, as cuda.pathfinder's
// error lists it: README.txt where libcudadevrt.a was expected.
func TestFind_listsWhatADirectoryHolds(t *testing.T) {
	t.Parallel()
	bin, e := builtAndIsolated(t)
	root := t.TempDir()
	write(t, filepath.Join(root, "lib64", "README.txt"), nil)
	write(t, filepath.Join(root, "lib", "evil\x1b[31mred"), nil)
	for i := range 24 {
		write(t, filepath.Join(root, "lib", fmt.Sprintf("f%02d", i)), nil)
	}
	write(t, filepath.Join(root, "nvvm", "libdevice", "README.txt"), nil)
	env := []string{"CUDA_PATH=" + root}
	out, _, code := e.runBin(t, bin, env, "find", "cudadevrt", "--kind", "static-lib", "--json")
	var got struct {
		Error    string
		Attempts []struct{ Step, Path, Reason string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitNotFound || got.Error != "not-found" {
		t.Fatalf("find cudadevrt --json: exit %d, %v: %s", code, err, out)
	}
	want := map[string]string{
		filepath.Join(root, "lib64"): "none of libcudadevrt.a; it holds README.txt",
		filepath.Join(root, "lib"): `none of libcudadevrt.a; it holds evil\x1b[31mred, f00, f01, f02, f03, f04, f05, f06, f07, f08, ` +
			"f09, f10, f11, f12, f13, f14, f15, f16, f17, f18, and 5 more",
	}
	for _, a := range got.Attempts {
		if w, ok := want[a.Path]; ok && a.Step == "envroots" && a.Reason == w {
			delete(want, a.Path)
		}
	}
	if len(want) > 0 {
		t.Fatalf("attempts lack %q:\n%s", want, out)
	}
	out, _, _ = e.runBin(t, bin, env, "explain", "device", "--kind", "bitcode")
	if line := "· " + filepath.Join(root, "nvvm", "libdevice") + "  none of libdevice.10.bc; it holds README.txt\n"; !strings.Contains(out, line) {
		t.Fatalf("explain device --kind bitcode lacks %q:\n%s", line, out)
	}
}

// TestFind_binariesThroughTheCanary: with only the loader's cudart to go by (R/lib64 on
// LD_LIBRARY_PATH), every binary utility is found in its toolkit root's bin, as cuda.pathfinder
// 1.6.0 finds them (PR #2196), and so is a header set of the toolkit; another product's is not.
func TestFind_binariesThroughTheCanary(t *testing.T) {
	t.Parallel()
	bin, e := builtAndIsolated(t)
	root := t.TempDir()
	gccLib(t, filepath.Join(root, "lib64", "libcudart.so.13"), "libcudart.so.13")
	write(t, filepath.Join(root, "include", "cuda_runtime.h"), nil)
	write(t, filepath.Join(root, "include", "cutlass", "cutlass.h"), nil)
	out, _, _ := e.run(t, "list", "--kind", "binary", "--json")
	env := []string{"LD_LIBRARY_PATH=" + filepath.Join(root, "lib64")}
	var cases []findCase
	for _, b := range jsonLines[struct{ Name string }](t, out) {
		exe := write(t, filepath.Join(root, "bin", b.Name), []byte("#!/bin/sh\n"))
		os.Chmod(exe, 0o755)
		cases = append(cases, findCase{b.Name, env, "find " + b.Name + " --kind binary", exe, exitOK})
	}
	if len(cases) < 16 {
		t.Fatalf("%d binaries listed", len(cases))
	}
	cases = append(cases,
		findCase{"a toolkit header set", env, "find cudart --kind header-dir", filepath.Join(root, "include"), exitOK},
		findCase{"another product's header set", env, "find cutlass --kind header-dir", `"cutlass" not found`, exitNotFound},
	)
	e.runFindCases(t, bin, cases)

	out, _, _ = e.runBin(t, bin, env, "find", "nvcc", "--kind", "binary", "--json")
	if !strings.Contains(out, `"found_via":"system-ctk-root","step":"canary"`) {
		t.Fatalf("find nvcc --json: %s", out)
	}
}

// TestFind_pythonSiteRules: the wheels step searches the site-packages a real Python would, in its
// order: the user site before an installation's (PEP 370), after a venv's own where the venv was made
// with --system-site-packages (then its base's), never in a venv made without, nor with
// PYTHONNOUSERSITE; explain says where each site comes from and why one was not searched. The venvs
// are python3 -m venv's, the user site under a test HOME.
func TestFind_pythonSiteRules(t *testing.T) {
	t.Parallel()
	bin, e := builtAndIsolated(t)
	home := e.vars["HOME"]
	python, err := e.lookPath("python3") // isolate's PATH: the system's own
	if err != nil {
		t.Skip("no python3")
	}
	version, err := e.command(python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	venv := func(name string, args ...string) string {
		v := filepath.Join(dir, name)
		if out, err := e.command(python, append([]string{"-m", "venv", "--without-pip", v}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("venv: %v\n%s", err, out)
		}
		return v
	}
	isolated, system := venv("isolated"), venv("system", "--system-site-packages")
	cudart := func(site string) string {
		p := filepath.Join(site, "nvidia", "cu13", "lib", "libcudart.so.13")
		gccLib(t, p, "libcudart.so.13")
		return p
	}
	user := cudart(filepath.Join(home, ".local", "lib", "python"+strings.TrimSpace(string(version)), "site-packages"))
	// An installation and a venv of it with the system site packages, laid out as Python's: their
	// own cudart each, so that the order shows.
	base := filepath.Join(dir, "base")
	write(t, filepath.Join(base, "bin", "python3"), []byte("\x7fELF"))
	os.Chmod(filepath.Join(base, "bin", "python3"), 0o755)
	baseCudart := cudart(filepath.Join(base, "lib", "python3.12", "site-packages"))
	ofBase := filepath.Join(dir, "of-base")
	write(t, filepath.Join(ofBase, "pyvenv.cfg"), []byte("home = "+filepath.Join(base, "bin")+"\ninclude-system-site-packages = true\n"))
	os.MkdirAll(filepath.Join(ofBase, "lib", "python3.12", "site-packages"), 0o755)

	noUser := "PYTHONNOUSERSITE=1"
	e.runFindCases(t, bin, []findCase{
		{"an installation: the user site first", []string{"PATH=" + filepath.Join(base, "bin")}, "find cudart", user, exitOK},
		{"an installation, PYTHONNOUSERSITE", []string{"PATH=" + filepath.Join(base, "bin"), noUser}, "find cudart", baseCudart, exitOK},
		{"a venv without system site packages: no user site", []string{"VIRTUAL_ENV=" + isolated}, "find cudart", `"cudart" not found`, exitNotFound},
		{"a venv with them: the user site", []string{"VIRTUAL_ENV=" + system}, "find cudart", user, exitOK},
		{"a venv with them, PYTHONNOUSERSITE", []string{"VIRTUAL_ENV=" + system, noUser}, "find cudart", `"cudart" not found`, exitNotFound},
		{"a venv with them: its base's after the user site", []string{"VIRTUAL_ENV=" + ofBase}, "find cudart", user, exitOK},
		{"a venv with them: its base's", []string{"VIRTUAL_ENV=" + ofBase, noUser}, "find cudart", baseCudart, exitOK},
	})

	userSite := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(user))))
	for _, tt := range []struct {
		env  []string
		want []string
	}{
		{[]string{"VIRTUAL_ENV=" + isolated}, []string{"site-packages " + userSite + " not searched: Python leaves the user site out of a venv without system site packages (" + filepath.Join(isolated, "pyvenv.cfg") + ")"}},
		{[]string{"VIRTUAL_ENV=" + ofBase, noUser}, []string{
			"site-packages " + filepath.Join(ofBase, "lib", "python3.12", "site-packages") + ": $VIRTUAL_ENV's venv",
			"site-packages " + userSite + " not searched: $PYTHONNOUSERSITE=1 turns the user site off",
			"site-packages " + filepath.Join(base, "lib", "python3.12", "site-packages") + ": the base Python of $VIRTUAL_ENV's venv, as " + filepath.Join(ofBase, "pyvenv.cfg") + " includes the system site packages"}},
	} {
		out, _, _ := e.runBin(t, bin, tt.env, "explain", "cudart")
		for _, w := range tt.want {
			if !strings.Contains(out, "log: "+w+"\n") {
				t.Errorf("%v explain cudart lacks %q:\n%s", tt.env, w, out)
			}
		}
	}
}
