package realnv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSaySkipped: `go test` without -v, over a package whose tests skipped for want of the
// libraries, prints ok and one line naming the package and the command that fetches them, on every
// run (the result is not cached); with the libraries required, the package fails instead.
func TestSaySkipped(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	empty := t.TempDir()
	want := "pathfinder: ./internal/testutil/realnv/testdata/skipper: 1 test skipped: NVIDIA's libraries are not in " + empty +
		"; fetch them with bash internal/testutil/realnv/fetch.sh (or set PATHFINDER_REALNV_DIR)\n"
	for run := range 2 {
		cmd := exec.Command(goTool, "test", "./testdata/skipper")
		cmd.Env = append(os.Environ(), "PATHFINDER_REALNV_DIR="+empty, "PATHFINDER_REALNV=", "GOFLAGS=")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), "ok  \t") || strings.Contains(string(out), "(cached)") {
			t.Fatalf("go test, run %d: %v\n%s\nwant ok, not cached, and the line\n%s", run+1, err, out, want)
		}
	}
	cmd := exec.Command(goTool, "test", "./testdata/skipper")
	cmd.Env = append(os.Environ(), "PATHFINDER_REALNV_DIR="+empty, "PATHFINDER_REALNV=require", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("go test with the libraries required passed:\n%s", out)
	}
}
