package driver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/english"
)

// probeSysfs reads the kernel module's version from /sys/module/nvidia/version.
func probeSysfs(p *prober) methodResult {
	path := p.path("/sys/module/nvidia/version")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return unavailable("no %s: the nvidia kernel module is not loaded here", "/sys/module/nvidia/version")
	}
	if err != nil {
		return failed("%v", err)
	}
	v, err := parseSysVersion(data)
	if err != nil {
		return failed("%s: %v", path, err)
	}
	return ok(v, &observation{driverVersion: v})
}

// probeProcfs reads /proc/driver/nvidia/version and, when present, the per-GPU information files.
// The files exist wherever the kernel module is loaded, also in containers without device access.
// Reading a GPU's information file takes a power reference on it, so a laptop GPU asleep in runtime
// D3 wakes up; that costs milliseconds, and names and UUIDs are worth it where nothing else answers.
func probeProcfs(p *prober) methodResult {
	obs := &observation{}
	var parts []string
	vpath := p.path("/proc/driver/nvidia/version")
	data, err := os.ReadFile(vpath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return failed("%v", err)
	default:
		pv, err := parseProcVersion(data)
		if err != nil {
			return failed("%s: %v", vpath, err)
		}
		if pv.L4T {
			obs.l4t = pv.Version
			parts = append(parts, fmt.Sprintf("L4T release %s (Jetson; not a driver version)", pv.Version))
		} else {
			obs.driverVersion, obs.kernelModule = pv.Version, pv.Module
			d := fmt.Sprintf("%s (%s kernel module", pv.Version, pv.Module)
			if pv.Arch != "" {
				d += ", " + pv.Arch
			}
			parts = append(parts, d+")")
		}
	}
	infos, _ := filepath.Glob(p.path("/proc/driver/nvidia/gpus/*/information"))
	sort.Strings(infos)
	var bad []string
	for _, f := range infos {
		data, err := os.ReadFile(f)
		if err == nil {
			var g gpuObs
			if g, err = parseProcGPUInformation(data); err == nil {
				obs.gpus = append(obs.gpus, g)
				continue
			}
		}
		bad = append(bad, fmt.Sprintf("%s: %v", filepath.Base(filepath.Dir(f)), err))
	}
	if len(infos) > 0 {
		parts = append(parts, english.Plural(len(obs.gpus), "GPU")+" in /proc/driver/nvidia/gpus")
	}
	if len(bad) > 0 {
		parts = append(parts, "unreadable: "+strings.Join(bad, "; "))
	}
	if len(parts) == 0 {
		return unavailable("no /proc/driver/nvidia: the nvidia kernel module is not loaded here")
	}
	if obs.driverVersion == "" && obs.l4t == "" && len(obs.gpus) == 0 {
		return failed("%s", strings.Join(parts, "; "))
	}
	return ok(strings.Join(parts, "; "), obs)
}

// parseProcGPUInformation reads /proc/driver/nvidia/gpus/<bus id>/information, which nv-procfs.c
// prints as "Key: \t value" lines ("Model:", "GPU UUID:", "Bus Location:", …).
func parseProcGPUInformation(data []byte) (gpuObs, error) {
	g := gpuObs{index: -1, minor: -1}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "Model":
			g.name = v
		case "GPU UUID":
			// Unprivileged readers may see the UUID masked with '?'.
			if strings.HasPrefix(v, "GPU-") && !strings.Contains(v, "?") {
				g.uuid = v
			}
		case "Bus Location":
			g.busID = canonicalBusID(v)
		case "Device Minor":
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				g.minor = n
			}
		}
	}
	if g.busID == "" {
		return gpuObs{}, fmt.Errorf("no valid \"Bus Location:\" line")
	}
	return g, nil
}
