package driver

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/compat"
)

// VariantConfig is one element of Report.VariantConfigs: one feature config of variantlib's
// provider protocol, in the form variantlib's plugin runner serializes it (wheelnext/variantlib
// 0.0.3, variantlib/plugins/_subprocess.py, process_configs): the feature's name, its values most
// preferred first, and whether a wheel may carry several of them.
type VariantConfig struct {
	Name       string   `json:"name"`
	Values     []string `json:"values"`
	MultiValue bool     `json:"multi_value"`
}

// The provider's ranges (NvidiaVariantPlugin.UMD_MAJOR_RANGE, UMD_MINOR_RANGE): CUDA 11 to 15,
// minors 0 to 20; a CUDA version below 11.0 or above 15.20 turns its detection off.
const (
	variantMinMajor, variantMaxMajor = 11, 15
	variantMaxMinor                  = 20
)

// VariantConfigs is what NVIDIA's wheel-variant provider, nvidia-variant-provider, returns from
// get_supported_configs for the "nvidia" namespace on a machine with this driver and GPUs of these
// compute capabilities ("9.0"), by its rules (wheelnext/nvidia-variant-provider at commit ffea5d3,
// January 2026, nvidia_variant_provider/plugin.py, version 0.0.2):
//
//   - cuda_version_lower_bound: the driver's CUDA version and every one below it down to 11, each
//     major's minors from 20 down and then the major alone: 12.4, 12.3, …, 12.0, 12, 11.20, …, 11.0, 11;
//   - cuda_version_upper_bound: every version above it up to 15.20, newest first, the driver's own
//     major without its major-only value: 15.20, …, 15.0, 15, …, 13.0, 13, 12.20, …, 12.5;
//   - sm_arch (multi_value): from the highest compute capability, its minors down to 0 as
//     "<major><minor>_real", then "<major>0_virtual": 90_real, 90_virtual; none below 5.0.
//
// The CUDA version is the one the user-mode driver reports (d.CUDA), as the provider asks NVML for
// it, else MaxCUDA, which NVIDIA's table gives for every driver it lists. Outside CUDA 11.0 to 15.20
// there are no configs, as with the provider; the result is never nil.
func variantConfigs(d compat.Driver, computeCapabilities []string) []VariantConfig {
	cuda := d.CUDA
	if cuda == "" {
		cuda = d.MaxCUDA
	}
	umd, err := compat.ParseVersion(cuda)
	if err != nil || umd.Major < variantMinMajor || umd.Major > variantMaxMajor || umd.Major == variantMaxMajor && umd.Minor > variantMaxMinor {
		return []VariantConfig{}
	}
	var lower, upper []string
	for major := umd.Major; major >= variantMinMajor; major-- {
		top := variantMaxMinor
		if major == umd.Major {
			top = umd.Minor
		}
		lower = append(append(lower, minorsDown(major, top, 0)...), strconv.Itoa(major))
	}
	for major := variantMaxMajor; major > umd.Major; major-- {
		upper = append(append(upper, minorsDown(major, variantMaxMinor, 0)...), strconv.Itoa(major))
	}
	upper = append(upper, minorsDown(umd.Major, variantMaxMinor, umd.Minor+1)...)
	configs := []VariantConfig{{Name: "cuda_version_lower_bound", Values: lower}}
	if len(upper) > 0 {
		configs = append(configs, VariantConfig{Name: "cuda_version_upper_bound", Values: upper})
	}
	if major, minor, ok := highestComputeCapability(computeCapabilities); ok && major >= 5 {
		var sm []string
		for m := minor; m >= 0; m-- {
			sm = append(sm, fmt.Sprintf("%d%d_real", major, m))
		}
		configs = append(configs, VariantConfig{Name: "sm_arch", Values: append(sm, fmt.Sprintf("%d0_virtual", major)), MultiValue: true})
	}
	return configs
}

// minorsDown is "major.from", …, "major.to".
func minorsDown(major, from, to int) []string {
	var out []string
	for m := from; m >= to; m-- {
		out = append(out, fmt.Sprintf("%d.%d", major, m))
	}
	return out
}

// highestComputeCapability is the highest of "major.minor" values, by major then minor; values of
// another form are passed over.
func highestComputeCapability(ccs []string) (major, minor int, ok bool) {
	for _, cc := range ccs {
		a, b, found := strings.Cut(cc, ".")
		x, errA := strconv.Atoi(a)
		y, errB := strconv.Atoi(b)
		if !found || errA != nil || errB != nil || x < 0 || y < 0 {
			continue
		}
		if !ok || x > major || x == major && y > minor {
			major, minor, ok = x, y, true
		}
	}
	return major, minor, ok
}
