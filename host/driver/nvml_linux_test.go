//go:build !pathfinder_static

package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ebitengine/purego"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func TestProbe_nvml(t *testing.T) {
	tests := []struct {
		name     string
		defines  []string
		soname   string
		missing  bool // point the override at a file that does not exist
		timeout  time.Duration
		outcome  Outcome
		detail   []string
		gpus     int
		cc       string
		ccSource string
	}{
		{name: "two H100s", outcome: OutcomeOK, detail: []string{"driver 550.54.14, CUDA 12.4, 2 GPUs"}, gpus: 2, cc: "9.0", ccSource: methodNVML},
		{name: "driver not loaded", defines: []string{"INIT_RET=9"}, outcome: OutcomeFailed, detail: []string{"nvmlInit_v2 returned NVML_ERROR_DRIVER_NOT_LOADED (9)"}},
		{name: "version mismatch", defines: []string{"INIT_RET=18"}, outcome: OutcomeFailed, detail: []string{"NVML_ERROR_LIB_RM_VERSION_MISMATCH (18)"}},
		{name: "lacks nvmlInit_v2", defines: []string{"LACK_INIT"}, outcome: OutcomeFailed, detail: []string{"lacks nvmlInit_v2"}},
		{name: "lacks the compute capability call", defines: []string{"LACK_CC"}, outcome: OutcomeOK,
			detail: []string{"lacks nvmlDeviceGetCudaComputeCapability"}, gpus: 2, cc: "9.0", ccSource: pciTableSource},
		{name: "a GPU fell off the bus", defines: []string{"LOST_INDEX=1"}, outcome: OutcomeOK,
			detail: []string{"GPU 1: nvmlDeviceGetHandleByIndex_v2 returned NVML_ERROR_GPU_IS_LOST (15)"}, gpus: 1, cc: "9.0", ccSource: methodNVML},
		{name: "missing library", missing: true, outcome: OutcomeFailed, detail: []string{"cannot load PATHFINDER_NVML_LIBRARY: /nope/libnvidia-ml.so.1: cannot open shared object file"}},
		// Another soname, so that the library this leaves loaded for a while cannot stand in for
		// libnvidia-ml.so.1 in a later test.
		{name: "hangs", defines: []string{"HANG"}, soname: "libnvidia-ml-hang.so.1", timeout: 200 * time.Millisecond,
			outcome: OutcomeFailed, detail: []string{"did not answer within 200ms"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lib := "/nope/libnvidia-ml.so.1"
			if !tc.missing {
				soname := tc.soname
				if soname == "" {
					soname = "libnvidia-ml.so.1"
				}
				lib = buildStub(t, soname, nvmlStubC, tc.defines...)
			}
			r := Probe(context.Background(), Options{
				Root: filetree.New(t, liveFiles(nil)), Methods: []string{methodNVML}, Timeout: tc.timeout,
				LookupEnv: env(map[string]string{envNVMLLibrary: lib}), rootIsLive: true,
			})
			wantOutcome(t, r, methodNVML, tc.outcome, tc.detail...)
			if len(r.GPUs) != tc.gpus {
				t.Fatalf("%d GPUs, want %d: %+v", len(r.GPUs), tc.gpus, r.GPUs)
			}
			if tc.outcome == OutcomeOK && (r.DriverVersion != "550.54.14" || r.DriverVersionSource != methodNVML || r.CUDADriverVersion != "12.4" || r.MaxCUDA != "12.4") {
				t.Fatalf("driver %q from %q, cuda %q, max %q", r.DriverVersion, r.DriverVersionSource, r.CUDADriverVersion, r.MaxCUDA)
			}
			for i, g := range r.GPUs {
				if g.Name != "NVIDIA H100 80GB HBM3" || g.DeviceID != "0x2330" || g.ComputeCapability != tc.cc || g.ComputeCapabilitySource != tc.ccSource ||
					g.Index != i || !strings.HasPrefix(g.UUID, "GPU-0000000") {
					t.Errorf("GPU %d: %+v", i, g)
				}
			}
			if tc.gpus == 2 && (r.GPUs[0].PCIBusID != "0000:18:00.0" || r.GPUs[1].PCIBusID != "0000:65:00.0") {
				t.Errorf("bus ids %s %s", r.GPUs[0].PCIBusID, r.GPUs[1].PCIBusID)
			}
		})
	}
}

// TestProbe_nvmlWSLFallback finds libnvidia-ml.so.1 in <root>/usr/lib/wsl/lib when the dynamic
// loader does not, as on a WSL2 machine whose ld.so.conf lacks that folder.
func TestProbe_nvmlWSLFallback(t *testing.T) {
	if h, err := purego.Dlopen("libnvidia-ml.so.1", purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil {
		purego.Dlclose(h)
		t.Skip("this machine's loader finds a real libnvidia-ml.so.1, which comes first")
	}
	root := filetree.New(t, map[string]string{"/dev/dxg": ""})
	lib := buildStub(t, "libnvidia-ml.so.1", nvmlStubC, `DRIVER="572.60"`, "CUDA=12080", "COUNT=1")
	copyFile(t, lib, filepath.Join(root, wslLibDir, "libnvidia-ml.so.1"))
	r := Probe(context.Background(), Options{Root: root, Methods: []string{methodNVML}, LookupEnv: env(nil), rootIsLive: true})
	wantOutcome(t, r, methodNVML, OutcomeOK, filepath.Join(root, wslLibDir, "libnvidia-ml.so.1"))
	// 572.60 is a Windows driver: NVIDIA's Windows column puts it at CUDA 12.8 GA (>= 570.65), below
	// 12.8 Update 1 (>= 572.61); read as a Linux version it would miss 12.8 entirely.
	if r.Setup != SetupWSL2 || r.DriverVersion != "572.60" || r.MaxCUDARelease != "CUDA 12.8 GA" || r.CUDADriverVersion != "12.8" {
		t.Fatalf("setup %s driver %s max %s cuda %s", r.Setup, r.DriverVersion, r.MaxCUDARelease, r.CUDADriverVersion)
	}
}

// TestProbe_nvmlWithFiles merges NVML with /sys and the PCI tree: the kernel's version wins over the
// library's, NVML's measured capability wins over the table's, and what differs is noted.
func TestProbe_nvmlWithFiles(t *testing.T) {
	files := liveFiles(dgxLike())
	files["/sys/module/nvidia/version"] = "550.144.03\n"
	root := filetree.New(t, files)
	lib := buildStub(t, "libnvidia-ml.so.1", nvmlStubC, `DRIVER="550.127.05"`, "CC_MINOR=1")
	r := Probe(context.Background(), Options{Root: root, Methods: append(fileMethods, methodNVML), LookupEnv: env(map[string]string{envNVMLLibrary: lib}),
		LookPath: func(string) (string, error) { return "", os.ErrNotExist }, rootIsLive: true})
	if r.DriverVersion != "550.144.03" || r.DriverVersionSource != methodSysfs {
		t.Fatalf("driver %s from %s", r.DriverVersion, r.DriverVersionSource)
	}
	for _, n := range []string{
		"methods disagree on the driver version (sysfs 550.144.03, nvml 550.127.05); using sysfs's",
		"GPU 0000:18:00.0: the PCI-id table infers compute capability 9.0 for device 0x2330 (GH100), nvml measured 9.1",
		"nvml does not list 1 GPU that other methods see: 0000:c1:00.0 (pci; bound to vfio-pci)",
	} {
		if !hasNote(r, n) {
			t.Errorf("notes %q lack %q", r.Notes, n)
		}
	}
	if len(r.GPUs) != 3 {
		t.Fatalf("%d GPUs", len(r.GPUs))
	}
	h := r.GPUs[0]
	if h.Index != 0 || h.PCIBusID != "0000:18:00.0" || h.ComputeCapability != "9.1" || h.ComputeCapabilitySource != methodNVML ||
		h.Name != "NVIDIA H100 80GB HBM3" || h.KernelDriver != "nvidia" || strings.Join(h.Sources, ",") != "pci,nvml" {
		t.Fatalf("GPU 0 %+v", h)
	}
	// The GPU NVML cannot see keeps no index and the table's capability.
	v := r.GPUs[2]
	if v.Index != -1 || v.PCIBusID != "0000:c1:00.0" || v.ComputeCapability != "8.6" || v.ComputeCapabilitySource != pciTableSource {
		t.Fatalf("GPU 2 %+v", v)
	}
}

// TestProbe_defaultComplete runs the default method list where NVML answers everything: the slow
// methods are skipped, and a CUDA version newer than the driver's table entry is explained.
func TestProbe_defaultComplete(t *testing.T) {
	root := filetree.New(t, liveFiles(map[string]string{"/sys/module/nvidia/version": "535.104.05\n"}))
	lib := buildStub(t, "libnvidia-ml.so.1", nvmlStubC, `DRIVER="535.104.05"`, "CUDA=12080")
	r := Probe(context.Background(), Options{
		Root:       root,
		rootIsLive: true,
		LookupEnv:  env(map[string]string{envNVMLLibrary: lib}),
		LookPath:   func(string) (string, error) { t.Error("nvidia-smi was looked for"); return "", os.ErrNotExist },
	})
	wantOutcome(t, r, methodNVML, OutcomeOK)
	wantOutcome(t, r, methodLibcuda, OutcomeSkipped, "not needed")
	wantOutcome(t, r, methodNvidiaSMI, OutcomeSkipped, "not needed")
	if r.State != StateWorking || r.Summary != "driver 535.104.05 is loaded and working (nvml answered)" {
		t.Fatalf("state %s: %s", r.State, r.Summary)
	}
	if r.MaxCUDA != "12.2" || r.CUDADriverVersion != "12.8" || !hasNote(r, "forward-compatibility") {
		t.Fatalf("max %s cuda %s notes %q", r.MaxCUDA, r.CUDADriverVersion, r.Notes)
	}
}
