// Package skipper is a package whose one test needs NVIDIA's libraries, for TestSaySkipped: go test
// runs it with PATHFINDER_REALNV_DIR naming an empty directory.
package skipper

import (
	"os"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
)

func TestMain(m *testing.M) { os.Exit(realnv.Run(m)) }

func TestNeedsCudart(t *testing.T) {
	realnv.Get(t, "trixie/libcudart12")
}
