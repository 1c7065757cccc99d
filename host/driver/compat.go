package driver

import "github.com/pathfinder-dev/pathfinder/internal/compat"

// VariantConfigs is what NVIDIA's wheel-variant provider (nvidia-variant-provider) returns from
// get_supported_configs for the "nvidia" namespace on this machine: cuda_version_lower_bound,
// cuda_version_upper_bound and, from the highest compute capability, sm_arch. It needs no NVML;
// the pins (PATHFINDER_DRIVER_VERSION, ComputeCapabilityPin) ask it of another machine. Empty, not
// nil, unless the driver works.
func (r *Report) VariantConfigs() []VariantConfig {
	if !r.Working() {
		return []VariantConfig{}
	}
	var ccs []string
	for _, g := range r.GPUs {
		ccs = append(ccs, g.ComputeCapability)
	}
	return variantConfigs(rulesDriver(r), ccs)
}

// rulesDriver is the driver as compat's rules see it: on WSL2 the driver is the Windows one.
func rulesDriver(r *Report) compat.Driver {
	return compat.Driver{Version: r.DriverVersion, MaxCUDA: r.MaxCUDA, Windows: r.Setup == SetupWSL2, CUDA: r.CUDADriverVersion}
}
