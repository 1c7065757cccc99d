// Command cudaversion loads the CUDA driver library and NVRTC through pathfinder and asks each for
// its version, calling them through purego: no cgo, no CUDA headers, no GPU needed.
//
//	CGO_ENABLED=0 go build ./examples/cudaversion && ./cudaversion
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/ebitengine/purego"

	"github.com/pathfinder-dev/pathfinder/host"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "cudaversion:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cuda, err := host.Load(ctx, "cuda") // libcuda.so.1, the driver's own library
	if err != nil {
		return err
	}
	var cuDriverGetVersion func(version *int32) int32 // CUresult cuDriverGetVersion(int *driverVersion)
	purego.RegisterLibFunc(&cuDriverGetVersion, cuda.Handle, "cuDriverGetVersion")
	var driverVersion int32
	if rc := cuDriverGetVersion(&driverVersion); rc != 0 {
		return fmt.Errorf("cuDriverGetVersion: CUresult %d (%s)", rc, cuda.Path)
	}
	fmt.Printf("cuda  %s (%s)\n", cuda.Path, cuda.FoundVia)
	fmt.Printf("cuDriverGetVersion: %d (CUDA %d.%d)\n", driverVersion, driverVersion/1000, driverVersion%1000/10)

	nvrtc, err := host.Load(ctx, "nvrtc")
	if err != nil {
		return err
	}
	var nvrtcVersion func(major, minor *int32) int32 // nvrtcResult nvrtcVersion(int *major, int *minor)
	purego.RegisterLibFunc(&nvrtcVersion, nvrtc.Handle, "nvrtcVersion")
	var major, minor int32
	if rc := nvrtcVersion(&major, &minor); rc != 0 {
		return fmt.Errorf("nvrtcVersion: nvrtcResult %d (%s)", rc, nvrtc.Path)
	}
	fmt.Printf("nvrtc %s (%s)\n", nvrtc.Path, nvrtc.FoundVia)
	fmt.Printf("nvrtcVersion: %d.%d\n", major, minor)
	return nil
}
