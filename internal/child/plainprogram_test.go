package child

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
)

// TestPlainProgram_mainRunsOnce builds testdata/plainprogram, which imports pathfinder and does
// nothing special for its children, and counts its main's runs: once when it uses the features
// that re-execute it, none when it is started as either child. A child is served during package
// initialisation, so the program's main never runs twice.
func TestPlainProgram_mainRunsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	for _, tool := range []string{"go", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH", tool)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "plainprogram")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/plainprogram").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// A toolkit whose cudart the dlopen probe's child loads, and the nvvm found beside it.
	cuda := filepath.Join(dir, "cuda")
	sharedObject(t, filepath.Join(cuda, "lib64/libcudart.so.13"), "libcudart.so.13")
	sharedObject(t, filepath.Join(cuda, "nvvm/lib64/libnvvm.so.4"), "libnvvm.so.4")
	config := filepath.Join(dir, "pathfinder.toml")
	if err := os.WriteFile(config, []byte("[system]\nresolve = \"dlopen\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(dir, "count")
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"PATHFINDER_CACHE_DIR=" + filepath.Join(os.TempDir(), "pathfinder-test-cache"),
		"LD_LIBRARY_PATH=" + filepath.Join(cuda, "lib64"), "PLAIN_COUNT=" + count, "PLAIN_CONFIG=" + config,
	}
	runs := func() int {
		data, _ := os.ReadFile(count)
		return strings.Count(string(data), "main ran\n")
	}

	cmd := exec.Command(bin)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	want := "nvvm: " + filepath.Join(cuda, "nvvm/lib64/libnvvm.so.4") + " (system-ctk-root)"
	if err != nil || !strings.Contains(string(out), want) {
		t.Fatalf("%v; output lacks %q:\n%s", err, want, out)
	}
	if n := runs(); n != 1 {
		t.Fatalf("main ran %d times, want 1:\n%s", n, out)
	}

	// Started as each child, the way the probes start it, it answers and main does not run.
	for _, tc := range []struct{ role, request, answer string }{
		{"cuda-probe", "PATHFINDER_INTERNAL_CUDA_LIBRARIES=[\"/nonexistent/libcuda.so.1\"]", `{"pathfinder_child":"pathfinder cuda-probe 1"`},
		{"resolve-probe", "PATHFINDER_INTERNAL_RESOLVE_NAMES=[\"libcudart.so.13\"]", `"path":"` + filepath.Join(cuda, "lib64/libcudart.so.13") + `"`},
	} {
		cmd := exec.Command(bin)
		cmd.Env = append(env, RoleVar+"="+tc.role, tc.request)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), tc.answer) {
			t.Errorf("as %s: %v; output lacks %q:\n%s", tc.role, err, tc.answer, out)
		}
		if n := runs(); n != 1 {
			t.Fatalf("as %s: main ran %d times in all, want 1:\n%s", tc.role, n, out)
		}
	}
}

// sharedObject builds a real shared library with soname at path.
func sharedObject(t *testing.T, path, soname string) {
	t.Helper()
	elfso.Build(t, path, soname, "int marker(void) { return 1; }\n")
}
