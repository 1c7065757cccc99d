package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// probeSetup classifies the machine from which device nodes and driver files exist. It decides
// how the other methods' answers are read (a Windows driver version on WSL2, an L4T release on Jetson)
// and, with the kernel driver's files and nodes it records, whether the driver's own code may run.
func probeSetup(p *prober) methodResult {
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
		p.setup = SetupWSL2
		return ok("wsl2: /dev/dxg is present; the driver runs on the Windows host and its libraries are in "+wslLibDir, nil)
	case len(tegra) > 0:
		p.setup = SetupTegra
		d := "tegra: " + strings.Join(tegra, ", ")
		if l4t != "" {
			d += "; L4T " + l4t
		}
		return ok(d, obs)
	case p.machine.ctl:
		p.setup = SetupNative
		return ok("native: /dev/nvidiactl is present", nil)
	}
	if len(p.machine.moduleFiles) > 0 {
		p.setup = SetupContainerNoGPU
		return ok(fmt.Sprintf("%s: %s present but /dev/nvidiactl is not: a container started without GPU access, or device nodes not created yet", SetupContainerNoGPU, strings.Join(p.machine.moduleFiles, " and ")), nil)
	}
	p.setup = SetupNoDriver
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
	product      string   // /sys/class/dmi/id/product_name: the machine's model, for the node's labels
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
	if data, err := os.ReadFile(p.path("/sys/class/dmi/id/product_name")); err == nil {
		m.product = strings.TrimSpace(string(data))
	}
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
	case p.setup == SetupWSL2 || m.nvgpuNodes:
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
