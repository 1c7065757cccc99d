package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func Test_versionInFileName(t *testing.T) {
	for _, tc := range []struct{ soname, file, want string }{
		{"libcuda.so.1", "libcuda.so.550.163.01", "550.163.01"},
		{"libnvidia-ml.so.1", "libnvidia-ml.so.535.261.03", "535.261.03"},
		{"libcuda.so.1", "libcuda.so.580.142", "580.142"},
		{"libcuda.so.1", "libcuda.so.1", ""},
		{"libcuda.so.1", "libcuda.so.1.1", ""}, // WSL2's
		{"libcuda.so.1", "libcuda.so", ""},
		{"libcuda.so.1", "libcudart.so.12.4.127", ""},
		{"libcuda.so.1", "libcuda.so.550.163.01.bak", ""},
		{"libnvidia-ml.so.1", "libcuda.so.550.163.01", ""},
	} {
		if got := versionInFileName(tc.soname, tc.file); got != tc.want {
			t.Errorf("versionInFileName(%q, %q) = %q, want %q", tc.soname, tc.file, got, tc.want)
		}
	}
}

// TestProbe_driverCodeGate: the driver's own code runs only where the module is loaded and every
// node it opens exists; a fake nvidia-smi that leaves a mark shows whether it ran.
func TestProbe_driverCodeGate(t *testing.T) {
	gpu := map[string]string{"/proc/driver/nvidia/gpus/0000:65:00.0/information": strings.Replace(gpuInformation("NVIDIA H100", "GPU-a", "0000:65:00.0"), "Device Minor: \t 0", "Device Minor: \t 1", 1)}
	without := func(files map[string]string, drop ...string) map[string]string {
		for _, d := range drop {
			delete(files, d)
		}
		return files
	}
	tests := []struct {
		name    string
		files   map[string]string
		blocked string // why nvidia-smi and NVML do not run; "" when they do
		libcuda string // why libcuda does not; "" when it does
	}{
		{name: "no module", files: map[string]string{"/dev/nvidiactl": ""}, blocked: "the nvidia kernel module is not loaded", libcuda: "the nvidia kernel module is not loaded"},
		{name: "no control node", files: without(liveFiles(nil), "/dev/nvidiactl"), blocked: "/dev/nvidiactl does not exist", libcuda: "/dev/nvidiactl does not exist"},
		{name: "a GPU's node missing", files: liveFiles(gpu), blocked: "/dev/nvidia1 does not exist", libcuda: "/dev/nvidia1 does not exist"},
		{name: "nvidia_uvm not loaded", files: without(liveFiles(nil), "/sys/module/nvidia_uvm"), libcuda: "the nvidia_uvm kernel module is not loaded"},
		{name: "uvm nodes missing", files: without(liveFiles(nil), "/dev/nvidia-uvm-tools"), libcuda: "/dev/nvidia-uvm-tools does not exist"},
		{name: "everything there", files: liveFiles(nil)},
		{name: "wsl2", files: map[string]string{"/dev/dxg": ""}},
		{name: "jetson nvgpu", files: map[string]string{"/sys/module/nvgpu": "dir", "/dev/nvhost-ctrl-gpu": "", "/dev/nvmap": ""}},
		{name: "a dangling control node", files: liveFiles(map[string]string{"/dev/nvidiactl": "-> /nowhere"}), blocked: "/dev/nvidiactl does not exist", libcuda: "/dev/nvidiactl does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mark := filepath.Join(t.TempDir(), "ran")
			smi := filepath.Join(t.TempDir(), "nvidia-smi")
			if err := os.WriteFile(smi, []byte("#!/bin/sh\ntouch "+mark+"\nexit 9\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			r := Probe(context.Background(), Options{
				Root: filetree.New(t, tc.files), rootIsLive: true, Methods: []string{methodNVML, methodLibcuda, methodNvidiaSMI},
				LookupEnv: env(map[string]string{envNVMLLibrary: "/nonexistent/libnvidia-ml.so.1", envCUDALibrary: "/nonexistent/libcuda.so.1"}),
				LookPath:  func(string) (string, error) { return smi, nil },
			})
			for _, m := range []string{methodNVML, methodNvidiaSMI, methodLibcuda} {
				why := tc.blocked
				if m == methodLibcuda {
					why = tc.libcuda
				}
				o := outcome(t, r, m)
				if ran := o.Outcome != OutcomeSkipped; ran != (why == "") || why != "" && !strings.Contains(o.Detail, "not run: "+why) {
					t.Errorf("%s: %s %q, want it blocked by %q", m, o.Outcome, o.Detail, why)
				}
			}
			if _, err := os.Stat(mark); (err == nil) != (tc.blocked == "") {
				t.Errorf("nvidia-smi ran: %v, want %v", err == nil, tc.blocked == "")
			}
		})
	}
}
