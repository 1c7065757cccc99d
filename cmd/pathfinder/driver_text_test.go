package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/host/driver"
)

func Test_writeDriverText(t *testing.T) {
	t.Parallel()
	native := &driver.Report{
		State: driver.StateWorking, Summary: "driver 550.144.03 is loaded", Setup: driver.SetupNative,
		DriverVersion: "550.144.03", DriverVersionSource: "sysfs", KernelModule: "open",
		MaxCUDA: "12.4", MaxCUDARelease: "CUDA 12.4 Update 1",
		GPUs: []driver.GPU{
			{Index: 0, Name: "NVIDIA H100 80GB HBM3", PCIBusID: "0000:18:00.0", DeviceID: "0x2330", ComputeCapability: "9.0", ComputeCapabilitySource: "pci-id-table (inferred)", UUID: "GPU-aaaaaaaa-0000-0000-0000-000000000000", KernelDriver: "nvidia"},
			{Index: 2, Name: "GA102 [GeForce RTX 3090]", PCIBusID: "0000:c1:00.0", DeviceID: "0x2204", ComputeCapability: "8.6", ComputeCapabilitySource: "pci-id-table (inferred)", KernelDriver: "vfio-pci"},
			{Index: 3},
		},
		Methods: []driver.MethodOutcome{
			{Name: "setup", Outcome: driver.OutcomeOK, Detail: "native: /dev/nvidiactl is present", Duration: 3 * time.Microsecond},
			{Name: "ioctl", Outcome: driver.OutcomeFailed, Detail: "inappropriate ioctl for device"},
		},
		Notes:    []string{"a note"},
		Duration: 1500 * time.Microsecond,
	}
	notLoaded := &driver.Report{
		State: driver.StateNotLoaded, Setup: driver.SetupNoDriver,
		UserSpaceVersion: "550.163.01", MaxCUDA: "12.4", MaxCUDARelease: "CUDA 12.4 Update 1", MaxCUDASource: driver.MaxCUDAFromUserSpace,
		UserSpace: []driver.UserSpaceLibrary{
			{Soname: "libcuda.so.1", Path: "/usr/lib/x86_64-linux-gnu/libcuda.so.1", RealPath: "/usr/lib/x86_64-linux-gnu/libcuda.so.550.163.01", Via: "default-dirs", Version: "550.163.01"},
			{Soname: "libnvidia-ml.so.1", Error: "not found"},
		},
	}
	tests := []struct {
		name    string
		r       *driver.Report
		want    []string // in the text with runs of spaces squeezed, since column widths follow the data
		wantNot []string
	}{
		{name: "working", r: native, want: []string{
			"driver 550.144.03 is loaded\n\n",
			"state working\nsetup native\n",
			"driver 550.144.03 (sysfs; open kernel module)\n",
			"max cuda toolkit 12.4 (CUDA 12.4 Update 1)\n",
			"gpus 3\n",
			" 0 NVIDIA H100 80GB HBM3 0000:18:00.0 0x2330 cc 9.0 (pci-id-table (inferred)) GPU-aaaaaaaa-0000-0000-0000-000000000000\n",
			" 2 GA102 [GeForce RTX 3090] 0000:c1:00.0 0x2204 cc 8.6 (pci-id-table (inferred)) bound to vfio-pci\n",
			" 3 - - - cc ?\n",
			"methods\n setup ok 3µs native: /dev/nvidiactl is present\n",
			" ioctl failed 0s inappropriate ioctl for device\n",
			"notes\n - a note\n",
			"took 1.5ms\n",
		}, wantNot: []string{"hint:", "user-space driver", "by the user-space driver"}},
		{name: "no driver", r: &driver.Report{State: driver.StateNoDriver, Setup: driver.SetupNoDriver, Summary: "no NVIDIA driver", Hint: "install NVIDIA's driver"},
			want: []string{"no NVIDIA driver\nhint: install NVIDIA's driver\n\n", "setup no-driver\ndriver not found\n", "gpus 0\nmethods\ntook 0s\n"}},
		{name: "max cuda by the user-space driver", r: notLoaded, want: []string{
			"user-space driver 550.163.01\n",
			" libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1 → libcuda.so.550.163.01 (default-dirs)\n",
			" libnvidia-ml.so.1 not found\n",
			"max cuda toolkit 12.4 (CUDA 12.4 Update 1; by the user-space driver 550.163.01, no kernel module's version known)\n",
		}},
		{name: "only the toolkit's stub", r: &driver.Report{UserSpace: []driver.UserSpaceLibrary{
			{Soname: "libcuda.so.1", Path: "/usr/local/cuda/lib64/stubs/libcuda.so.1", RealPath: "/usr/local/cuda/lib64/stubs/libcuda.so.1", Via: "LD_LIBRARY_PATH", Stub: true}}},
			want: []string{"user-space driver not found\n", "(LD_LIBRARY_PATH): the CUDA toolkit's stub, not the driver's\n"}},
		{name: "a library without a version", r: &driver.Report{UserSpace: []driver.UserSpaceLibrary{
			{Soname: "libcuda.so.1", Path: "/opt/libcuda.so.1", RealPath: "/opt/libcuda.so.1", Via: "PATHFINDER_CUDA_LIBRARY"}}},
			want: []string{"user-space driver version unknown\n"}},
	}
	squeeze := regexp.MustCompile(` +`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			if err := writeDriverText(&b, tc.r); err != nil {
				t.Fatal(err)
			}
			out := squeeze.ReplaceAllString(b.String(), " ")
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("text lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(out, w) {
					t.Errorf("text has %q:\n%s", w, out)
				}
			}
		})
	}
}
