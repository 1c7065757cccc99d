// Package elfso builds real ELF shared objects with gcc, for tests that load them with the real
// loader or read them as the host does. The source is C given as a string; gcc reads it on stdin,
// so no source file lands beside the object.
package elfso

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Build compiles the C source code into a shared object at path, making path's directory, with
// DT_SONAME soname ("" for none) and args given to gcc after the source (-ldl, -D..., -Wl,...).
// Without gcc, which the test suite needs (README), the test is skipped saying so.
func Build(t testing.TB, path, soname, code string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found: this test builds real shared objects with it")
	}
	if err := Compile(path, soname, code, args...); err != nil {
		t.Fatal(err)
	}
}

// Compile is Build for code with no test at hand (a goroutine, a benchmark program):
// what went wrong is its error.
func Compile(path, soname, code string, args ...string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	gccArgs := []string{"-shared", "-fPIC", "-o", path}
	if soname != "" {
		gccArgs = append(gccArgs, "-Wl,-soname,"+soname)
	}
	// -x none after the source: what follows is named by its suffix again (a .map, a .o).
	gccArgs = append(append(gccArgs, "-x", "c", "-", "-x", "none"), args...)
	cmd := exec.Command("gcc", gccArgs...)
	cmd.Stdin = strings.NewReader(code)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gcc %s: %v\n%s", strings.Join(gccArgs, " "), err, out)
	}
	return nil
}
