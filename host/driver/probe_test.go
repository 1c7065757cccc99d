package driver

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// TestProbe_procSamples puts every /proc sample in a fake root (with a device node that is a plain
// file, so the ioctl fails as it does in any copy of /dev) and checks what the probe concludes.
func TestProbe_procSamples(t *testing.T) {
	type want struct {
		setup                                       Setup
		driver, module, l4t, maxCUDA, release, note string
	}
	wants := map[string]want{
		"closed_x86_64_177.80_2008.txt":         {setup: SetupNative, driver: "177.80", module: "proprietary", note: "older than every CUDA toolkit"},
		"closed_x86_64_375.74.txt":              {setup: SetupNative, driver: "375.74", module: "proprietary", maxCUDA: "8.0", release: "CUDA 8.0 (8.0.61 GA2)"},
		"closed_x86_64_440.95.01.txt":           {setup: SetupNative, driver: "440.95.01", module: "proprietary", maxCUDA: "10.2", release: "CUDA 10.2.89"},
		"closed_x86_64_515.76.txt":              {setup: SetupNative, driver: "515.76", module: "proprietary", maxCUDA: "11.7", release: "CUDA 11.7 Update 1"},
		"open_aarch64_580.173.02_gb300.txt":     {setup: SetupNative, driver: "580.173.02", module: "open", maxCUDA: "13.0", release: "CUDA 13.0 Update 2"},
		"open_x86_64_550.144.03.txt":            {setup: SetupNative, driver: "550.144.03", module: "open", maxCUDA: "12.4", release: "CUDA 12.4 Update 1"},
		"open_x86_64_570.195.03.txt":            {setup: SetupNative, driver: "570.195.03", module: "open", maxCUDA: "12.8", release: "CUDA 12.8 Update 1"},
		"tegra_jetson_l4t_34.1.1_line1only.txt": {setup: SetupTegra, l4t: "34.1.1", note: "Jetson (L4T 34.1.1)"},
	}
	for _, name := range samples(t, "proc_driver_nvidia_version") {
		t.Run(name, func(t *testing.T) {
			w, listed := wants[name]
			if !listed {
				t.Fatalf("sample %s has no expectation", name)
			}
			root := filetree.New(t, map[string]string{
				"/dev/nvidiactl":              "",
				"/proc/driver/nvidia/version": sample(t, "proc_driver_nvidia_version/"+name),
			})
			r := probe(t, root, fileMethods, nil)
			if r.Setup != w.setup || r.DriverVersion != w.driver || r.KernelModule != w.module || r.L4TRelease != w.l4t ||
				r.MaxCUDA != w.maxCUDA || r.MaxCUDARelease != w.release {
				t.Fatalf("got setup %q driver %q module %q l4t %q max %q (%q); want %+v", r.Setup, r.DriverVersion, r.KernelModule, r.L4TRelease, r.MaxCUDA, r.MaxCUDARelease, w)
			}
			if w.driver != "" && r.DriverVersionSource != methodProcfs {
				t.Errorf("driver version from %q, want procfs", r.DriverVersionSource)
			}
			if w.note != "" && !hasNote(r, w.note) {
				t.Errorf("notes %q lack %q", r.Notes, w.note)
			}
			// The module is loaded and /dev/nvidiactl exists, but the root holds no libraries.
			wantState := StateNoUserSpace
			if w.setup == SetupTegra {
				wantState = StateTegra
			}
			if r.State != wantState {
				t.Errorf("state %s (%s), want %s", r.State, r.Summary, wantState)
			}
			wantOutcome(t, r, methodIoctl, OutcomeFailed, "inappropriate ioctl")
			wantOutcome(t, r, methodSysfs, OutcomeUnavailable)
			wantOutcome(t, r, methodProcfs, OutcomeOK)
		})
	}
}

func TestProbe_sysSamples(t *testing.T) {
	wants := map[string]struct{ driver, release string }{
		"550.144.03.txt":                     {"550.144.03", "CUDA 12.4 Update 1"},
		"550.54.14.txt":                      {"550.54.14", "CUDA 12.4 GA"},
		"580.142_two_component_expected.txt": {"580.142", "CUDA 13.0 Update 2"},
	}
	for _, name := range samples(t, "sys_module_nvidia_version") {
		t.Run(name, func(t *testing.T) {
			w, listed := wants[name]
			if !listed {
				t.Fatalf("sample %s has no expectation", name)
			}
			// No device node: the driver is loaded but this "container" cannot reach it.
			root := filetree.New(t, map[string]string{"/sys/module/nvidia/version": sample(t, "sys_module_nvidia_version/"+name)})
			r := probe(t, root, fileMethods, nil)
			if r.Setup != SetupContainerNoGPU || r.DriverVersion != w.driver || r.DriverVersionSource != methodSysfs || r.MaxCUDARelease != w.release {
				t.Fatalf("got %s %s from %s, %s; want %+v", r.Setup, r.DriverVersion, r.DriverVersionSource, r.MaxCUDARelease, w)
			}
		})
	}
}

// TestProbe_sysAndProcDisagree is a driver upgraded on disk but not reloaded... or two sources that
// simply differ: the kernel's own /sys wins and the report says so.
func TestProbe_sysAndProcDisagree(t *testing.T) {
	root := filetree.New(t, map[string]string{
		"/sys/module/nvidia/version":  "550.144.03\n",
		"/proc/driver/nvidia/version": sample(t, "proc_driver_nvidia_version/open_x86_64_570.195.03.txt"),
	})
	r := probe(t, root, fileMethods, nil)
	if r.DriverVersion != "550.144.03" || r.DriverVersionSource != methodSysfs {
		t.Fatalf("driver %s from %s", r.DriverVersion, r.DriverVersionSource)
	}
	if !hasNote(r, "methods disagree on the driver version (sysfs 550.144.03, procfs 570.195.03); using sysfs's") {
		t.Fatalf("notes %q", r.Notes)
	}
}

func TestProbe_setup(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		setup Setup
		l4t   string
		state State
	}{
		{name: "wsl2", files: map[string]string{"/dev/dxg": "", "/usr/lib/wsl/lib/libcuda.so.1": ""}, setup: SetupWSL2, state: StateWSL2},
		{name: "native", files: map[string]string{"/dev/nvidiactl": "", "/sys/module/nvidia/version": "550.54.14\n"}, setup: SetupNative, state: StateNoUserSpace},
		{name: "jetson release file", files: map[string]string{"/etc/nv_tegra_release": "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64\n"}, setup: SetupTegra, l4t: "35.4.1", state: StateTegra},
		{name: "jetson nvgpu module", files: map[string]string{"/sys/module/nvgpu": "dir"}, setup: SetupTegra, state: StateTegra},
		{name: "jetson proc line", files: map[string]string{"/proc/driver/nvidia/version": sample(t, "proc_driver_nvidia_version/tegra_jetson_l4t_34.1.1_line1only.txt")}, setup: SetupTegra, l4t: "34.1.1", state: StateTegra},
		{name: "jetpack 6 open driver", files: map[string]string{
			"/etc/nv_tegra_release":       "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64\n",
			"/proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  540.4.0  Release Build  (buildbrain@mobile-u64-6336-d8000)  Thu Jan 23 21:09:47 PST 2025\n",
		}, setup: SetupTegra, l4t: "36.4.3", state: StateTegra},
		{name: "container without devices", files: map[string]string{"/proc/driver/nvidia/version": sample(t, "proc_driver_nvidia_version/open_x86_64_550.144.03.txt")}, setup: SetupContainerNoGPU, state: StateNoDevices},
		{name: "nothing", files: map[string]string{"/dev/null": ""}, setup: SetupNoDriver, state: StateNoDriver},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := probe(t, filetree.New(t, tc.files), fileMethods, nil)
			if r.Setup != tc.setup || r.L4TRelease != tc.l4t {
				t.Fatalf("setup %q l4t %q; want %q %q", r.Setup, r.L4TRelease, tc.setup, tc.l4t)
			}
			wantOutcome(t, r, methodSetup, OutcomeOK, string(tc.setup))
			if r.State != tc.state {
				t.Fatalf("state %q (%s), want %q", r.State, r.Summary, tc.state)
			}
		})
	}
}

func TestProbe_override(t *testing.T) {
	root := filetree.New(t, map[string]string{"/sys/module/nvidia/version": "550.54.14\n"})
	r := probe(t, root, fileMethods, map[string]string{envOverride: " 580.65.06 "})
	wantOutcome(t, r, methodOverride, OutcomeOK, "pinned to 580.65.06")
	if r.DriverVersion != "580.65.06" || r.DriverVersionSource != methodOverride || r.MaxCUDARelease != "CUDA 13.0 GA" {
		t.Fatalf("driver %s from %s, %s", r.DriverVersion, r.DriverVersionSource, r.MaxCUDARelease)
	}
	if !hasNote(r, "override 580.65.06, sysfs 550.54.14") {
		t.Errorf("the pinned version hides the measured one: %q", r.Notes)
	}

	r = probe(t, root, fileMethods, map[string]string{envOverride: "latest"})
	wantOutcome(t, r, methodOverride, OutcomeFailed, `PATHFINDER_DRIVER_VERSION="latest" is not a driver version`)
	if r.DriverVersion != "550.54.14" {
		t.Fatalf("driver %s", r.DriverVersion)
	}

	r = probe(t, root, fileMethods, nil)
	wantOutcome(t, r, methodOverride, OutcomeSkipped, "neither PATHFINDER_DRIVER_VERSION nor PATHFINDER_COMPUTE_CAPABILITY is set")
}

// TestProbe_overrideIgnored: a PATHFINDER_DRIVER_VERSION that is no driver version is not used,
// and the report says so: in Ignored and at the end of Summary.
func TestProbe_overrideIgnored(t *testing.T) {
	root := filetree.New(t, map[string]string{"/sys/module/nvidia/version": "550.54.14\n"})
	tests := []struct {
		name, value string
		ignored     string // the end of Summary; "" when nothing is ignored
	}{
		{name: "banana", value: "banana", ignored: "; ignored $PATHFINDER_DRIVER_VERSION=banana (not a driver version like 550.54.14; the machine was probed instead)"},
		{name: "two components", value: "580", ignored: "; ignored $PATHFINDER_DRIVER_VERSION=580 (not a driver version"},
		{name: "a version", value: " 580.65.06 "},
		{name: "empty", value: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := probe(t, root, fileMethods, map[string]string{envOverride: tc.value})
			if tc.ignored == "" {
				if len(r.Ignored) != 0 || strings.Contains(r.Summary, "ignored") {
					t.Fatalf("ignored %+v, summary %q", r.Ignored, r.Summary)
				}
				return
			}
			if len(r.Ignored) != 1 || r.Ignored[0].Name != envOverride || r.Ignored[0].Value != tc.value {
				t.Fatalf("Ignored = %+v", r.Ignored)
			}
			if i := strings.Index(r.Summary, tc.ignored); i < 0 || !strings.HasSuffix(r.Summary, r.Ignored[0].Reason+")") {
				t.Fatalf("summary %q does not end with %q", r.Summary, tc.ignored)
			}
			if r.DriverVersion != "550.54.14" || r.State == StatePinned {
				t.Fatalf("driver %s, state %s: the machine's answer should stand", r.DriverVersion, r.State)
			}
		})
	}
}

func TestProbe_methodList(t *testing.T) {
	root := filetree.New(t, map[string]string{"/sys/module/nvidia/version": "550.54.14\n"})
	r := probe(t, root, []string{"sysfs", "gpu-magic"}, nil)
	var names []string
	for _, m := range r.Methods {
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "setup,sysfs,gpu-magic" {
		t.Fatalf("ran %v; setup first, then the list in its order", names)
	}
	wantOutcome(t, r, "gpu-magic", OutcomeFailed, `unknown driver probe method "gpu-magic"`, "setup, override, ioctl")
	if r.DriverVersion != "550.54.14" {
		t.Fatalf("driver %q", r.DriverVersion)
	}
}

// TestProbe_defaultsOnNoDriver runs the default method list on an empty captured machine: the
// driver's own code is not run, and the answer is ErrNoDriver.
func TestProbe_defaultsOnNoDriver(t *testing.T) {
	r := Probe(context.Background(), Options{
		Root:      filetree.New(t, nil),
		LookupEnv: env(map[string]string{envNVMLLibrary: "/nonexistent/libnvidia-ml.so.1"}),
		LookPath:  func(string) (string, error) { return "", os.ErrNotExist },
	})
	if len(r.Methods) != len(MethodNames()) || r.Methods[0].Name != methodSetup {
		t.Fatalf("methods %+v", r.Methods)
	}
	wantOutcome(t, r, methodNVML, OutcomeSkipped, "captured machine")
	wantOutcome(t, r, methodLibcuda, OutcomeSkipped, "captured machine")
	wantOutcome(t, r, methodNvidiaSMI, OutcomeSkipped, "captured machine")
	if !errors.Is(r.Err(), ErrNoDriver) || r.Setup != SetupNoDriver {
		t.Fatalf("Err() = %v, setup %s", r.Err(), r.Setup)
	}
}

// TestProbe_noDriverNotLookedFor: without the userspace method, no-driver does not claim the
// libraries are missing.
func TestProbe_noDriverNotLookedFor(t *testing.T) {
	r := probe(t, filetree.New(t, nil), []string{methodSysfs}, nil)
	if r.State != StateNoDriver || r.Summary != "no NVIDIA kernel module; the user-space driver was not looked for (the userspace method did not run)" {
		t.Fatalf("%s: %s", r.State, r.Summary)
	}
}

func TestProbe_cancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := Probe(ctx, Options{Root: filetree.New(t, nil), Methods: fileMethods, LookupEnv: env(nil)})
	wantOutcome(t, r, methodSysfs, OutcomeSkipped, "probe cancelled")
}

func TestProbe_emptyVisibleDevicesNote(t *testing.T) {
	r := probe(t, filetree.New(t, nil), []string{methodSysfs}, map[string]string{envVisibleGPUs: ""})
	if !hasNote(r, "CUDA_VISIBLE_DEVICES is set but empty") {
		t.Fatalf("notes %q", r.Notes)
	}
	r = probe(t, filetree.New(t, nil), []string{methodSysfs}, nil)
	if hasNote(r, "CUDA_VISIBLE_DEVICES") {
		t.Fatalf("unset CUDA_VISIBLE_DEVICES noted: %q", r.Notes)
	}
}

// TestProbe_procGPUs reads the per-GPU /proc files together with the PCI tree: names and UUIDs from
// /proc, device ids and the inferred capability from PCI, one GPU per bus id.
func TestProbe_procGPUs(t *testing.T) {
	files := dgxLike()
	files["/dev/nvidiactl"] = ""
	files["/proc/driver/nvidia/version"] = sample(t, "proc_driver_nvidia_version/open_x86_64_550.144.03.txt")
	files["/proc/driver/nvidia/gpus/0000:18:00.0/information"] = gpuInformation("NVIDIA H100 80GB HBM3", "GPU-aaaaaaaa-0000-0000-0000-000000000000", "0000:18:00.0")
	files["/proc/driver/nvidia/gpus/0000:65:00.0/information"] = gpuInformation("NVIDIA H100 80GB HBM3", "GPU-bbbbbbbb-0000-0000-0000-000000000000", "0000:65:00.0")
	files["/proc/driver/nvidia/gpus/0000:99:00.0/information"] = "garbage\n"
	r := probe(t, filetree.New(t, files), fileMethods, nil)
	wantOutcome(t, r, methodProcfs, OutcomeOK, "2 GPUs in /proc/driver/nvidia/gpus", "unreadable: 0000:99:00.0")
	if len(r.GPUs) != 3 {
		t.Fatalf("%d GPUs: %+v", len(r.GPUs), r.GPUs)
	}
	g := r.GPUs[0]
	if g.PCIBusID != "0000:18:00.0" || g.Name != "NVIDIA H100 80GB HBM3" || g.UUID != "GPU-aaaaaaaa-0000-0000-0000-000000000000" ||
		g.DeviceID != "0x2330" || g.ComputeCapability != "9.0" || g.ComputeCapabilitySource != pciTableSource || strings.Join(g.Sources, ",") != "procfs,pci" {
		t.Fatalf("GPU 0 %+v", g)
	}
	if r.GPUs[2].Name != "GA102 [GeForce RTX 3090]" || r.GPUs[2].KernelDriver != "vfio-pci" {
		t.Fatalf("GPU 2 %+v", r.GPUs[2])
	}
}

// TestProbe_jetsonDriver is JetPack 6: a real driver version beside the L4T release. The desktop
// table still answers, and the report says it is the desktop table.
func TestProbe_jetsonDriver(t *testing.T) {
	r := probe(t, filetree.New(t, map[string]string{
		"/etc/nv_tegra_release":       "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64\n",
		"/proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  540.4.0  Release Build  (buildbrain@mobile-u64-6336-d8000)  Thu Jan 23 21:09:47 PST 2025\n",
	}), fileMethods, nil)
	if r.Setup != SetupTegra || r.DriverVersion != "540.4.0" || r.L4TRelease != "36.4.3" || r.MaxCUDA != "12.2" || !hasNote(r, "on Jetson the CUDA version comes with the JetPack release") {
		t.Fatalf("%s %s %s %s %q", r.Setup, r.DriverVersion, r.L4TRelease, r.MaxCUDA, r.Notes)
	}
}
