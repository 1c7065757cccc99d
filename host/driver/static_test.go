//go:build pathfinder_static

package driver

import "testing"

func TestProbe_staticBuild(t *testing.T) {
	r := probe(t, fakeRoot(t, nil), []string{methodNVML, methodLibcuda}, map[string]string{envNVMLLibrary: "/x", envCUDALibrary: "/y"})
	for _, m := range []string{methodNVML, methodLibcuda} {
		wantOutcome(t, r, m, OutcomeUnavailable, "this build cannot load libraries (built with -tags pathfinder_static)")
	}
}
