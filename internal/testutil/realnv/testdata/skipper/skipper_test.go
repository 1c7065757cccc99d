// Package skipper is a package whose one test needs NVIDIA's libraries, for TestSkip_quiet: go test
// runs it with PATHFINDER_REALNV_DIR naming an empty directory.
package skipper

import (
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
)

func TestNeedsCudart(t *testing.T) {
	realnv.Get(t, "trixie/libcudart12")
}
