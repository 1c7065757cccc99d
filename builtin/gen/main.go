// Command gen rebuilds builtin/steps.wasm from the C sources in builtin/steps with clang, and records
// the compiler and a hash of every source file in builtin/steps.wasm.sum so a test can tell when the
// module is stale. Run it as `go generate ./builtin` from the repository root.
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
