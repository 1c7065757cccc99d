package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/elfso"
)

// A captured machine with one H100 and driver 550.163.01: the kernel module, its device nodes, the
// GPU in /proc and on the PCI bus, the user-space libraries where Debian puts them.
const (
	fakeBus    = "0000:65:00.0"
	fakeUUID   = "GPU-9e1f2a3b-0000-1111-2222-333344445555"
	fakeName   = "NVIDIA H100 80GB HBM3"
	fakeDriver = "550.163.01"
	libDir     = "usr/lib/x86_64-linux-gnu"
)

// libcudaC is a libcuda.so.1 that answers as driver 550's does for one H100: CUDA 12.4, compute
// capability 9.0, the bus and UUID above (cuDeviceGetUuid_v2's 16 bytes).
const libcudaC = `
#include <stdio.h>
#include <string.h>
static int inited;
int cuInit(unsigned int flags) { if (flags) return 1; inited = 1; return 0; }
int cuDriverGetVersion(int *v) { *v = 12040; return 0; }
int cuDeviceGetCount(int *n) { if (!inited) return 3; *n = 1; return 0; }
int cuDeviceGet(int *dev, int ordinal) { if (ordinal != 0) return 101; *dev = 0; return 0; }
int cuDeviceGetName(char *buf, int len, int dev) { snprintf(buf, len, "NVIDIA H100 80GB HBM3"); return 0; }
int cuDeviceGetPCIBusId(char *buf, int len, int dev) { snprintf(buf, len, "0000:65:00.0"); return 0; }
int cuDeviceGetAttribute(int *v, int attr, int dev) {
	if (attr == 75) { *v = 9; return 0; }
	if (attr == 76) { *v = 0; return 0; }
	return 1;
}
int cuDeviceGetUuid_v2(unsigned char *u, int dev) {
	static const unsigned char id[16] = {0x9e,0x1f,0x2a,0x3b,0,0,0x11,0x11,0x22,0x22,0x33,0x33,0x44,0x44,0x55,0x55};
	memcpy(u, id, 16);
	return 0;
}
`

// nvidiaSMI answers -q -x and --query-gpu as NVIDIA's does, for the driver version it is given.
func nvidiaSMI(driverVersion string) string {
	return `#!/bin/sh
case "$1" in
-q)
	cat <<EOF
<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
	<timestamp>Thu Dec  3 21:00:00 2026</timestamp>
	<driver_version>` + driverVersion + `</driver_version>
	<cuda_version>12.4</cuda_version>
	<attached_gpus>1</attached_gpus>
	<gpu id="00000000:65:00.0">
		<product_name>` + fakeName + `</product_name>
		<uuid>` + fakeUUID + `</uuid>
		<minor_number>0</minor_number>
		<pci>
			<pci_bus>65</pci_bus>
			<pci_device_id>233010DE</pci_device_id>
			<pci_bus_id>00000000:65:00.0</pci_bus_id>
		</pci>
	</gpu>
</nvidia_smi_log>
EOF
	;;
--query-gpu=index,pci.bus_id,name,uuid,driver_version,compute_cap)
	echo "0, 00000000:65:00.0, ` + fakeName + `, ` + fakeUUID + `, ` + driverVersion + `, 9.0"
	;;
*)
	echo "unexpected arguments: $*" >&2
	exit 2
	;;
esac
`
}

// fakeMachine writes the captured machine under root, and a libcuda.so.1 the loader finds in it.
func fakeMachine(t *testing.T, root string) {
	t.Helper()
	files := map[string]string{
		"sys/module/nvidia/version":  fakeDriver + "\n",
		"proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  " + fakeDriver + "  Release Build  (dvs-builder@U22-I3-AE18-23-3)  Wed Jun 18 00:00:00 UTC 2025\n",
		"proc/driver/nvidia/gpus/" + fakeBus + "/information": "Model: \t\t " + fakeName + "\nIRQ:   \t\t 160\nGPU UUID: \t " + fakeUUID +
			"\nVideo BIOS: \t 96.00.74.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t " + fakeBus + "\nDevice Minor: \t 0\nGPU Excluded:\t No\n",
		"sys/bus/pci/devices/" + fakeBus + "/vendor": "0x10de\n",
		"sys/bus/pci/devices/" + fakeBus + "/device": "0x2330\n",
		"sys/bus/pci/devices/" + fakeBus + "/class":  "0x030200\n",
		"dev/nvidiactl": "", "dev/nvidia0": "",
	}
	for p, data := range files {
		write(t, filepath.Join(root, p), data, 0o644)
	}
	for _, l := range []struct{ soname, code string }{{"libcuda.so.1", libcudaC}, {"libnvidia-ml.so.1", ""}} {
		file := filepath.Join(root, libDir, strings.TrimSuffix(l.soname, "1")+fakeDriver)
		elfso.Build(t, file, l.soname, l.code)
		if err := os.Symlink(filepath.Base(file), filepath.Join(root, libDir, l.soname)); err != nil {
			t.Fatal(err)
		}
	}
}

func write(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

// TestGPUCheck_fakeMachine runs scripts/gpu-check.sh against a captured machine, with a fake
// nvidia-smi on PATH and a libcuda built here where the loader finds it, and reads its table: once
// with every tool agreeing, once with nvidia-smi reporting another driver version.
func TestGPUCheck_fakeMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three binaries (-short)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the script is for Linux")
	}
	for _, tool := range []string{"gcc", "bash", "timeout"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not found: the script builds the binaries")
	}
	root, bin, home := t.TempDir(), t.TempDir(), t.TempDir()
	fakeMachine(t, root)
	script, _ := filepath.Abs("../gpu-check.sh")
	goEnv := func(k string) string {
		out, _ := exec.Command(goBin, "env", k).Output()
		return strings.TrimSpace(string(out))
	}
	tests := []struct {
		name      string
		smiDriver string
		build     string
		code      int
		want      []string // lines of the output, as regular expressions
	}{
		{name: "every tool agrees", smiDriver: fakeDriver, build: "", code: 0, want: []string{
			`^FACT +PATHFINDER \(METHOD\) +VALUE +DRIVER'S OWN TOOLS +VERDICT$`,
			`^driver version +sysfs +550\.163\.01 +550\.163\.01 \(nvidia-smi -q -x, nvidia-smi --query-gpu\) +agree$`,
			`^ +all methods, static build +550\.163\.01 +" +agree$`,
			`^cuda driver version +- +- +12\.4 \(cuDriverGetVersion, nvidia-smi -q -x\) +not reported by pathfinder$`,
			`^max cuda toolkit +sysfs +12\.4 +12\.4 \(cuDriverGetVersion, nvidia-smi -q -x\) +agree$`,
			`^gpu count +procfs +1 +1 \(cuDeviceGetCount, nvidia-smi -q -x, nvidia-smi --query-gpu\) +agree$`,
			`^gpu 0000:65:00\.0 name +procfs +NVIDIA H100 80GB HBM3 +NVIDIA H100 80GB HBM3 \(nvidia-smi -q -x, nvidia-smi --query-gpu, libcuda\) +agree$`,
			`^ +pci +GH100 \[H100 SXM5 80GB\] +" +not compared: the PCI id database's name for the chip$`,
			`^gpu 0000:65:00\.0 uuid +procfs +GPU-9e1f2a3b-0000-1111-2222-333344445555 +GPU-9e1f2a3b-0000-1111-2222-333344445555 \(nvidia-smi -q -x, nvidia-smi --query-gpu, libcuda\) +agree$`,
			`^gpu 0000:65:00\.0 compute capability +pci +9\.0 \(pci-id-table \(inferred\)\) +9\.0 \(nvidia-smi --query-gpu, libcuda\) +agree$`,
			`^gpu 0000:65:00\.0 device id +pci +0x2330 +0x2330 \(nvidia-smi -q -x\) +agree$`,
			`^nfd nvidia\.com/gpu\.product +driver --format nfd +NVIDIA-H100-80GB-HBM3 +NVIDIA-H100-80GB-HBM3 \(nvidia-smi --query-gpu\) +agree$`,
			`^pathfinder driver: working \(driver 550\.163\.01 is loaded`,
			`^  nvml +skipped +not run: `,
			`^libcuda through pathfinder's Go API: .*/usr/lib/x86_64-linux-gnu/libcuda\.so\.1 \(system-search\)$`,
			`^doctor: libraries \d+ of 50 found.* \| driver working: driver 550\.163\.01 .* \| no problems found$`,
			`^disagreements: none$`,
		}},
		{name: "nvidia-smi says another version", smiDriver: "550.163.02", build: "--no-build", code: 1, want: []string{
			`^driver version +sysfs +550\.163\.01 +550\.163\.02 \(nvidia-smi -q -x, nvidia-smi --query-gpu\) +DISAGREE$`,
			`^user-space driver version +userspace +550\.163\.01 +550\.163\.02 \(nvidia-smi -q -x\) +DISAGREE$`,
			`^gpu 0000:65:00\.0 compute capability +pci +9\.0 \(pci-id-table \(inferred\)\) +9\.0 \(nvidia-smi --query-gpu, libcuda\) +agree$`,
			`^disagreements: 8$`,
			`^  - driver version: pathfinder's procfs says 550\.163\.01, 550\.163\.02 \(nvidia-smi -q -x, nvidia-smi --query-gpu\)$`,
			`^  - nfd nvidia\.com/cuda\.driver-version\.full: pathfinder's driver --format nfd says 550\.163\.01, 550\.163\.02 \(nvidia-smi -q -x\)$`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tools, out := t.TempDir(), t.TempDir()
			write(t, filepath.Join(tools, "nvidia-smi"), nvidiaSMI(tc.smiDriver), 0o755)
			args := []string{script, "--root", root, "--out", out, "--bin", bin}
			if tc.build != "" {
				args = append(args, tc.build)
			}
			cmd := exec.Command("bash", args...)
			cmd.Env = []string{
				"PATH=" + tools + ":" + filepath.Dir(goBin) + ":/usr/bin:/bin",
				"HOME=" + home, "TMPDIR=" + os.TempDir(),
				"GOCACHE=" + goEnv("GOCACHE"), "GOMODCACHE=" + goEnv("GOMODCACHE"), "GOPATH=" + goEnv("GOPATH"), "GOFLAGS=" + goEnv("GOFLAGS"),
				"LD_LIBRARY_PATH=" + filepath.Join(root, libDir), // where the loader finds the fake libcuda
			}
			output, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			t.Logf("gpu-check.sh %s:\n%s", strings.Join(args[1:], " "), output)
			if code != tc.code {
				t.Fatalf("exit %d, want %d", code, tc.code)
			}
			lines := strings.Split(strings.ReplaceAll(string(output), root, "$ROOT"), "\n")
			for _, w := range tc.want {
				re := regexp.MustCompile(w)
				found := false
				for _, l := range lines {
					found = found || re.MatchString(l)
				}
				if !found {
					t.Errorf("no line matches %s", w)
				}
			}
			if tc.code == 0 && strings.Contains(string(output), "DISAGREE") {
				t.Errorf("a disagreement where every tool agrees")
			}
		})
	}
}

// TestGPUCheck_everyMethod: the script runs each of host/driver's methods, and its methods are
// table.go's.
func TestGPUCheck_everyMethod(t *testing.T) {
	script, err := os.ReadFile("../gpu-check.sh")
	if err != nil {
		t.Fatal(err)
	}
	want := `methods="` + strings.Join(driver.MethodNames(), " ") + `"`
	if !strings.Contains(string(script), want) {
		t.Fatalf("scripts/gpu-check.sh does not say %s", want)
	}
	if !strings.Contains(string(script), "--query-gpu=$query") || !strings.Contains(string(script), "query="+smiQueryFields+"\n") {
		t.Fatalf("scripts/gpu-check.sh does not query %s, the columns table.go reads", smiQueryFields)
	}
}
