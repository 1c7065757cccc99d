//go:build pathfinder_static

package driver

import (
	"context"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func TestProbe_staticBuild(t *testing.T) {
	r := Probe(context.Background(), Options{Root: filetree.New(t, liveFiles(nil)), rootIsLive: true, Methods: []string{methodNVML, methodLibcuda},
		LookupEnv: env(map[string]string{envNVMLLibrary: "/x", envCUDALibrary: "/y"})})
	for _, m := range []string{methodNVML, methodLibcuda} {
		wantOutcome(t, r, m, OutcomeUnavailable, "this build cannot load libraries (built with -tags pathfinder_static)")
	}
}
