package driver

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// benchRoot is a two-H100 machine: device node, /sys, /proc with per-GPU files, and the PCI tree.
func benchRoot(b *testing.B) string {
	files := liveFiles(map[string]string{
		"/sys/module/nvidia/version":                        "550.144.03\n",
		"/proc/driver/nvidia/version":                       sample(b, "proc_driver_nvidia_version/open_x86_64_550.144.03.txt"),
		"/proc/driver/nvidia/gpus/0000:18:00.0/information": gpuInformation("NVIDIA H100 80GB HBM3", "GPU-a", "0000:18:00.0"),
		"/proc/driver/nvidia/gpus/0000:65:00.0/information": gpuInformation("NVIDIA H100 80GB HBM3", "GPU-b", "0000:65:00.0"),
	})
	pciDevice(files, "0000:18:00.0", 0x10de, 0x030200, 0x2330, "nvidia")
	pciDevice(files, "0000:65:00.0", 0x10de, 0x030200, 0x2330, "nvidia")
	pciDevice(files, "0000:00:02.0", 0x8086, 0x030000, 0x9a49, "i915")
	return filetree.New(b, files)
}

// BenchmarkProbe_files is the path without ioctls or subprocesses: /sys, /proc and the PCI tree.
func BenchmarkProbe_files(b *testing.B) {
	root := benchRoot(b)
	opts := Options{Root: root, Methods: []string{methodSysfs, methodProcfs, methodPCI}, LookupEnv: env(nil)}
	for b.Loop() {
		if r := Probe(context.Background(), opts); r.DriverVersion == "" || len(r.GPUs) != 2 {
			b.Fatalf("%+v", r)
		}
	}
}

// BenchmarkProbe_nvidiaSMI is the floor of a subprocess method: a fake nvidia-smi shell script, run
// for the query and once more for the CUDA version in its header.
func BenchmarkProbe_nvidiaSMI(b *testing.B) {
	path := writeSMI(b, filepath.Join(b.TempDir(), "nvidia-smi"), smiFake{query: h100Lines(b, "550.54.14"), header: sample(b, "nvidia_smi/header_classic_windows_535.98.txt")})
	opts := Options{Root: filetree.New(b, liveFiles(nil)), rootIsLive: true, Methods: []string{methodNvidiaSMI}, LookupEnv: env(nil), LookPath: func(string) (string, error) { return path, nil }}
	for b.Loop() {
		if r := Probe(context.Background(), opts); len(r.GPUs) != 8 {
			b.Fatalf("%+v", r.Methods)
		}
	}
}

// BenchmarkNvidiaSMI_oneRun is one run of the fake script, without the probe around it.
func BenchmarkNvidiaSMI_oneRun(b *testing.B) {
	path := writeSMI(b, filepath.Join(b.TempDir(), "nvidia-smi"), smiFake{query: h100Lines(b, "550.54.14")})
	p := &prober{ctx: context.Background(), timeout: defaultTimeout}
	for b.Loop() {
		if _, code, err := p.runTool(path, smiQueryArgs(smiQueryFields)...); err != nil || code != 0 {
			b.Fatal(code, err)
		}
	}
}

// BenchmarkProbe_full is the default method list on a fake root with a stub NVML that answers every
// fact, so the slow methods are skipped: the common case on a healthy GPU machine.
func BenchmarkProbe_full(b *testing.B) {
	lib := nvmlStubForBench(b)
	opts := Options{Root: benchRoot(b), rootIsLive: true, LookupEnv: env(map[string]string{envNVMLLibrary: lib}),
		LookPath: func(string) (string, error) { return "", os.ErrNotExist }}
	for b.Loop() {
		r := Probe(context.Background(), opts)
		if r.CUDADriverVersion != "12.4" || len(r.GPUs) != 2 || r.GPUs[0].ComputeCapabilitySource != methodNVML {
			b.Fatalf("%+v", r)
		}
	}
}

// BenchmarkProbe_libcudaChild is the libcuda method: this binary re-executed as the child.
func BenchmarkProbe_libcudaChild(b *testing.B) {
	lib := cudaStubForBench(b)
	opts := Options{Root: filetree.New(b, liveFiles(nil)), rootIsLive: true, Methods: []string{methodLibcuda}, LookupEnv: env(map[string]string{envCUDALibrary: lib})}
	for b.Loop() {
		if r := Probe(context.Background(), opts); len(r.GPUs) != 2 {
			b.Fatalf("%+v", r.Methods)
		}
	}
}
