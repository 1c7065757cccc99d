package main

import (
	"debug/pe"
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
