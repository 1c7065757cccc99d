package realnv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// FetchCommand is what fetches the libraries, run at the repository's root.
const FetchCommand = "bash internal/testutil/realnv/fetch.sh"

// skipped counts the tests of this test binary that Get skipped.
var skipped atomic.Int64

// skipMark is a file in the module's root (ignored by git) that a skipping test opens and SaySkipped
// rewrites. go test records the files of the module a test opens, and does not cache a run that
// opened one changed in the last two seconds: a package that skipped is run, and says so, every
// time; one that did not is cached as before.
var skipMark = func() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; filepath.Dir(d) != d; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, ".realnv-skipped")
		}
	}
	return ""
}()

// noteSkip is Get's skip: counted, and the mark opened so that go test sees it.
func noteSkip() {
	if skipped.Add(1) == 1 && skipMark != "" {
		if f, err := os.OpenFile(skipMark, os.O_RDONLY|os.O_CREATE, 0o644); err == nil {
			f.Close()
		}
	}
}

// SaySkipped is for a package's TestMain, after m.Run: when tests skipped for want of NVIDIA's
// libraries, it says so in one line, with the command that fetches them. `go test ./...` keeps the
// output of a package that passed to itself unless -v is given, so the line goes to the go command's
// own stderr when the go command runs this test binary, and to this process's otherwise.
func SaySkipped() {
	n := skipped.Load()
	if n == 0 {
		return
	}
	if skipMark != "" {
		os.WriteFile(skipMark, []byte(time.Now().Format(time.RFC3339Nano)+"\n"), 0o644)
	}
	pkg := "."
	if wd, err := os.Getwd(); err == nil {
		pkg = packageDir(wd)
	}
	tests := "tests"
	if n == 1 {
		tests = "test"
	}
	line := fmt.Sprintf("pathfinder: %s: %d %s skipped: NVIDIA's libraries are not in %s; fetch them with %s (or set PATHFINDER_REALNV_DIR)\n",
		pkg, n, tests, Dir(), FetchCommand)
	if w := goCommandStderr(); w != nil && !testing.Verbose() {
		w.WriteString(line)
		w.Close()
		return
	}
	os.Stderr.WriteString(line)
}

// Run runs a package's tests and says whether some skipped (SaySkipped), for a TestMain that does
// nothing else: os.Exit(realnv.Run(m)).
func Run(m *testing.M) int {
	code := m.Run()
	SaySkipped()
	return code
}

// packageDir is dir relative to the module's root, as go test names packages by directory (./integration).
func packageDir(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if rel, err := filepath.Rel(d, dir); err == nil {
				return "./" + filepath.ToSlash(rel)
			}
			return dir
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// goCommandStderr opens the stderr of the go command that runs this test binary (Linux), or nil.
func goCommandStderr() *os.File {
	parent := "/proc/" + strconv.Itoa(os.Getppid())
	exe, err := os.Readlink(parent + "/exe")
	if err != nil || filepath.Base(exe) != "go" {
		return nil
	}
	f, err := os.OpenFile(parent+"/fd/2", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil
	}
	return f
}
