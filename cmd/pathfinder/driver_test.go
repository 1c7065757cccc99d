package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/realnv"
)

// machine builds a captured machine under a temporary root: files by absolute path ("dir" makes a
// folder), and the libcuda and libnvidia-ml of Debian's real driver packages where suite is set.
func machine(t *testing.T, suite string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, data := range files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if data == "dir" {
			os.MkdirAll(full, 0o755)
			continue
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if suite != "" {
		if runtime.GOARCH != "amd64" {
			t.Skip("the unpacked Debian packages are amd64's")
		}
		libdir := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
		for _, pkg := range []string{"libcuda1", "libnvidia-ml1"} {
			p := realnv.Get(t, suite+"/"+pkg)
			version := strings.SplitN(p.Version, "-", 2)[0]
			soname := map[string]string{"libcuda1": "libcuda.so.1", "libnvidia-ml1": "libnvidia-ml.so.1"}[pkg]
			file := strings.TrimSuffix(soname, "1") + version
			installFile(t, p.Path("usr/lib/x86_64-linux-gnu/nvidia/current/"+file), filepath.Join(libdir, file))
			if err := os.Symlink(file, filepath.Join(libdir, soname)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// installFile hard-links from at to, or copies it where the file systems differ.
func installFile(t *testing.T, from, to string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(to), 0o755)
	if os.Link(from, to) == nil {
		return
	}
	data, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, data, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// kernelModule is what a loaded nvidia module of version v shows in /sys and /proc.
func kernelModule(v string, ctl bool) map[string]string {
	m := map[string]string{
		"/sys/module/nvidia/version":  v + "\n",
		"/proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  " + v + "  Release Build  (dvs-builder@U22-I3-AE18-23-3)  Wed Jun 18 00:00:00 UTC 2025\n",
	}
	if ctl {
		m["/dev/nvidiactl"] = ""
	}
	return m
}

// stableJSON zeroes what changes between runs: durations and the temporary root.
func stableJSON(out, root string) string {
	out = regexp.MustCompile(`"duration_ns": [0-9]+`).ReplaceAllString(out, `"duration_ns": 0`)
	return strings.ReplaceAll(out, root, "$ROOT")
}

// TestDriver_states runs `pathfinder driver` on captured machines, one per state, the user-space
// driver NVIDIA's real one where the state has one: the headline names the state with the versions,
// the hint follows, --json carries both (golden files), and the exit status says whether it works.
func TestDriver_states(t *testing.T) {
	t.Setenv("PATHFINDER_REALNV_DIR", realnv.Dir()) // before isolate moves HOME
	isolate(t)
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
			for k, v := range tc.vars {
				t.Setenv(k, v)
			}
			root := machine(t, tc.suite, tc.files)
			out, errOut, code := run(t, "driver", "--root", root)
			if code != tc.code || errOut != "" {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errOut)
			}
			lines := strings.SplitN(out, "\n", 3)
			if lines[0] != tc.headline || tc.state != "working" && !strings.HasPrefix(lines[1], "hint: ") {
				t.Fatalf("headline %q, want %q; then %q", lines[0], tc.headline, lines[1])
			}
			out, _, _ = run(t, "driver", "--root", root, "--json")
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
	isolate(t)
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
		{name: "unknown format", args: []string{"--root", empty, "--format", "yaml"}, code: exitUsage, stderr: `pathfinder: driver: --format: unknown format "yaml" (valid: text, json, nfd, variant)` + "\n" + driverUsage},
		{name: "nfd without a driver", args: []string{"--root", empty, "--format", "nfd"}, code: exitNotFound, stdout: "",
			stderr: "pathfinder: no working NVIDIA driver (no-driver: no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1): no labels written\n"},
		{name: "nfd output without a driver", args: []string{"--root", empty, "--format", "nfd", "--output", empty}, code: exitNotFound,
			stderr: "pathfinder: no working NVIDIA driver (no-driver: no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1): the feature file in " + empty + " has no labels\n"},
		{name: "output of a missing directory", args: []string{"--root", empty, "--format", "nfd", "--output", "/nonexistent/features.d"}, code: exitUsage,
			stderr: "pathfinder: driver: --output /nonexistent/features.d: no such directory\n" + driverUsage},
		// /proc is a directory nobody can create a file in, root included.
		{name: "a feature file that cannot be written", args: []string{"--root", empty, "--format", "nfd", "--output", "/proc"}, code: exitUsage,
			stderr: "pathfinder: writing the feature file: mkdir /proc/.pathfinder-tmp-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, append([]string{"driver"}, tc.args...)...)
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
