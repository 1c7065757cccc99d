//go:build !pathfinder_static

package driver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/child"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// TestProbe_libcuda runs the real child: this test binary re-executed, served by the package's
// initialisation before TestMain could run the tests again, loading a stub libcuda.so.1 through purego.
func TestProbe_libcuda(t *testing.T) {
	tests := []struct {
		name    string
		defines []string
		missing bool
		vars    map[string]string
		timeout time.Duration
		outcome Outcome
		detail  []string
		gpus    int
	}{
		{name: "two GPUs", outcome: OutcomeOK, detail: []string{"CUDA 12.8, 2 devices"}, gpus: 2},
		{name: "empty CUDA_VISIBLE_DEVICES", vars: map[string]string{envVisibleGPUs: ""}, outcome: OutcomeFailed,
			detail: []string{"cuInit returned CUDA_ERROR_NO_DEVICE (100)", "CUDA_VISIBLE_DEVICES is set but empty", "cuDriverGetVersion: CUDA 12.8"}},
		{name: "toolkit stub library", defines: []string{"INIT_RET=34"}, outcome: OutcomeFailed,
			detail: []string{"CUDA_ERROR_STUB_LIBRARY (34)", "lib64/stubs"}},
		{name: "lacks cuInit", defines: []string{"LACK_INIT"}, outcome: OutcomeFailed, detail: []string{"lacks cuInit"}},
		{name: "missing library", missing: true, outcome: OutcomeFailed, detail: []string{"/nope/libcuda.so.1"}},
		{name: "hangs in cuInit", defines: []string{"HANG"}, timeout: 300 * time.Millisecond, outcome: OutcomeFailed,
			detail: []string{"did not answer within 300ms"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lib := "/nope/libcuda.so.1"
			if !tc.missing {
				lib = buildStub(t, "libcuda.so.1", cudaStubC, tc.defines...)
			}
			vars := map[string]string{envCUDALibrary: lib}
			for k, v := range tc.vars {
				vars[k] = v
			}
			r := Probe(context.Background(), Options{Root: filetree.New(t, liveFiles(nil)), Methods: []string{methodLibcuda}, LookupEnv: env(vars), Timeout: tc.timeout, rootIsLive: true})
			wantOutcome(t, r, methodLibcuda, tc.outcome, tc.detail...)
			if len(r.GPUs) != tc.gpus {
				t.Fatalf("%d GPUs, want %d", len(r.GPUs), tc.gpus)
			}
			if tc.gpus == 0 {
				return
			}
			if r.CUDADriverVersion != "12.8" || r.CUDADriverVersionSource != methodLibcuda {
				t.Fatalf("cuda %s from %s", r.CUDADriverVersion, r.CUDADriverVersionSource)
			}
			for i, g := range r.GPUs {
				if g.ComputeCapability != "9.0" || g.ComputeCapabilitySource != methodLibcuda || g.Name != "NVIDIA H100 80GB HBM3" || g.Index != i {
					t.Errorf("GPU %d %+v", i, g)
				}
			}
			if r.GPUs[1].PCIBusID != "0000:65:00.0" {
				t.Errorf("GPU 1 bus %s", r.GPUs[1].PCIBusID)
			}
		})
	}
}

// TestProbe_libcudaFillsPCI is the container case: the PCI tree and /sys give the GPUs and the
// driver, NVML is absent, and the child's measured capability replaces the table's inference.
func TestProbe_libcudaFillsPCI(t *testing.T) {
	files := liveFiles(dgxLike())
	files["/sys/module/nvidia/version"] = "570.195.03\n"
	lib := buildStub(t, "libcuda.so.1", cudaStubC, "VERSION=12080")
	r := Probe(context.Background(), Options{
		Root:       filetree.New(t, files),
		rootIsLive: true,
		LookupEnv:  env(map[string]string{envCUDALibrary: lib, envNVMLLibrary: "/nope/libnvidia-ml.so.1"}),
		LookPath:   func(string) (string, error) { return "", context.Canceled },
	})
	wantOutcome(t, r, methodNVML, OutcomeFailed)
	wantOutcome(t, r, methodLibcuda, OutcomeOK)
	// libcuda measured the H100s; the 3090 bound to vfio-pci is invisible to CUDA, so its capability
	// stays inferred, and nvidia-smi, which sees what libcuda sees, is not needed.
	wantOutcome(t, r, methodNvidiaSMI, OutcomeSkipped, "not needed")
	if r.DriverVersion != "570.195.03" || r.CUDADriverVersion != "12.8" || r.MaxCUDA != "12.8" || len(r.GPUs) != 3 {
		t.Fatalf("driver %s cuda %s max %s gpus %d", r.DriverVersion, r.CUDADriverVersion, r.MaxCUDA, len(r.GPUs))
	}
	for _, g := range r.GPUs[:2] {
		if g.ComputeCapabilitySource != methodLibcuda || g.Name != "NVIDIA H100 80GB HBM3" {
			t.Errorf("%+v", g)
		}
	}
	if r.GPUs[2].ComputeCapabilitySource != pciTableSource {
		t.Errorf("%+v", r.GPUs[2])
	}
}

// TestProbe_libcudaRecursionGuard: a process started in a role nothing in it serves runs the
// program's own code, and must not start a child of its own.
func TestProbe_libcudaRecursionGuard(t *testing.T) {
	t.Setenv(child.RoleVar, "some-other-role")
	r := Probe(context.Background(), Options{Root: filetree.New(t, liveFiles(nil)), Methods: []string{methodLibcuda}, LookupEnv: env(nil), rootIsLive: true})
	wantOutcome(t, r, methodLibcuda, OutcomeFailed, `a child in the role "some-other-role", which nothing in it serves`)
}

func Test_cudaChildOutcome(t *testing.T) {
	p := &prober{lookupEnv: env(map[string]string{envVisibleGPUs: "7"})}
	tests := []struct {
		name     string
		res      cudaChildResult
		override bool
		outcome  Outcome
		detail   string
		signal   driverSignal
	}{
		{name: "no libcuda", res: cudaChildResult{Step: "dlopen", Error: "libcuda.so.1: cannot open shared object file"}, outcome: OutcomeUnavailable, detail: "cannot load libcuda.so.1"},
		{name: "no libcuda where one was named", res: cudaChildResult{Step: "dlopen", Error: "x"}, override: true, outcome: OutcomeFailed, detail: "x"},
		{name: "visible devices name no GPU", res: cudaChildResult{Library: "l", Step: "cuInit", Code: 100, Error: "cuInit returned CUDA_ERROR_NO_DEVICE (100)"},
			outcome: OutcomeFailed, detail: `CUDA_VISIBLE_DEVICES="7" names no GPU`},
		{name: "libcuda of another version than the module", res: cudaChildResult{Library: "l", Step: "cuInit", Code: 803, Error: "cuInit returned CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)"},
			outcome: OutcomeFailed, detail: "the kernel module and libcuda are different versions", signal: signalMismatch},
		{name: "a device error", res: cudaChildResult{Library: "l", DriverVersion: 13000, Devices: []cudaChildDevice{{Ordinal: 0, Error: "cuDeviceGet returned CUresult 5"}}},
			outcome: OutcomeOK, detail: "device 0: cuDeviceGet returned CUresult 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := cudaChildOutcome(p, tc.res, tc.override)
			if got.outcome != tc.outcome || !strings.Contains(got.detail, tc.detail) || got.signal != tc.signal {
				t.Fatalf("got %s %q (signal %d), want %s containing %q (signal %d)", got.outcome, got.detail, got.signal, tc.outcome, tc.detail, tc.signal)
			}
		})
	}
}
