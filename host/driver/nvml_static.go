//go:build pathfinder_static

package driver

// libraryLoading says why this build cannot load libraries: it was built without purego so that the
// binary is fully static. The file methods, the ioctls and nvidia-smi still answer.
const libraryLoading = "this build cannot load libraries (built with -tags pathfinder_static)"

func probeNVML(p *prober) methodResult { return unavailable("%s", libraryLoading) }
