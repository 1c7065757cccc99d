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

func runFindCases(t *testing.T, bin string, cases []findCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runBin(t, bin, tt.env, strings.Fields(tt.args)...)
			if code != tt.code || tt.code == exitOK && out != tt.want+"\n" || tt.code != exitOK && !strings.Contains(errOut, tt.want) {
				t.Fatalf("%v pathfinder %s: exit %d, stdout %q, stderr %q; want %d, %q", tt.env, tt.args, code, out, errOut, tt.code, tt.want)
			}
		})
	}
}

// TestFind_nvvmWindowsDirs: nvvm's DLL in a toolkit's nvvm/bin/x64 (nvvm/bin/arm64), before
// nvvm/bin, through CUDA_PATH and through conda's Library/, as newer cuda.pathfinder has it.
func TestFind_nvvmWindowsDirs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := noCgoBinary(t)
	isolate(t)
	const x64, arm64 = pe.IMAGE_FILE_MACHINE_AMD64, pe.IMAGE_FILE_MACHINE_ARM64
	both, x64Only, conda := t.TempDir(), t.TempDir(), t.TempDir()
	putPE(t, both, "nvvm/bin/x64/nvvm64_40_0.dll", x64)
	putPE(t, both, "nvvm/bin/arm64/nvvm64_40_0.dll", arm64)
	putPE(t, both, "nvvm/bin/nvvm64_40_0.dll", x64)
	putPE(t, x64Only, "nvvm/bin/x64/nvvm64_40_0.dll", x64)
	putPE(t, conda, "Library/nvvm/bin/x64/nvvm64_40_0.dll", x64)
	dll := func(root, rel string) string { return filepath.Join(root, rel, "nvvm64_40_0.dll") }
	runFindCases(t, bin, []findCase{
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
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := noCgoBinary(t)
	isolate(t)
	root := t.TempDir()
	write(t, filepath.Join(root, "lib64", "README.txt"), nil)
	write(t, filepath.Join(root, "lib", "evil\x1b[31mred"), nil)
	for i := range 24 {
		write(t, filepath.Join(root, "lib", fmt.Sprintf("f%02d", i)), nil)
	}
	write(t, filepath.Join(root, "nvvm", "libdevice", "README.txt"), nil)
	env := []string{"CUDA_PATH=" + root}
	out, _, code := runBin(t, bin, env, "find", "cudadevrt", "--kind", "static-lib", "--json")
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
	out, _, _ = runBin(t, bin, env, "explain", "device", "--kind", "bitcode")
	if line := "· " + filepath.Join(root, "nvvm", "libdevice") + "  none of libdevice.10.bc; it holds README.txt\n"; !strings.Contains(out, line) {
		t.Fatalf("explain device --kind bitcode lacks %q:\n%s", line, out)
	}
}

// TestFind_binariesThroughTheCanary: with only the loader's cudart to go by (R/lib64 on
// LD_LIBRARY_PATH), every binary utility is found in its toolkit root's bin, as cuda.pathfinder
// 1.6.0 finds them (PR #2196), and so is a header set of the toolkit; another product's is not.
func TestFind_binariesThroughTheCanary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := noCgoBinary(t)
	isolate(t)
	root := t.TempDir()
	gccLib(t, filepath.Join(root, "lib64", "libcudart.so.13"), "libcudart.so.13")
	write(t, filepath.Join(root, "include", "cuda_runtime.h"), nil)
	write(t, filepath.Join(root, "include", "cutlass", "cutlass.h"), nil)
	out, _, _ := run(t, "list", "--kind", "binary", "--json")
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
	runFindCases(t, bin, cases)

	out, _, _ = runBin(t, bin, env, "find", "nvcc", "--kind", "binary", "--json")
	if !strings.Contains(out, `"found_via":"system-ctk-root","step":"canary"`) {
		t.Fatalf("find nvcc --json: %s", out)
	}
}
