package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRelativePaths_refusedAndNamed holds one rule for every variable that names a path: a relative
// one is never resolved against the working directory, and what is said names it. Each relative
// path exists in the working directory and holds what the search looks for, so resolving it there
// would find something. Inputs the whole run depends on (config, packs) are usage errors; the
// directories a search would look in are passed over and named in its error and in doctor.
func TestRelativePaths_refusedAndNamed(t *testing.T) {
	// Not parallel: the working directory it changes is the process's.
	e := isolate(t)
	wd := t.TempDir()
	t.Chdir(wd)
	os.WriteFile(filepath.Join(wd, "site.toml"), []byte("[search]\norder = [\"envroots\"]\n"), 0o644)
	os.MkdirAll(filepath.Join(wd, "packs"), 0o755)
	gccLib(t, filepath.Join(wd, "cuda/lib64/libcudart.so.12"), "libcudart.so.12")
	gccLib(t, filepath.Join(wd, "site/nvidia/cu13/lib/libcudart.so.13"), "libcudart.so.13")
	gccLib(t, filepath.Join(wd, "venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13"), "libcudart.so.13")
	gccLib(t, filepath.Join(wd, "conda/lib/libcudart.so.12"), "libcudart.so.12")
	gccLib(t, filepath.Join(wd, "driver/libcuda.so.1"), "libcuda.so.1")
	const never = "never resolve"
	tests := []struct {
		name, value string
		args        []string
		code        int
		want        string // in stdout or stderr
	}{
		{name: "PATHFINDER_CONFIG", value: "site.toml", args: []string{"find", "cudart"}, code: exitUsage,
			want: `pathfinder: config: $PATHFINDER_CONFIG "site.toml" is a relative path: refused, never resolved against the working directory`},
		{name: "PATHFINDER_PACKS", value: "packs", args: []string{"find", "cudart"}, code: exitUsage,
			want: `pathfinder: $PATHFINDER_PACKS entry "packs" is a relative path: refused, never resolved against the working directory`},
		{name: "CUDA_PATH", value: "cuda", args: []string{"find", "cudart"}, code: exitNotFound,
			want: "ignored $CUDA_PATH=cuda (not an absolute path; pathfinder " + never},
		{name: "CUDA_HOME", value: "cuda", args: []string{"find", "cudart"}, code: exitNotFound,
			want: "ignored $CUDA_HOME=cuda (not an absolute path; pathfinder " + never},
		{name: "VIRTUAL_ENV", value: "venv", args: []string{"find", "cudart"}, code: exitNotFound,
			want: "ignored $VIRTUAL_ENV=venv (not an absolute path; pathfinder " + never},
		{name: "PATHFINDER_SITE_PACKAGES", value: "site", args: []string{"find", "cudart"}, code: exitNotFound,
			want: "ignored $PATHFINDER_SITE_PACKAGES=site (not an absolute path; pathfinder " + never},
		{name: "CONDA_PREFIX", value: "conda", args: []string{"find", "cudart"}, code: exitNotFound,
			want: "ignored $CONDA_PREFIX=conda (not an absolute path; pathfinder " + never},
		{name: "PYTHONUSERBASE", value: "site", args: []string{"find", "cudart"}, code: exitNotFound,
			want: "ignored $PYTHONUSERBASE=site (not an absolute path; pathfinder " + never},
		{name: "PYENV_ROOT", value: "pyenv", args: []string{"find", "cudart"}, code: exitNotFound,
			want: "ignored $PYENV_ROOT=pyenv (not an absolute path; pathfinder " + never},
		{name: "PYENV_DIR", value: "venv", args: []string{"find", "cudart"}, code: exitNotFound,
			want: "ignored $PYENV_DIR=venv (not an absolute path; pathfinder " + never},
		{name: "CUDA_PATH in doctor", value: "cuda", args: []string{"doctor", "--root", t.TempDir()}, code: exitNotFound,
			want: "✗ CUDA_PATH=cuda is ignored: not an absolute path; pathfinder " + never},
		{name: "PATHFINDER_CUDA_LIBRARY", value: "driver/libcuda.so.1", args: []string{"driver", "--root", t.TempDir()}, code: exitNotFound,
			want: "; ignored $PATHFINDER_CUDA_LIBRARY=driver/libcuda.so.1 (not an absolute path; pathfinder " + never},
		{name: "PATHFINDER_NVML_LIBRARY", value: "./libnvidia-ml.so.1", args: []string{"doctor", "--root", t.TempDir()}, code: exitNotFound,
			want: "✗ PATHFINDER_NVML_LIBRARY=./libnvidia-ml.so.1 is ignored: not an absolute path; pathfinder " + never},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := e.clone()
			e.Setenv(strings.Fields(tc.name)[0], tc.value)
			e.Setenv("PATH", "/nonexistent") // no python3, no nvidia-smi: only the variable under test
			out, errOut, code := e.run(t, tc.args...)
			if code != tc.code || !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("%v: exit %d, want %d; want %q in\n%s%s", tc.args, code, tc.code, tc.want, out, errOut)
			}
			if strings.Contains(out, filepath.Join(wd, "")) {
				t.Fatalf("resolved against the working directory:\n%s", out)
			}
		})
	}
}

// TestEnvValues_escaped: a variable's value with a newline, an escape sequence or a bidirectional
// override reaches no output raw: it cannot split doctor's problem line, forge one of find's, or act
// on the terminal. Before, find's and doctor's messages printed CUDA_PATH as it was.
func TestEnvValues_escaped(t *testing.T) {
	t.Parallel()
	for _, value := range []string{"rel\n\x1b[31mforged", "/abs\n\x1b[31mforged", "/abs\u202eforged"} {
		for _, name := range []string{"CUDA_PATH", "CUDA_HOME", "VIRTUAL_ENV", "CONDA_PREFIX", "PATHFINDER_CACHE_DIR", "PATHFINDER_PACKS", "LD_LIBRARY_PATH", "CUDNN_PATH"} {
			e := isolate(t)
			e.Setenv(name, value)
			for _, args := range [][]string{{"find", "cudart"}, {"explain", "cudart"}, {"doctor", "--all"}, {"config"}, {"packs"}} {
				out, errOut, _ := e.run(t, args...)
				for _, line := range strings.Split(out+errOut, "\n") {
					if strings.ContainsAny(line, "\x1b\u202e") || strings.HasPrefix(line, "forged") {
						t.Errorf("%s=%q, %v prints a raw value: %q", name, value, args, line)
					}
				}
			}
		}
	}
}
