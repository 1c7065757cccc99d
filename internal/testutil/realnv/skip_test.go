package realnv

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSkip_quiet: a package whose tests skip for want of the libraries writes into nothing but its
// own output. go test ./... > log 2>&1, as CI keeps output, holds the ok line alone, whole (a note
// written into the go command's stderr once overwrote it: "ok …/integration 0.004s  are not in
// …"); go test -v shows each skip with why and what fetches the libraries; with the libraries
// required, as .ci/run requires them, the package fails instead.
func TestSkip_quiet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	empty := t.TempDir()
	goTest := func(required string, args ...string) (string, error) {
		log := filepath.Join(t.TempDir(), "log")
		f, err := os.Create(log)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(goTool, append([]string{"test", "-count=1"}, append(args, "./testdata/skipper")...)...)
		cmd.Env = append(os.Environ(), "PATHFINDER_REALNV_DIR="+empty, "PATHFINDER_REALNV="+required, "GOFLAGS=")
		cmd.Stdout, cmd.Stderr = f, f
		err = cmd.Run()
		f.Close()
		b, _ := os.ReadFile(log)
		return string(b), err
	}
	if out, err := goTest(""); err != nil || !regexp.MustCompile(`^ok  \t\S+/testdata/skipper\t[0-9.]+s\n$`).MatchString(out) {
		t.Fatalf("go test > log 2>&1: %v\n%q\nwant the ok line alone", err, out)
	}
	out, err := goTest("", "-v")
	if err != nil || !strings.Contains(out, "--- SKIP: TestNeedsCudart") || !strings.Contains(out, "were not fetched (run "+FetchCommand+")") {
		t.Fatalf("go test -v: %v\n%s\nwant the skip, with why and the command that fetches them", err, out)
	}
	if out, err := goTest("require"); err == nil {
		t.Fatalf("go test with the libraries required passed:\n%s", out)
	}
	readme, err := os.ReadFile("../../../README.md")
	if err != nil || !strings.Contains(string(readme), "without those libraries their tests skip: go test -v ./... | grep -A1 -- '--- SKIP' lists each, with why") ||
		!strings.Contains(string(readme), "(PATHFINDER_REALNV=require, as .ci/run sets, fails instead)") {
		t.Errorf("README does not say how to see the skips, and that CI requires the libraries: %v", err)
	}
	ci, err := os.ReadFile("../../../.ci/run")
	if err != nil || !regexp.MustCompile(`(?m)^PATHFINDER_REALNV=require .*go test .*\./\.\.\.`).Match(ci) {
		t.Errorf(".ci/run does not run the tests with the libraries required: %v", err)
	}
}
