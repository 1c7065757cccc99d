// Command gpucheck is the half of scripts/gpu-check.sh that is Go: "gpucheck cuda" loads libcuda
// through pathfinder's Go API and asks the driver itself (cuInit, cuDriverGetVersion,
// cuDeviceGetCount, each device's name, PCI bus id, UUID and compute capability) through purego;
// "gpucheck table DIR" reads what the script saved in DIR and prints each fact as each of
// pathfinder's methods reports it beside what the driver's own tools say, then every disagreement.
//
//	CGO_ENABLED=0 go build ./scripts/gpucheck && ./gpucheck cuda
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func main() { os.Exit(doMain(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }

const usage = "usage: gpucheck cuda | gpucheck table DIR"

func doMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 1 && args[0] == "cuda":
		res := askCUDA(ctx)
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
		if res.Error != "" {
			fmt.Fprintln(stderr, "gpucheck: cuda:", res.Error)
			return 1
		}
		return 0
	case len(args) == 2 && args[0] == "table":
		t, err := readSaved(args[1])
		if err != nil {
			fmt.Fprintln(stderr, "gpucheck:", err)
			return 2
		}
		if n := t.write(stdout); n > 0 {
			return 1
		}
		return 0
	}
	fmt.Fprintln(stderr, usage)
	return 2
}

// cudaAnswer is what libcuda itself said, as "gpucheck cuda" prints it.
type cudaAnswer struct {
	Library       string       `json:"library,omitempty"` // the file pathfinder loaded
	FoundVia      string       `json:"found_via,omitempty"`
	DriverVersion int          `json:"driver_version,omitempty"` // cuDriverGetVersion: 12040
	DeviceCount   int          `json:"device_count"`
	Devices       []cudaDevice `json:"devices"`
	Error         string       `json:"error,omitempty"` // the first call that failed, and its CUresult
}

type cudaDevice struct {
	Ordinal           int    `json:"ordinal"`
	Name              string `json:"name,omitempty"`
	PCIBusID          string `json:"pci_bus_id,omitempty"`
	UUID              string `json:"uuid,omitempty"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	Error             string `json:"error,omitempty"`
}

// cudaVersion writes cuDriverGetVersion's 12040 as 12.4, as nvidia-smi and pathfinder do.
func cudaVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}
