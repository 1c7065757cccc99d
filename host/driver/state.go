package driver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/english"
)

// State is what the machine's driver is, in one word: Report.State.
type State string

const (
	StateWorking      State = "working"                  // kernel module loaded, its device nodes present, its libraries the same version
	StateNoDriver     State = "no-driver"                // no NVIDIA driver software at all
	StateNotLoaded    State = "kernel-module-not-loaded" // the user-space driver is installed, the kernel module is not loaded
	StateMismatch     State = "version-mismatch"         // the kernel module and the user-space libraries are different versions
	StateNoDevices    State = "container-without-device-access"
	StateNoUserSpace  State = "user-space-driver-missing" // the kernel module is loaded, libcuda.so.1 and libnvidia-ml.so.1 are not where the loader looks
	StateNotAnswering State = "driver-not-answering"      // everything is in place, but the driver's own code cannot reach it
	StateWSL2         State = "wsl2"                      // the driver is the Windows host's
	StateTegra        State = "tegra"                     // Jetson: the driver comes with the L4T/JetPack release
	StatePinned       State = "pinned"                    // PATHFINDER_DRIVER_VERSION names the version; the machine decides nothing
)

// Working reports whether CUDA programs can use the driver: State is working or pinned, or WSL2 or
// Tegra with a driver version or L4T release found.
func (r *Report) Working() bool {
	switch r.State {
	case StateWorking, StatePinned:
		return true
	case StateWSL2, StateTegra:
		return r.DriverVersion != "" || r.L4TRelease != ""
	}
	return false
}

// verdict is a state with its one-line summary and hint.
type verdict struct {
	state         State
	summary, hint string
}

// state names what the methods found, as one state with the versions.
func (p *prober) state(r *Report) verdict {
	kernel, _ := pick(p.claims(func(o observation) string { return o.driverVersion }, kernelSources...), driverRank)
	user := userSpaceLibs(p.userSpace)
	uv := user.version()
	switch {
	case r.DriverVersionSource == methodOverride:
		return verdict{StatePinned, fmt.Sprintf("driver %s, pinned by %s; the machine was not asked", r.DriverVersion, envOverride),
			"unset " + envOverride + " to probe the machine"}
	case p.setup == SetupWSL2:
		v := verdict{state: StateWSL2, summary: "WSL2: the driver is the Windows host's", hint: "update the driver on Windows; do not install a Linux NVIDIA driver inside WSL"}
		if r.DriverVersion != "" {
			v.summary = fmt.Sprintf("WSL2: the Windows host's driver %s", r.DriverVersion)
		} else {
			v.summary += ", and no method could reach it"
		}
		if cuda := user.lib("libcuda.so.1"); cuda != nil && cuda.Via != wslLibDir && !strings.HasPrefix(cuda.Path, wslLibDir+"/") {
			v.summary += fmt.Sprintf("; libcuda.so.1 comes from %s, not from %s", cuda.Path, wslLibDir)
			v.hint = "remove the Linux driver's libcuda (" + cuda.Path + "): inside WSL only the one in " + wslLibDir + " reaches the Windows driver"
		}
		return v
	case p.setup == SetupTegra:
		v := verdict{state: StateTegra, summary: "Jetson", hint: "the CUDA version comes with the JetPack release: upgrade JetPack to change it"}
		if r.L4TRelease != "" {
			v.summary += " (L4T " + r.L4TRelease + ")"
		}
		if r.DriverVersion != "" {
			v.summary += ", driver " + r.DriverVersion
		}
		return v
	}
	if v, ok := p.mismatch(kernel.value, user); ok {
		return v
	}
	switch {
	case len(p.machine.moduleFiles) == 0 && !user.any():
		v := verdict{StateNoDriver, "no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1",
			"install NVIDIA's driver (your distribution's nvidia-driver package, or NVIDIA's installer); in a container, start it with GPU access (docker run --gpus all) on a host that has the driver"}
		if n := len(r.GPUs); n > 0 {
			v.summary = fmt.Sprintf("no NVIDIA driver for the %s on the PCI bus: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1", english.Plural(n, "GPU"))
		}
		if stub := user.lib("libcuda.so.1"); stub != nil && stub.Stub {
			v.summary += fmt.Sprintf("; the libcuda.so.1 the loader finds (%s, via %s) is the CUDA toolkit's stub", stub.Path, stub.Via)
		}
		if p.userSpace == nil {
			v.summary = "no NVIDIA kernel module; the user-space driver was not looked for (the userspace method did not run)"
		}
		return v
	case len(p.machine.moduleFiles) == 0:
		what := "NVIDIA's user-space driver"
		if uv != "" {
			what += " " + uv
		}
		return verdict{StateNotLoaded, what + " is installed, but the nvidia kernel module is not loaded",
			"reboot after installing the driver, or load the module with 'sudo modprobe nvidia' ('sudo dmesg | grep -i nvrm' says why it fails: Secure Boot, nouveau, no module for this kernel); a container needs a host whose module is loaded"}
	case !p.machine.ctl:
		return verdict{StateNoDevices, fmt.Sprintf("the nvidia kernel module%s is loaded, but /dev/nvidiactl does not exist: a container started without GPU access, or device nodes not created yet", versionSuffix(kernel.value)),
			"start the container with GPU access (docker run --gpus all, or --device nvidia.com/gpu=all with CDI); on a host, 'sudo nvidia-modprobe -c 0' creates the nodes"}
	case p.userSpace != nil && !user.any() || p.signals[methodNvidiaSMI] == signalNoLibrary && !user.any():
		v := verdict{StateNoUserSpace, fmt.Sprintf("the nvidia kernel module%s is loaded, but its user-space libraries (libcuda.so.1, libnvidia-ml.so.1) are not where the loader looks", versionSuffix(kernel.value)),
			fmt.Sprintf("install the user-space driver of the same version%s (your distribution's libcuda1/libnvidia-compute package), or let the NVIDIA Container Toolkit mount it into the container", versionSuffix(kernel.value))}
		if stub := user.lib("libcuda.so.1"); stub != nil && stub.Stub {
			v.summary += fmt.Sprintf("; the libcuda.so.1 the loader finds (%s, via %s) is the CUDA toolkit's stub", stub.Path, stub.Via)
		}
		return v
	case len(p.answered) == 0 && slices.ContainsFunc(driverViews, func(m string) bool { return p.signals[m] == signalNoDriver }):
		return verdict{StateNotAnswering, fmt.Sprintf("the nvidia kernel module%s is loaded and /dev/nvidiactl exists, but the driver's libraries cannot communicate with it", versionSuffix(kernel.value)),
			"'sudo dmesg | grep -i nvrm' shows the driver's own messages (a GPU that fell off the bus, a failed initialisation); a reboot usually clears it"}
	}
	v := kernel.value
	if v == "" {
		v = r.DriverVersion
	}
	if len(p.answered) > 0 {
		return verdict{StateWorking, fmt.Sprintf("driver %s is loaded and working (%s answered)", orDash(v), strings.Join(p.answered, ", ")), ""}
	}
	what := "its device nodes exist"
	if uv != "" {
		what += " and its libraries are the same version"
	}
	return verdict{StateWorking, fmt.Sprintf("driver %s is loaded, %s; its own code was not run", orDash(v), what), ""}
}

func versionSuffix(v string) string {
	if v == "" {
		return ""
	}
	return " " + v
}

// claims gathers one fact from the observations of the named methods.
func (p *prober) claims(fact func(observation) string, sources ...string) []claim {
	var cs []claim
	for _, o := range p.obs {
		if slices.Contains(sources, o.source) {
			cs = append(cs, claim{o.source, fact(o)})
		}
	}
	return cs
}

// userSpaceLibs are the driver libraries the userspace method found.
type userSpaceLibs []UserSpaceLibrary

func (u userSpaceLibs) lib(soname string) *UserSpaceLibrary {
	for i := range u {
		if u[i].Soname == soname && u[i].Error == "" {
			return &u[i]
		}
	}
	return nil
}

// any reports whether a driver library (not a stub) was found, with or without a version.
func (u userSpaceLibs) any() bool {
	return slices.ContainsFunc(u, UserSpaceLibrary.Found)
}

// version is the user-space driver's version: libnvidia-ml's, which must match the kernel module's,
// else libcuda's unless it is a forward-compatibility one.
func (u userSpaceLibs) version() string {
	if nvml := u.lib("libnvidia-ml.so.1"); nvml != nil && nvml.Version != "" {
		return nvml.Version
	}
	if cuda := u.lib("libcuda.so.1"); cuda != nil && !cuda.Compat {
		return cuda.Version
	}
	return ""
}

// mismatch says how the kernel module and the user-space libraries disagree, or "". A libcuda of
// NVIDIA's forward-compatibility package is meant to be newer than the module, and is no mismatch.
func (p *prober) mismatch(kernel string, user userSpaceLibs) (verdict, bool) {
	const reload = "reboot, or unload and reload the nvidia kernel module, so that it and the libraries are one version; if that persists, reinstall the driver so both come from one package"
	var differ []string
	for _, soname := range []string{"libnvidia-ml.so.1", "libcuda.so.1"} {
		l := user.lib(soname)
		if l == nil || l.Version == "" || l.Version == kernel || l.Compat && soname == "libcuda.so.1" {
			continue
		}
		if kernel == "" {
			continue
		}
		differ = append(differ, fmt.Sprintf("%s is %s (%s)", soname, l.Version, l.RealPath))
	}
	if len(differ) > 0 {
		return verdict{StateMismatch, fmt.Sprintf("the nvidia kernel module is %s but %s: what nvidia-smi reports as \"Driver/library version mismatch\"", kernel, strings.Join(differ, " and ")), reload}, true
	}
	cuda, nvml := user.lib("libcuda.so.1"), user.lib("libnvidia-ml.so.1")
	if kernel == "" && cuda != nil && nvml != nil && !cuda.Compat && cuda.Version != "" && nvml.Version != "" && cuda.Version != nvml.Version {
		// No module version to reload towards: the libraries themselves disagree.
		return verdict{StateMismatch, fmt.Sprintf("libcuda.so.1 is %s (%s) but libnvidia-ml.so.1 is %s (%s): two driver installations", cuda.Version, cuda.RealPath, nvml.Version, nvml.RealPath),
			"remove one of the two driver installations (your distribution's nvidia packages, or NVIDIA's installer's --uninstall), so that libcuda.so.1 and libnvidia-ml.so.1 come from one; then reboot, or load the module with 'sudo modprobe nvidia'"}, true
	}
	for _, m := range driverViews {
		if p.signals[m] == signalMismatch {
			what := "the kernel module"
			if kernel != "" {
				what += " (" + kernel + ")"
			}
			return verdict{StateMismatch, fmt.Sprintf("%s reports a version mismatch between %s and the user-space libraries%s", m, what, versionSuffix(user.version())), reload}, true
		}
	}
	return verdict{}, false
}
