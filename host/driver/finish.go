package driver

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pathfinder-dev/pathfinder/builtin/tables"
	"github.com/pathfinder-dev/pathfinder/internal/english"
)

// finish writes the merged answer into the report.
func (p *prober) finish(r *Report) {
	m := p.merge()
	r.Setup = p.setup
	r.DriverVersion, r.DriverVersionSource = m.driver, m.driverSource
	r.CUDADriverVersion, r.CUDADriverVersionSource = m.cuda, m.cudaSource
	r.L4TRelease, r.KernelModule = m.l4t, m.kernelModule
	r.DMIProductName = p.machine.product
	if m.gpus != nil {
		r.GPUs = m.gpus
	}
	r.Notes = append(slices.Clone(p.notes), m.notes...)
	if p.userSpace != nil {
		r.UserSpace = p.userSpace
		r.UserSpaceVersion = userSpaceLibs(p.userSpace).version()
	}
	switch {
	case m.driver != "":
		p.maxCUDA(r, r.DriverVersion)
		r.Runs = runs(rulesDriver(r))
		if p.setup == SetupTegra {
			r.Notes = append(r.Notes, "on Jetson the CUDA version comes with the JetPack release; max_cuda is read from NVIDIA's desktop and server driver table")
		}
	case m.l4t != "":
		r.Notes = append(r.Notes, fmt.Sprintf("Jetson (L4T %s): the CUDA version comes with the JetPack release, not from the driver table", m.l4t))
	case r.UserSpaceVersion != "" && p.setup != SetupTegra:
		// No kernel module's version (not loaded, not visible): the user-space driver's version says
		// what the driver supports once a module of the same version runs it.
		if p.maxCUDA(r, r.UserSpaceVersion) {
			r.MaxCUDASource = MaxCUDAFromUserSpace
		}
	}
	v := p.state(r)
	r.State, r.Summary, r.Hint = v.state, v.summary, v.hint
	// After the state, which speaks of the machine's own GPUs.
	if p.pinnedGPUs != nil {
		if len(m.gpus) > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s stands for the GPUs, in place of the %s the other methods found", ComputeCapabilityPin, english.Plural(len(m.gpus), "GPU")))
		}
		r.GPUs = p.pinnedGPUs
	}
	for _, in := range p.ignored {
		r.Ignored = append(r.Ignored, IgnoredInput{Name: in.Name, Value: in.Value, Reason: in.Reason})
		r.Summary += "; ignored " + in.String()
	}
}

// MaxCUDAFor is the newest CUDA toolkit NVIDIA's table lists for driver version v (by the Windows
// column where windows and NVIDIA fills it in), e.g. "12.4"; false when it is older than every row.
func MaxCUDAFor(v string, windows bool) (string, bool) {
	rows, err := tables.CUDAReleases()
	if err != nil {
		return "", false
	}
	best := newestFor(rows, v, windows)
	return best.Toolkit, best.Toolkit != ""
}

// newestFor is the row of the newest toolkit driver v runs; the zero row when none.
func newestFor(rows []tables.CUDARelease, v string, windows bool) tables.CUDARelease {
	var best tables.CUDARelease
	for _, row := range rows {
		floor := row.MinLinuxDriver
		if windows && row.MinWindowsDriver != "" {
			floor = row.MinWindowsDriver
		}
		if tables.CompareVersions(v, floor) >= 0 && (best.Toolkit == "" || tables.CompareVersions(row.Toolkit, best.Toolkit) > 0) {
			best = row
		}
	}
	return best
}

// maxCUDA looks driver (the kernel module's version, else the user space's) up in NVIDIA's table,
// and reports whether a row matched. On WSL2 the version is the Windows driver's, so the Windows
// column decides where NVIDIA fills it in.
func (p *prober) maxCUDA(r *Report, driver string) bool {
	rows, err := tables.CUDAReleases()
	if err != nil {
		r.Notes = append(r.Notes, err.Error())
		return false
	}
	windows := p.setup == SetupWSL2
	best := newestFor(rows, driver, windows)
	if best.Toolkit == "" {
		oldest := rows[len(rows)-1]
		r.Notes = append(r.Notes, fmt.Sprintf("driver %s is older than every CUDA toolkit in the table (%s needs %s)", driver, oldest.Release, oldest.MinLinuxDriver))
		return false
	}
	r.MaxCUDA, r.MaxCUDARelease = best.Toolkit, best.Release
	newest := rows[0]
	if major := func(v string) int { n, _ := strconv.Atoi(strings.Split(v, ".")[0]); return n }; major(driver) > major(newest.MinLinuxDriver) && !windows {
		r.Notes = append(r.Notes, fmt.Sprintf("driver %s is a newer branch than the table's newest release (%s, %s); it may support a newer CUDA than %s", driver, newest.Release, newest.MinLinuxDriver, best.Toolkit))
	}
	if r.CUDADriverVersion != "" && tables.CompareVersions(r.CUDADriverVersion, best.Toolkit) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s reports CUDA %s but NVIDIA lists driver %s for CUDA %s at most: a CUDA forward-compatibility package (cuda-compat) is probably in use", r.CUDADriverVersionSource, r.CUDADriverVersion, driver, best.Toolkit))
	}
	return true
}
