package main

import (
	"debug/pe"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
)

// TestFind_windowsArm64 checks Windows layouts from Linux with --target, end to end through the CLI:
// CUDA 13 wheels in nvidia/cu13/bin/x86_64 and nvidia/cu13/bin/arm64, the CUDA 12 component wheel
// x64 only; a toolkit through CUDA_PATH in bin/x64 or bin/arm64, then bin; cudadevrt in lib/x64 or
// lib/arm64; cuDLA on arm64 only; cuDSS 1.0 before 0.
func TestFind_windowsArm64(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	const x64, arm64 = pe.IMAGE_FILE_MACHINE_AMD64, pe.IMAGE_FILE_MACHINE_ARM64
	site, cu12, cuda, binOnly := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	putPE(t, binOnly, "bin/cudart64_12.dll", arm64)
	putPE(t, site, "nvidia/cu13/bin/x86_64/cudart64_13.dll", x64)
	putPE(t, site, "nvidia/cu13/bin/arm64/cudart64_13.dll", arm64)
	// A CUDA 12 component wheel holding an arm64 DLL: arm64 does not look there.
	putPE(t, cu12, "nvidia/cuda_runtime/bin/cudart64_12.dll", arm64)
	for _, rel := range []string{"bin/x64/cudart64_13.dll", "lib/x64/cudadevrt.lib"} {
		putPE(t, cuda, rel, x64)
	}
	for _, rel := range []string{"bin/arm64/cudart64_13.dll", "bin/cudart64_12.dll", "lib/arm64/cudadevrt.lib", "bin/arm64/cudla.dll",
		"bin/arm64/cudss64_1.dll", "bin/arm64/cudss64_0.dll", "bin/cudss64_0.dll"} {
		putPE(t, cuda, rel, arm64)
	}
	tests := []struct {
		name string
		env  string // NAME=value
		args string
		want string // stdout, or stderr when code is not exitOK
		code int
	}{
		{"cu13 wheel on x64", "PATHFINDER_SITE_PACKAGES=" + site, "find cudart --target windows/amd64", site + "/nvidia/cu13/bin/x86_64/cudart64_13.dll", exitOK},
		{"cu13 wheel on arm64", "PATHFINDER_SITE_PACKAGES=" + site, "find cudart --target windows/arm64", site + "/nvidia/cu13/bin/arm64/cudart64_13.dll", exitOK},
		{"cu12 component wheel on x64: looked in, the arm64 DLL refused", "PATHFINDER_SITE_PACKAGES=" + cu12, "find cudart --target windows/amd64", "built for PE machine 0xaa64, not amd64", exitNotFound},
		{"cu12 component wheel on arm64: not looked in", "PATHFINDER_SITE_PACKAGES=" + cu12, "find cudart --target windows/arm64", `"cudart" not found`, exitNotFound},
		{"toolkit bin/x64", "CUDA_PATH=" + cuda, "find cudart --target windows/amd64", cuda + "/bin/x64/cudart64_13.dll", exitOK},
		{"toolkit bin/arm64", "CUDA_PATH=" + cuda, "find cudart --target windows/arm64", cuda + "/bin/arm64/cudart64_13.dll", exitOK},
		{"toolkit bin when bin/arm64 has none", "CUDA_PATH=" + binOnly, "find cudart --target windows/arm64", binOnly + "/bin/cudart64_12.dll", exitOK},
		{"cudadevrt lib/x64", "CUDA_PATH=" + cuda, "find cudadevrt --kind static-lib --target windows/amd64", cuda + "/lib/x64/cudadevrt.lib", exitOK},
		{"cudadevrt lib/arm64", "CUDA_PATH=" + cuda, "find cudadevrt --kind static-lib --target windows/arm64", cuda + "/lib/arm64/cudadevrt.lib", exitOK},
		{"cudla on arm64", "CUDA_PATH=" + cuda, "find cudla --target windows/arm64", cuda + "/bin/arm64/cudla.dll", exitOK},
		{"cudla on x64: not available", "CUDA_PATH=" + cuda, "find cudla --target windows/amd64", `library "cudla" is not available on windows/amd64`, exitNotFound},
		{"cudss 1.0 first", "CUDA_PATH=" + cuda, "find cudss --target windows/arm64", cuda + "/bin/arm64/cudss64_1.dll", exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.clone() // before Parallel: the test goes on to set CUDA_PATH on its own
			t.Parallel()
			name, value, _ := strings.Cut(tt.env, "=")
			e.Setenv(name, value)
			out, errOut, code := e.run(t, strings.Fields(tt.args)...)
			got := out
			if tt.code != exitOK {
				got = errOut
			}
			if code != tt.code || !strings.Contains(got, tt.want) || tt.code == exitOK && out != tt.want+"\n" {
				t.Fatalf("pathfinder %s: exit %d, stdout %q, stderr %q; want %d, %q", tt.args, code, out, errOut, tt.code, tt.want)
			}
		})
	}

	// explain shows the order: bin/arm64, then bin, and no x64 directory on arm64.
	e.Setenv("CUDA_PATH", cuda)
	out, _, _ := e.run(t, "explain", "cudss", "--target", "windows/arm64")
	arm, bin := strings.Index(out, "log: searched "+cuda+"/bin/arm64\n"), strings.Index(out, "log: searched "+cuda+"/bin\n")
	if arm < 0 || bin < arm || strings.Contains(out, "/bin/x64") || !strings.Contains(out, "looking for cudss64_1.dll or cudss64_0.dll") {
		t.Fatalf("explain cudss --target windows/arm64:\n%s", out)
	}
}

// TestLoad_cudss: cuDSS 1.0's libcudss.so.1 before libcudss.so.0, its required dependencies (cuBLAS,
// cuBLASLt) and NVRTC, an optional one, loaded before it when present and skipped when not; real
// libraries built by gcc, each load in a fresh process.
func TestLoad_cudss(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := noCgoBinary(t)
	e := isolate(t)
	site, marks := t.TempDir(), t.TempDir()
	lib := filepath.Join(site, "nvidia/cu13/lib")
	lt := filepath.Join(lib, "libcublasLt.so.13")
	gccLib(t, lt, "libcublasLt.so.13")
	gccLib(t, filepath.Join(lib, "libcublas.so.13"), "libcublas.so.13", lt)
	gccLib(t, filepath.Join(lib, "libnvrtc.so.13"), "libnvrtc.so.13")
	gccLib(t, filepath.Join(lib, "libcudss.so.0"), "libcudss.so.0")
	// cuDSS opens NVRTC itself when it needs it; this one notes, as it starts, whether NVRTC is
	// already in the process.
	elfso.Build(t, filepath.Join(lib, "libcudss.so.1"), "libcudss.so.1", fmt.Sprintf(`#include <dlfcn.h>
#include <fcntl.h>
__attribute__((constructor)) static void ran(void) {
	open(dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_NOLOAD) ? %q : %q, O_CREAT | O_WRONLY, 0644);
}
`, filepath.Join(marks, "with-nvrtc"), filepath.Join(marks, "without-nvrtc")), "-ldl")
	env := []string{"PATHFINDER_SITE_PACKAGES=" + site}
	load := func() (path string, deps []string) {
		t.Helper()
		out, errOut, code := e.runBin(t, bin, env, "load", "cudss", "--json")
		var got struct {
			Path         string
			Dependencies []struct{ Name, Path string }
		}
		if code != exitOK || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("load cudss: exit %d, %s%s", code, out, errOut)
		}
		for _, d := range got.Dependencies {
			deps = append(deps, d.Name+"="+strings.TrimPrefix(d.Path, lib+"/"))
		}
		return got.Path, deps
	}

	path, deps := load()
	if path != filepath.Join(lib, "libcudss.so.1") || strings.Join(deps, " ") != "cublas=libcublas.so.13 cublasLt=libcublasLt.so.13 nvrtc=libnvrtc.so.13" {
		t.Fatalf("with NVRTC: %s, dependencies %q", path, deps)
	}
	if _, err := os.Stat(filepath.Join(marks, "with-nvrtc")); err != nil {
		t.Fatal("NVRTC was not in the process when cuDSS started")
	}

	os.Remove(filepath.Join(lib, "libnvrtc.so.13"))
	path, deps = load()
	if path != filepath.Join(lib, "libcudss.so.1") || strings.Join(deps, " ") != "cublas=libcublas.so.13 cublasLt=libcublasLt.so.13" {
		t.Fatalf("without NVRTC: %s, dependencies %q", path, deps)
	}
	if _, err := os.Stat(filepath.Join(marks, "without-nvrtc")); err != nil {
		t.Fatal("cuDSS did not start without NVRTC")
	}

	os.Remove(filepath.Join(lib, "libcudss.so.1"))
	if path, _ = load(); path != filepath.Join(lib, "libcudss.so.0") {
		t.Fatalf("with cuDSS 0 only: %s", path)
	}
}
