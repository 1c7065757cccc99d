//go:build pathfinder_static

package driver

import "errors"

// errCannotLoad says why this build cannot load libraries: it was built without purego so that the
// binary is fully static. The file methods, the ioctls and nvidia-smi still answer.
var errCannotLoad = errors.New("this build cannot load libraries (built with -tags pathfinder_static)")

func probeNVML(p *prober) methodResult { return unavailable("%v", errCannotLoad) }
