package driver

import (
	"errors"
	"time"
)

// ErrNoDriver is what Report.Err returns when no method found an NVIDIA driver or GPU.
var ErrNoDriver = errors.New("pathfinder: no nvidia driver found")

// Platform values of Report.Platform.
const (
	PlatformNative         = "native"                          // /dev/nvidiactl is present
	PlatformWSL2           = "wsl2"                            // /dev/dxg: the driver runs on the Windows host
	PlatformTegra          = "tegra"                           // Jetson: nv_tegra_release, nvgpu or an L4T NVRM line
	PlatformContainerNoGPU = "container-without-device-access" // driver files, no device nodes
	PlatformNoDriver       = "no-driver"
)

const (
	pciTableSource        = "pci-id-table (inferred)"
	nvidiaVendorID uint16 = 0x10de
)

// Outcome says how one method went.
type Outcome string

const (
	OutcomeOK          Outcome = "ok"          // it ran and answered
	OutcomeFailed      Outcome = "failed"      // it ran, or tried to, and something is wrong; Detail says what
	OutcomeSkipped     Outcome = "skipped"     // not run: not asked for, or not needed; Detail says why
	OutcomeUnavailable Outcome = "unavailable" // what it needs is not on this machine or in this build
)

// MethodOutcome records one method's run.
type MethodOutcome struct {
	Name     string        `json:"name"`
	Outcome  Outcome       `json:"outcome"`
	Detail   string        `json:"detail,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// GPU is one NVIDIA GPU, merged from every method that saw it.
type GPU struct {
	// Index is the driver's (NVML, nvidia-smi) index; when neither listed the GPU it is the position in
	// PCI bus order, or -1 for a GPU on the bus that the driver's own tools left out.
	Index                   int      `json:"index"`
	Name                    string   `json:"name,omitempty"`
	PCIBusID                string   `json:"pci_bus_id,omitempty"` // "0000:65:00.0", sysfs style
	DeviceID                string   `json:"device_id,omitempty"`  // PCI device id, "0x2330"
	UUID                    string   `json:"uuid,omitempty"`
	ComputeCapability       string   `json:"compute_capability,omitempty"`        // "9.0"
	ComputeCapabilitySource string   `json:"compute_capability_source,omitempty"` // "nvml", "libcuda", "nvidia-smi" or "pci-id-table (inferred)"
	KernelDriver            string   `json:"kernel_driver,omitempty"`             // the driver the PCI device is bound to: "nvidia", "vfio-pci", "nouveau"
	Sources                 []string `json:"sources"`                             // every method that saw this GPU
}

// Report is what Probe found. Every fact names the method it came from; where methods disagree the
// highest-authority one wins and Notes says so.
type Report struct {
	Platform string `json:"platform"`
	// DriverVersion is the kernel driver's version (on WSL2, the Windows driver's).
	DriverVersion       string `json:"driver_version,omitempty"`
	DriverVersionSource string `json:"driver_version_source,omitempty"`
	KernelModule        string `json:"kernel_module,omitempty"` // "open" or "proprietary", from /proc
	// L4TRelease is set on Jetson, where /proc shows the L4T release instead of a driver version.
	L4TRelease string `json:"l4t_release,omitempty"`
	// CUDADriverVersion is the CUDA version the user-mode driver implements, e.g. "13.0".
	CUDADriverVersion       string `json:"cuda_driver_version,omitempty"`
	CUDADriverVersionSource string `json:"cuda_driver_version_source,omitempty"`
	// MaxCUDA is the newest CUDA toolkit NVIDIA's release notes list for this driver, e.g. "12.4", and
	// MaxCUDARelease the row that decided it, e.g. "CUDA 12.4 Update 1".
	MaxCUDA        string          `json:"max_cuda,omitempty"`
	MaxCUDARelease string          `json:"max_cuda_release,omitempty"`
	GPUs           []GPU           `json:"gpus"`
	Methods        []MethodOutcome `json:"methods"`
	Notes          []string        `json:"notes,omitempty"` // disagreements between methods and warnings
	Duration       time.Duration   `json:"duration_ns"`
}

// Err returns ErrNoDriver when no method found a driver, an L4T release or a GPU, and nil otherwise.
func (r *Report) Err() error {
	if r.DriverVersion == "" && r.L4TRelease == "" && len(r.GPUs) == 0 {
		return ErrNoDriver
	}
	return nil
}
