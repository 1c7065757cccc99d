package driver

import (
	"errors"
	"fmt"
	"time"
)

// ErrNoDriver is what Report.Err wraps when the machine has no working NVIDIA driver.
var ErrNoDriver = errors.New("no working nvidia driver")

// Setup says how the driver is set up on this machine, as its device nodes and files tell.
type Setup string

const (
	SetupNative         Setup = "native"                          // /dev/nvidiactl is present
	SetupWSL2           Setup = "wsl2"                            // /dev/dxg: the driver runs on the Windows host
	SetupTegra          Setup = "tegra"                           // Jetson: nv_tegra_release, nvgpu or an L4T NVRM line
	SetupContainerNoGPU Setup = "container-without-device-access" // driver files, no device nodes
	SetupNoDriver       Setup = "no-driver"
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
	PCIClass                string   `json:"pci_class,omitempty"`                 // the PCI class: "0x030200" a 3D controller, "0x030000" a VGA-compatible one
	Sources                 []string `json:"sources"`                             // every method that saw this GPU
}

// MaxCUDAFromUserSpace is Report.MaxCUDASource when MaxCUDA was looked up by the user-space
// driver's version, no kernel module's being known.
const MaxCUDAFromUserSpace = methodUserSpace

// IgnoredInput is a variable the probe was given but did not use, and why: a
// PATHFINDER_DRIVER_VERSION that is no driver version.
type IgnoredInput struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Reason string `json:"reason"`
}

// Report is what Probe found. Every fact names the method it came from; where methods disagree the
// highest-authority one wins and Notes says so.
type Report struct {
	// State names the driver's state in one word (StateWorking, StateNotLoaded, …); Summary says it
	// in one line with the versions, and Hint what to do about it ("" when nothing needs doing).
	State   State  `json:"state"`
	Summary string `json:"summary"`
	Hint    string `json:"hint,omitempty"`

	Setup Setup `json:"setup"`
	// DriverVersion is the kernel module's version (on WSL2, the Windows driver's).
	DriverVersion       string `json:"driver_version,omitempty"`
	DriverVersionSource string `json:"driver_version_source,omitempty"`
	KernelModule        string `json:"kernel_module,omitempty"` // "open" or "proprietary", from /proc
	// DMIProductName is the machine's model as its firmware names it (/sys/class/dmi/id/product_name),
	// e.g. "PowerEdge XE9680"; a cloud VM's is often its instance type.
	DMIProductName string `json:"dmi_product_name,omitempty"`
	// L4TRelease is set on Jetson, where /proc shows the L4T release instead of a driver version.
	L4TRelease string `json:"l4t_release,omitempty"`
	// UserSpaceVersion is the version of the driver's user-space libraries, read from the name of the
	// file the dynamic loader would map (libnvidia-ml.so.1 → libnvidia-ml.so.550.163.01, else
	// libcuda's), without loading it; UserSpace lists each library. Both are empty when the
	// userspace method did not run.
	UserSpaceVersion string             `json:"user_space_version,omitempty"`
	UserSpace        []UserSpaceLibrary `json:"user_space,omitempty"`
	// CUDADriverVersion is the CUDA version the user-mode driver implements, e.g. "13.0".
	CUDADriverVersion       string `json:"cuda_driver_version,omitempty"`
	CUDADriverVersionSource string `json:"cuda_driver_version_source,omitempty"`
	// MaxCUDA is the newest CUDA toolkit NVIDIA's release notes list for this driver, e.g. "12.4", and
	// MaxCUDARelease the row that decided it, e.g. "CUDA 12.4 Update 1".
	MaxCUDA        string `json:"max_cuda,omitempty"`
	MaxCUDARelease string `json:"max_cuda_release,omitempty"`
	// MaxCUDASource is MaxCUDAFromUserSpace when no kernel module's version was found and MaxCUDA was looked
	// up by UserSpaceVersion (the driver installed, its module not loaded); "" when by DriverVersion.
	MaxCUDASource string `json:"max_cuda_source,omitempty"`
	// Runs says, for CUDA 11, 12 and 13, whether this driver runs it (natively up to which minor, by
	// minor-version compatibility, or not, with the driver that would), by NVIDIA's rules from
	// DriverVersion and MaxCUDA (on WSL2 the Windows numbers); nil without a driver version.
	Runs    []CUDASupport   `json:"runs,omitempty"`
	GPUs    []GPU           `json:"gpus"`
	Methods []MethodOutcome `json:"methods"`
	Notes   []string        `json:"notes,omitempty"` // disagreements between methods and warnings
	// Ignored lists the variables the probe was given but did not use, and why (a
	// PATHFINDER_DRIVER_VERSION that is no driver version, a ComputeCapabilityPin that is no list of
	// compute capabilities); Summary ends by naming them.
	Ignored  []IgnoredInput `json:"ignored,omitempty"`
	Duration time.Duration  `json:"duration_ns"`
}

// Err returns nil when the driver works (Working), and otherwise an error that wraps ErrNoDriver and
// says the state.
func (r *Report) Err() error {
	if r.Working() {
		return nil
	}
	if r.Summary == "" {
		return ErrNoDriver
	}
	return fmt.Errorf("%w: %s", ErrNoDriver, r.Summary)
}
