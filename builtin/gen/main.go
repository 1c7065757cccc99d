// Command gen writes the step tables (builtin/steps_gen.go and steps_gen.c, from each step's
// abi.Plugin under plugins/), rebuilds builtin/steps.wasm from the C of every step and of the SDK
// with clang, and records the compiler and a hash of every source in builtin/steps.wasm.sum so a
// test can tell when the module is stale. Run it as `go generate ./builtin`.
package main

import (
	"fmt"
	"os"

	"github.com/pathfinder-dev/pathfinder/builtin/internal/wasmbuild"
)

func main() {
	if err := wasmbuild.Generate("."); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
