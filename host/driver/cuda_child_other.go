//go:build !linux && !pathfinder_static

package driver

// runCUDAChild is Linux-only; probeLibcuda does not start a child elsewhere.
func runCUDAChild(libs []string) cudaChildResult {
	return cudaChildResult{Step: "dlopen", Error: errCannotLoad.Error()}
}
