// Package compat holds NVIDIA's rules for whether a driver runs a CUDA version: native support up
// to the driver's own CUDA, and minor-version compatibility within a major from its minimum driver
// on. host/driver says by them which majors a driver runs (Report.Runs) and what NVIDIA's
// wheel-variant provider would answer.
package compat

import (
	"fmt"
	"slices"

	"github.com/pathfinder-dev/pathfinder/builtin/tables"
)

// Driver is a driver as the rules see it.
type Driver struct {
	Version string // the driver's version, "550.54.14"
	// MaxCUDA is the newest CUDA it runs natively, from NVIDIA's toolkit→driver table ("12.4"):
	// host/driver's Report.MaxCUDA.
	MaxCUDA string
	// Windows says the Windows numbers apply: a Windows target, or WSL2, whose driver is the Windows one.
	Windows bool
	// CUDA is the CUDA version the user-mode driver reports (cuDriverGetVersion, NVML), where a
	// method asked it: Report.CUDADriverVersion. Only VariantConfigs reads it, as NVIDIA's
	// provider reads NVML's; the rules go by MaxCUDA.
	CUDA string
}

// Compat says how a driver runs a CUDA version.
type Compat string

const (
	Full         Compat = "full"          // cuda ≤ MaxCUDA
	MinorVersion Compat = "minor-version" // same major, newer minor (or minor unknown), driver ≥ the major's minimum
)

// Verdict is Check's answer.
type Verdict struct {
	Runs   bool
	Compat Compat // how, when Runs
	// Reason says why not, when !Runs: "CUDA 13: driver 550.54.14 runs CUDA 12.4 at most (CUDA 13
	// needs 580.65.06)".
	Reason string
	// Note, when Compat is MinorVersion, says so, and that this driver cannot JIT-compile PTX from
	// the newer minor.
	Note string
}

// Check applies NVIDIA's rule: a driver runs every CUDA up to its own (MaxCUDA), every older major
// included; a newer minor of a major (or the major alone, its minor unknown) runs from that major's
// minimum driver on (minor-version compatibility); otherwise it does not run. A newer major never
// does: each minimum is its major's first driver, which runs the major's .0 natively (only Windows'
// 13 is published as a branch, ">= 580", and there the minimum decides).
func (d Driver) Check(cuda Version) Verdict {
	version := d.Version
	if version == "" {
		version = "of unknown version"
	}
	max, err := ParseVersion(d.MaxCUDA)
	switch {
	case d.MaxCUDA == "":
		return Verdict{Reason: fmt.Sprintf("CUDA %s: the newest CUDA driver %s runs is not known", cuda, version)}
	case err != nil || !max.HasMinor:
		return Verdict{Reason: fmt.Sprintf("CUDA %s: the newest CUDA driver %s runs, %q, is not a major.minor CUDA version", cuda, version, d.MaxCUDA)}
	case cuda.within(max):
		return Verdict{Runs: true, Compat: Full}
	}
	min, known := MinimumDriver(cuda.Major, d.Windows)
	if known && d.Version != "" && tables.CompareVersions(d.Version, min) >= 0 {
		ptx := "CUDA " + cuda.String()
		if !cuda.HasMinor {
			ptx = fmt.Sprintf("a newer CUDA %d minor", cuda.Major)
		}
		return Verdict{Runs: true, Compat: MinorVersion, Note: fmt.Sprintf(
			"CUDA %s runs by minor-version compatibility (driver %s runs CUDA %s natively): PTX from %s cannot be JIT-compiled by this driver",
			cuda, d.Version, max, ptx)}
	}
	reason := fmt.Sprintf("CUDA %s: driver %s runs CUDA %s at most", cuda, version, max)
	if known {
		reason += fmt.Sprintf(" (CUDA %s needs %s)", cuda, min)
	}
	return Verdict{Reason: reason}
}

// minimumDriver is one row of NVIDIA's "CUDA Toolkit and Minimum Required Driver Version for CUDA
// Minor Version Compatibility": from these drivers on, every minor of the major runs.
type minimumDriver struct {
	major          int
	linux, windows string
}

// minimumDrivers, from NVIDIA's own documents (held one by one in TestMinimumDriver):
//
//   - CUDA Toolkit Release Notes, table "CUDA Toolkit and Minimum Required Driver Version for CUDA
//     Minor Version Compatibility", https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html:
//     CUDA 12.x >=525.60.13 (Linux x86_64) and >=527.41 (Windows); CUDA 11.x >= 450.80.02* and
//     >=452.39* (the asterisk: a minimum other than the toolkit's own driver, allowed in
//     compatibility mode).
//   - CUDA Compatibility guide, "Minor Version Compatibility", Table 1 (release r590),
//     https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html: CUDA 13.x
//     ">= 580", 12.x ">= 525", 11.x ">= 450", with the note that 11.x needs 450.80.02 (Linux) / 452.39
//     (Windows) across the family.
//
// For 13 NVIDIA publishes a branch, ">= 580", and no Windows number of its own (the release notes'
// toolkit table gives CUDA 13.x's Windows driver as N/A: it is no longer bundled). Linux's 580.65.06
// is the first driver of that branch, CUDA 13.0 GA's (builtin/tables/cuda_toolkit_driver_versions.tsv);
// Windows keeps the published "580".
var minimumDrivers = []minimumDriver{
	{major: 11, linux: "450.80.02", windows: "452.39"},
	{major: 12, linux: "525.60.13", windows: "527.41"},
	{major: 13, linux: "580.65.06", windows: "580"},
}

// Majors are the CUDA majors with minor-version compatibility, oldest first: 11, 12, 13.
func Majors() []int {
	out := make([]int, len(minimumDrivers))
	for i, m := range minimumDrivers {
		out[i] = m.major
	}
	return out
}

// MinimumDriver is the minimum driver of major's minor-version compatibility: Linux 11: 450.80.02,
// 12: 525.60.13, 13: 580.65.06; Windows 11: 452.39, 12: 527.41, 13: 580. False for a major
// without minor-version compatibility (before 11) or one NVIDIA has not published yet.
func MinimumDriver(major int, windows bool) (string, bool) {
	i := slices.IndexFunc(minimumDrivers, func(m minimumDriver) bool { return m.major == major })
	if i < 0 {
		return "", false
	}
	if windows {
		return minimumDrivers[i].windows, true
	}
	return minimumDrivers[i].linux, true
}
