package wasm

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDeps_wazero: wazero, a WebAssembly compiler, is this package's runtime and no one else's. Of
// the plugin contract (abi, built for wasip1 by plugin authors), the driver probe (host/driver,
// which the node labeller runs) and pathfinder's internal packages, only this package and the
// engine that runs plugins through it depend on wazero: configuration, the catalog, the checks of a
// candidate, observation, the sandbox's file system, the binary formats and the loader's model run
// no plugin, so each stays a package that is built and fuzzed without a compiler behind it (config
// once pulled all of wazero in for one constant). A package that comes to run plugins joins
// runsPlugins, on purpose.
func TestDeps_wazero(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	const (
		module = "github.com/pathfinder-dev/pathfinder/"
		wazero = "github.com/tetratelabs/wazero"
	)
	// internal/doctor asks the engine for every library, as a program would.
	runsPlugins := []string{module + "internal/wasm", module + "internal/engine", module + "internal/doctor"}
	// go list's Deps are what go list -deps prints, package by package.
	out, err := exec.Command(gobin, "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}",
		module+"abi/...", module+"host/driver/...", module+"internal/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for line := range strings.Lines(string(out)) {
		pkg, deps, _ := strings.Cut(strings.TrimSpace(line), " ")
		uses := slices.Contains(strings.Fields(deps), wazero)
		switch {
		case pkg == module+"internal/wasm" && !uses:
			t.Fatalf("%s does not depend on %s: this test reads go list wrong", pkg, wazero) // or it could not fail
		case uses && !slices.Contains(runsPlugins, pkg):
			t.Errorf("%s depends on %s (go list -deps %s), and it runs no plugin", pkg, wazero, pkg)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("go list listed %d packages:\n%s", checked, out)
	}
}
