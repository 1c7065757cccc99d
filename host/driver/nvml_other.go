//go:build !linux && !pathfinder_static

package driver

import "errors"

// errCannotLoad says why this build cannot load libraries: the NVML and libcuda probes are written
// for Linux's libnvidia-ml.so.1 and libcuda.so.1.
var errCannotLoad = errors.New("loading the NVIDIA libraries is implemented for Linux only")

func probeNVML(p *prober) methodResult { return unavailable("%v", errCannotLoad) }
