//go:build pathfinder_static

package driver

// runCUDAChild cannot load libcuda in a static build; probeLibcuda does not start a child there, so
// this answers only a child started by hand.
func runCUDAChild(libs []string) cudaChildResult {
	return cudaChildResult{Step: "dlopen", Error: errCannotLoad.Error()}
}
