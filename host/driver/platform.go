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

// probePlatform classifies the machine from which device nodes and driver files exist. It decides
// how the other methods' answers are read (a Windows driver version on WSL2, an L4T release on Jetson)
// and, with the kernel driver's files and nodes it records, whether the driver's own code may run.
func probePlatform(p *prober) methodResult {
	var tegra []string
	var l4t string
	if data, err := os.ReadFile(p.path("/etc/nv_tegra_release")); err == nil {
		tegra = append(tegra, "/etc/nv_tegra_release")
		l4t, _ = parseTegraRelease(data)
	}
	if exists(p.path("/sys/module/nvgpu")) {
		tegra = append(tegra, "/sys/module/nvgpu")
	}
	if data, err := os.ReadFile(p.path("/proc/driver/nvidia/version")); err == nil {
		if pv, err := parseProcVersion(data); err == nil && pv.L4T {
			tegra = append(tegra, "an L4T NVRM line in /proc/driver/nvidia/version")
		}
	}
	p.machine = p.readMachine()
	var obs *observation
	if l4t != "" {
		obs = &observation{l4t: l4t}
	}
	switch {
	case p.machine.dxg:
		p.platform = PlatformWSL2
		return ok("wsl2: /dev/dxg is present; the driver runs on the Windows host and its libraries are in "+wslLibDir, nil)
	case len(tegra) > 0:
		p.platform = PlatformTegra
		d := "tegra: " + strings.Join(tegra, ", ")
		if l4t != "" {
			d += "; L4T " + l4t
		}
		return ok(d, obs)
	case p.machine.ctl:
		p.platform = PlatformNative
		return ok("native: /dev/nvidiactl is present", nil)
	}
	if len(p.machine.moduleFiles) > 0 {
		p.platform = PlatformContainerNoGPU
		return ok(fmt.Sprintf("%s: %s present but /dev/nvidiactl is not: a container started without GPU access, or device nodes not created yet", PlatformContainerNoGPU, strings.Join(p.machine.moduleFiles, " and ")), nil)
	}
	p.platform = PlatformNoDriver
	return ok("no-driver: no /dev/nvidiactl, /dev/dxg, /proc/driver/nvidia or /sys/module/nvidia", nil)
}

// machine is what the kernel driver's files and device nodes under Root say: whether the driver's
// own code (NVML, libcuda, nvidia-smi) would find everything it opens, or would create it.
type machine struct {
	moduleFiles  []string // /proc/driver/nvidia and /sys/module/nvidia where present: the module is loaded
	ctl          bool     // /dev/nvidiactl
	missingNodes []string // /dev/nvidiaN of a GPU the driver lists (its "Device Minor") that does not exist
	uvmModule    bool     // /sys/module/nvidia_uvm
	missingUVM   []string // /dev/nvidia-uvm and /dev/nvidia-uvm-tools where absent
	dxg          bool     // /dev/dxg: WSL2
	nvgpuNodes   bool     // Jetson's nvgpu driver with /dev/nvhost-ctrl-gpu and /dev/nvmap
}

func (p *prober) readMachine() machine {
	var m machine
	for _, f := range []string{"/proc/driver/nvidia", "/sys/module/nvidia"} {
		if exists(p.path(f)) {
			m.moduleFiles = append(m.moduleFiles, f)
		}
	}
	m.ctl = existsFollowed(p.path("/dev/nvidiactl"))
	m.dxg = exists(p.path("/dev/dxg"))
	m.uvmModule = exists(p.path("/sys/module/nvidia_uvm"))
	for _, n := range []string{"/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"} {
		if !existsFollowed(p.path(n)) {
			m.missingUVM = append(m.missingUVM, n)
		}
	}
	m.nvgpuNodes = exists(p.path("/sys/module/nvgpu")) && existsFollowed(p.path("/dev/nvhost-ctrl-gpu")) && existsFollowed(p.path("/dev/nvmap"))
	infos, _ := filepath.Glob(p.path("/proc/driver/nvidia/gpus/*/information"))
	sort.Strings(infos)
	for _, f := range infos {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if g, err := parseProcGPUInformation(data); err == nil && g.minor >= 0 {
			if node := fmt.Sprintf("/dev/nvidia%d", g.minor); !existsFollowed(p.path(node)) {
				m.missingNodes = append(m.missingNodes, node)
			}
		}
	}
	return m
}

// existsFollowed reports whether path exists with its symlinks followed: a dangling link to a device
// node is no node.
func existsFollowed(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// driverCodeBlocked says why the driver's own code must not run here, or "" when it may. Run where
// the kernel module is not loaded, NVML's and libcuda's initialisation create /dev/nvidiactl and
// the GPUs' nodes as root, and libcuda loads nvidia_uvm through the setuid nvidia-modprobe even when
// not root; nvidia-smi is NVML. A probe leaves the machine as it found it, so that code runs only
// where the module is loaded and every node it opens already exists. The libraries always act on
// this machine, so a probe of a captured Root never runs them.
func (p *prober) driverCodeBlocked(needUVM bool) string {
	m := p.machine
	switch {
	case !p.live:
		return "the probe reads a captured machine under " + p.root + ", and the driver's own code would ask this one"
	case p.platform == PlatformWSL2 || m.nvgpuNodes:
		return "" // WSL2's libraries talk to /dev/dxg, Jetson's to nvgpu's nodes: neither creates any
	case len(m.moduleFiles) == 0:
		return "the nvidia kernel module is not loaded (no /proc/driver/nvidia, no /sys/module/nvidia), and the driver's initialisation would create /dev/nvidiactl"
	case !m.ctl:
		return "/dev/nvidiactl does not exist, and the driver's initialisation would create it"
	case len(m.missingNodes) > 0:
		return fmt.Sprintf("%s does not exist (the device node of a GPU the driver lists), and the driver's initialisation would create it", strings.Join(m.missingNodes, ", "))
	case needUVM && !m.uvmModule:
		return "the nvidia_uvm kernel module is not loaded, and cuInit would load it (through nvidia-modprobe)"
	case needUVM && len(m.missingUVM) > 0:
		return fmt.Sprintf("%s does not exist, and cuInit would create it", strings.Join(m.missingUVM, " and "))
	}
	return ""
}

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
