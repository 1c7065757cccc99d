package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// stableJSON zeroes what changes between runs: durations and the temporary root.
func stableJSON(out, root string) string {
	out = regexp.MustCompile(`"duration_ns": [0-9]+`).ReplaceAllString(out, `"duration_ns": 0`)
	return strings.ReplaceAll(out, root, "$ROOT")
}

// TestDriver_states runs `pathfinder driver` on captured machines, one per state, the user-space
// driver NVIDIA's real one where the state has one: the headline names the state with the versions,
// the hint follows, --json carries both (golden files), and the exit status says whether it works.
func TestDriver_states(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	tests := []struct {
		name, suite string
		files       map[string]string
		vars        map[string]string
		state       string
		headline    string
		code        int
	}{
		{name: "no-driver", state: "no-driver", headline: "no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1", code: exitNotFound},
		{name: "kernel-module-not-loaded", suite: "trixie", state: "kernel-module-not-loaded",
			headline: "NVIDIA's user-space driver 550.163.01 is installed, but the nvidia kernel module is not loaded", code: exitNotFound},
		{name: "version-mismatch", suite: "bookworm", files: kernelModule("550.163.01", true), state: "version-mismatch",
			headline: "the nvidia kernel module is 550.163.01 but libnvidia-ml.so.1 is 535.261.03 (/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.261.03) and libcuda.so.1 is 535.261.03 (/usr/lib/x86_64-linux-gnu/libcuda.so.535.261.03): what nvidia-smi reports as \"Driver/library version mismatch\"", code: exitNotFound},
		{name: "container-without-device-access", suite: "trixie", files: kernelModule("550.163.01", false), state: "container-without-device-access",
			headline: "the nvidia kernel module 550.163.01 is loaded, but /dev/nvidiactl does not exist: a container started without GPU access, or device nodes not created yet", code: exitNotFound},
		{name: "user-space-driver-missing", files: kernelModule("550.163.01", true), state: "user-space-driver-missing",
			headline: "the nvidia kernel module 550.163.01 is loaded, but its user-space libraries (libcuda.so.1, libnvidia-ml.so.1) are not where the loader looks", code: exitNotFound},
		{name: "wsl2", files: map[string]string{"/dev/dxg": ""}, state: "wsl2", headline: "WSL2: the driver is the Windows host's, and no method could reach it", code: exitNotFound},
		{name: "tegra", files: map[string]string{"/etc/nv_tegra_release": "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64\n",
			"/proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  540.4.0  Release Build  (buildbrain@mobile-u64-6336-d8000)  Thu Jan 23 21:09:47 PST 2025\n"},
			state: "tegra", headline: "Jetson (L4T 36.4.3), driver 540.4.0", code: exitOK},
		{name: "working", suite: "trixie", files: kernelModule("550.163.01", true), state: "working", headline: "driver 550.163.01 is loaded, its device nodes exist and its libraries are the same version; its own code was not run", code: exitOK},
		{name: "pinned", vars: map[string]string{"PATHFINDER_DRIVER_VERSION": "580.65.06"}, state: "pinned",
			headline: "driver 580.65.06, pinned by PATHFINDER_DRIVER_VERSION; the machine was not asked", code: exitOK},
		{name: "pinned-not-a-version", vars: map[string]string{"PATHFINDER_DRIVER_VERSION": "banana"}, state: "no-driver",
			headline: "no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1; ignored $PATHFINDER_DRIVER_VERSION=banana (not a driver version like 550.54.14; the machine was probed instead)", code: exitNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := e.clone()
			t.Parallel()
			for k, v := range tc.vars {
				e.Setenv(k, v)
			}
			root := machine(t, tc.suite, tc.files)
			out, errOut, code := e.run(t, "driver", "--root", root)
			if code != tc.code || errOut != "" {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errOut)
			}
			lines := strings.SplitN(out, "\n", 3)
			if lines[0] != tc.headline || tc.state != "working" && !strings.HasPrefix(lines[1], "hint: ") {
				t.Fatalf("headline %q, want %q; then %q", lines[0], tc.headline, lines[1])
			}
			out, _, _ = e.run(t, "driver", "--root", root, "--json")
			var report struct{ State, Summary, DriverVersion, UserSpaceVersion string }
			if err := json.Unmarshal([]byte(out), &report); err != nil || report.State != tc.state || report.Summary != tc.headline {
				t.Fatalf("--json: %v %+v", err, report)
			}
			golden(t, "driver/"+tc.name+".json", stableJSON(out, root))
		})
	}
}

// TestDriver_edges: bad flags are usage errors that list what is valid, a missing driver is said on
// stderr for --format nfd, and messages carry one prefix.
func TestDriver_edges(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	empty := t.TempDir()
	file := filepath.Join(empty, "file")
	os.WriteFile(file, nil, 0o644)
	const driverUsage = "usage: pathfinder driver [FLAGS]\nrun 'pathfinder help driver' for details\n"
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "root of a missing directory", args: []string{"--root", "/nonexistent/machine"}, code: exitUsage,
			stderr: "pathfinder: driver: --root /nonexistent/machine: no such directory\n" + driverUsage},
		{name: "root of a file", args: []string{"--root", file}, code: exitUsage, stderr: "pathfinder: driver: --root " + file + ": not a directory\n" + driverUsage},
		{name: "unknown method", args: []string{"--root", empty, "--methods", "sysfs,gpu-magic"}, code: exitUsage,
			stderr: `pathfinder: driver: --methods: unknown method "gpu-magic" (valid: setup, override, ioctl, sysfs, procfs, userspace, pci, nvml, libcuda, nvidia-smi)` + "\n" + driverUsage},
		{name: "empty method", args: []string{"--root", empty, "--methods", "sysfs,"}, code: exitUsage, stderr: `pathfinder: driver: --methods: unknown method ""`},
		{name: "unknown format", args: []string{"--root", empty, "--format", "yaml"}, code: exitUsage, stderr: `pathfinder: driver: --format: unknown format "yaml" (valid: text, json, nfd, nodefeature, variant)` + "\n" + driverUsage},
		{name: "nfd without a driver", args: []string{"--root", empty, "--format", "nfd"}, code: exitNotFound, stdout: "",
			stderr: "pathfinder: no NVIDIA kernel driver (no-driver: no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1): standard output has no labels\n"},
		{name: "nfd output without a driver", args: []string{"--root", empty, "--format", "nfd", "--output", empty}, code: exitNotFound,
			stderr: "pathfinder: no NVIDIA kernel driver (no-driver: no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1): the feature file in " + empty + " has no labels\n"},
		{name: "output of a missing directory", args: []string{"--root", empty, "--format", "nfd", "--output", "/nonexistent/features.d"}, code: exitUsage,
			stderr: "pathfinder: driver: --output /nonexistent/features.d: no such directory\n" + driverUsage},
		// /proc is a directory nobody can create a file in, root included.
		{name: "a feature file that cannot be written", args: []string{"--root", empty, "--format", "nfd", "--output", "/proc"}, code: exitUsage,
			stderr: "pathfinder: writing the feature file: mkdir /proc/.pathfinder-tmp-"},
	}
	for _, tc := range tests { // one after another: the feature file they leave is checked after
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := e.run(t, append([]string{"driver"}, tc.args...)...)
			// The usage line follows a mistake in the command line (a flag, its value, a directory it
			// names that is not one), not a failure to write what was asked.
			if isUsage := strings.Contains(errOut, driverUsage); isUsage != strings.HasPrefix(tc.stderr, "pathfinder: driver: ") {
				t.Errorf("usage line printed: %v, stderr %q", isUsage, errOut)
			}
			if code != tc.code || !strings.HasPrefix(errOut, tc.stderr) || tc.stdout != "" && out != tc.stdout {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out, errOut, tc.code, tc.stdout, tc.stderr)
			}
			if strings.Count(errOut, "pathfinder:") > 1 {
				t.Fatalf("doubled prefix: %q", errOut)
			}
		})
	}
	// The feature file written without a driver is empty: a node whose driver broke stops
	// advertising the labels it had.
	if data, err := os.ReadFile(filepath.Join(empty, "pathfinder")); err != nil || len(data) != 0 {
		t.Fatalf("feature file: %v %q", err, data)
	}
}

// h100Node is a captured node as the labeller's container sees it: the kernel module 550.54.14, an
// H100 on the PCI bus with the driver's own name for it, device nodes, and no user-space driver.
func h100Node(t *testing.T) string {
	files := kernelModule("550.54.14", true)
	bus := "/sys/bus/pci/devices/0000:18:00.0/"
	files[bus+"vendor"], files[bus+"class"], files[bus+"device"] = "0x10de\n", "0x030200\n", "0x2330\n"
	files["/proc/driver/nvidia/gpus/0000:18:00.0/information"] = "Model: \t\t NVIDIA H100 80GB HBM3\nBus Location: \t 0000:18:00.0\nDevice Minor: \t 0\n"
	files["/dev/nvidia0"] = ""
	return machine(t, "", files)
}

// TestDriver_labels: the labels come from the node's facts where this process has no user-space
// driver, as text, as the NodeFeature object in YAML and JSON; a broken driver labels only its state.
func TestDriver_labels(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	root := h100Node(t)
	out, errOut, code := e.run(t, "driver", "--root", root, "--format", "nfd")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"nvidia.com/cuda.driver-version.full=550.54.14\n", "nvidia.com/cuda.runtime-version.full=12.4\n", "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3\n",
		"nvidia.com/gpu.family=hopper\n", "nvidia.com/gpu.count=1\n", "nvidia.com/gpu.mode=compute\n", "pathfinder.feature.node.kubernetes.io/driver.state=user-space-driver-missing\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("labels lack %q:\n%s", want, out)
		}
	}

	e.Setenv("NODE_NAME", "gpu-1")
	yaml, _, code := e.run(t, "driver", "--root", root, "--format", "nodefeature")
	if code != exitOK || !strings.HasPrefix(yaml, "apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeature\nmetadata:\n  name: nvidia-features-for-gpu-1\n  labels:\n    nfd.node.kubernetes.io/node-name: \"gpu-1\"\nspec:\n  labels:\n") ||
		!strings.Contains(yaml, "    nvidia.com/gpu.product: \"NVIDIA-H100-80GB-HBM3\"\n") {
		t.Fatalf("exit %d, YAML:\n%s", code, yaml)
	}
	js, _, _ := e.run(t, "driver", "--root", root, "--format", "nodefeature", "--json", "--node", "gpu-2")
	var obj struct {
		Kind     string
		Metadata struct{ Name string }
		Spec     struct{ Labels map[string]string }
	}
	if err := json.Unmarshal([]byte(js), &obj); err != nil || obj.Metadata.Name != "nvidia-features-for-gpu-2" || obj.Spec.Labels["nvidia.com/gpu.count"] != "1" {
		t.Fatalf("JSON %v %+v:\n%s", err, obj, js)
	}

	// A value NFD would refuse is said on stderr, and not written.
	odd := h100Node(t)
	os.MkdirAll(filepath.Join(odd, "sys/class/dmi/id"), 0o755)
	os.WriteFile(filepath.Join(odd, "sys/class/dmi/id/product_name"), []byte("To Be Filled By O.E.M.\n"), 0o644)
	out, errOut, code = e.run(t, "driver", "--root", odd, "--format", "nfd")
	if code != exitOK || strings.Contains(out, "gpu.machine") ||
		errOut != "pathfinder: not labelled: nvidia.com/gpu.machine=\"To-Be-Filled-By-O.E.M.\": a value must be letters, digits, '-', '_' and '.', beginning and ending with a letter or digit\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// The node's libraries, 535, are not its module's 550: only the state, and exit 1.
	t.Run("broken", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := e.run(t, "driver", "--root", machine(t, "bookworm", kernelModule("550.163.01", true)), "--format", "nfd")
		if code != exitNotFound || out != "pathfinder.feature.node.kubernetes.io/driver.state=version-mismatch\n" ||
			!strings.HasPrefix(errOut, "pathfinder: the NVIDIA driver does not work (version-mismatch: the nvidia kernel module is 550.163.01 but ") ||
			!strings.HasSuffix(errOut, "): standard output has only its state\n") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	})
}

// TestDriver_labelFlags: the flags that go with the labels, and their mistakes.
func TestDriver_labelFlags(t *testing.T) {
	t.Parallel()
	e := isolate(t)
	e.Setenv("NODE_NAME", "")
	root := h100Node(t)
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--format", "text", "--interval", "60s"}, "--interval and --oneshot are for --format nfd and nodefeature"},
		{[]string{"--format", "nfd", "--interval", "60s"}, "--interval with --format nfd needs --output DIR, the feature file it keeps current"},
		{[]string{"--format", "nfd", "--interval", "60s", "--oneshot", "--output", root}, "--oneshot and --interval exclude each other"},
		{[]string{"--format", "nfd", "--interval", "-1s", "--output", root}, "--interval -1s: not a positive duration"},
		{[]string{"--format", "nfd", "--interval", "soon", "--output", root}, "--interval"},
		{[]string{"--format", "nodefeature", "--output", root}, "--output is for --format nfd"},
		{[]string{"--format", "nodefeature"}, "--format nodefeature needs the node's name: --node NAME, or $NODE_NAME"},
		{[]string{"--format", "nodefeature", "--node", "Not_A_Node"}, `--node: node "Not_A_Node": nvidia-features-for-Not_A_Node is no object name`},
		{[]string{"--format", "nfd", "--node", "n"}, "--node is for --format nodefeature"},
	} {
		_, errOut, code := e.run(t, append([]string{"driver", "--root", root}, tc.args...)...)
		if code != exitUsage || !strings.HasPrefix(errOut, "pathfinder: driver: "+tc.err) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, errOut, tc.err)
		}
	}
	if out, _, code := e.run(t, "driver", "--root", root, "--format", "nfd", "--oneshot"); code != exitOK || !strings.Contains(out, "nvidia.com/gpu.count=1\n") {
		t.Fatalf("--oneshot: exit %d\n%s", code, out)
	}
}
