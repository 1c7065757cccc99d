package integration

import (
	"os"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
)

// TestMain says, in one line go test shows without -v, when tests skipped for want of NVIDIA's libraries.
func TestMain(m *testing.M) { os.Exit(realnv.Run(m)) }
