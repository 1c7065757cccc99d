package driver

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func Test_merge(t *testing.T) {
	h100 := "NVIDIA H100 80GB HBM3"
	tests := []struct {
		name  string
		obs   []observation
		gpus  []string // "index bus name cc source sources"
		notes []string
	}{
		{
			name: "nvidia-smi without bus ids joins nvml by index",
			obs: []observation{
				{source: methodNVML, gpus: []gpuObs{{index: 0, busID: "0000:18:00.0", name: h100, cc: "9.0"}, {index: 1, busID: "0000:65:00.0", name: h100, cc: "9.0"}}},
				{source: methodNvidiaSMI, gpus: []gpuObs{{index: 0, name: h100, cc: "9.0", uuid: "GPU-a"}, {index: 1, name: h100, cc: "9.0", uuid: "GPU-b"}}},
			},
			gpus: []string{"0 0000:18:00.0 " + h100 + " 9.0 nvml nvml,nvidia-smi", "1 0000:65:00.0 " + h100 + " 9.0 nvml nvml,nvidia-smi"},
		},
		{
			name: "a GPU without bus id that matches nothing is dropped, not doubled",
			obs: []observation{
				{source: methodPCI, gpus: []gpuObs{{index: -1, busID: "0000:18:00.0", deviceID: "0x2330", name: "GH100 [H100 SXM5 80GB]"}}},
				{source: methodLibcuda, gpus: []gpuObs{{index: -1, name: h100, cc: "9.0"}}},
			},
			gpus:  []string{"0 0000:18:00.0 GH100 [H100 SXM5 80GB] 9.0 " + pciTableSource + " pci"},
			notes: []string{"libcuda lists a GPU without a PCI bus id (" + h100 + ") that matches none of the others"},
		},
		{
			name: "identical GPUs without bus ids anywhere",
			obs: []observation{
				{source: methodLibcuda, gpus: []gpuObs{{index: -1, name: h100, cc: "9.0"}, {index: -1, name: h100, cc: "9.0"}}},
			},
			gpus: []string{"0  " + h100 + " 9.0 libcuda libcuda", "1  " + h100 + " 9.0 libcuda libcuda"},
		},
		{
			name: "measured capabilities disagree",
			obs: []observation{
				{source: methodNvidiaSMI, cudaVersion: "12.2", gpus: []gpuObs{{index: 0, busID: "0000:18:00.0", name: h100, cc: "9.1"}}},
				{source: methodNVML, cudaVersion: "12.4", gpus: []gpuObs{{index: 0, busID: "0000:18:00.0", name: h100, cc: "9.0"}}},
			},
			gpus: []string{"0 0000:18:00.0 " + h100 + " 9.0 nvml nvidia-smi,nvml"},
			notes: []string{
				"methods disagree on the CUDA driver version (nvidia-smi 12.2, nvml 12.4); using nvml's",
				"GPU 0000:18:00.0: methods disagree on the compute capability (nvidia-smi 9.1, nvml 9.0); using nvml's",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := (&prober{obs: tc.obs}).merge()
			var got []string
			for _, g := range m.gpus {
				got = append(got, strings.Join([]string{
					strconv.Itoa(g.Index), g.PCIBusID, g.Name, g.ComputeCapability, g.ComputeCapabilitySource, strings.Join(g.Sources, ","),
				}, " "))
			}
			if !slices.Equal(got, tc.gpus) {
				t.Fatalf("gpus\n%q\nwant\n%q", got, tc.gpus)
			}
			if !slices.Equal(m.notes, tc.notes) {
				t.Fatalf("notes %q, want %q", m.notes, tc.notes)
			}
		})
	}
}

func Test_merged_complete(t *testing.T) {
	nvmlH100 := gpuObs{index: 0, busID: "0000:18:00.0", cc: "9.0"}
	pciH100 := gpuObs{index: -1, busID: "0000:18:00.0", deviceID: "0x2330"}
	pci3090 := gpuObs{index: -1, busID: "0000:c1:00.0", deviceID: "0x2204"}
	tests := []struct {
		name string
		obs  []observation
		want bool
	}{
		{name: "all measured", want: true, obs: []observation{
			{source: methodSysfs, driverVersion: "550.54.14"},
			{source: methodNVML, cudaVersion: "12.4", gpus: []gpuObs{nvmlH100}},
		}},
		{name: "inferred only", want: false, obs: []observation{
			{source: methodSysfs, driverVersion: "550.54.14"},
			{source: methodPCI, cudaVersion: "12.4", gpus: []gpuObs{pciH100}},
		}},
		{name: "a GPU nvml leaves out does not hold the probe back", want: true, obs: []observation{
			{source: methodSysfs, driverVersion: "550.54.14"},
			{source: methodPCI, gpus: []gpuObs{pciH100, pci3090}},
			{source: methodNVML, cudaVersion: "12.4", gpus: []gpuObs{nvmlH100}},
		}},
		{name: "no CUDA version", want: false, obs: []observation{
			{source: methodSysfs, driverVersion: "550.54.14"},
			{source: methodNVML, gpus: []gpuObs{nvmlH100}},
		}},
		{name: "no GPU", want: false, obs: []observation{
			{source: methodNVML, driverVersion: "550.54.14", cudaVersion: "12.4"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := (&prober{obs: tc.obs}).merge().complete(); got != tc.want {
				t.Fatalf("complete() = %v", got)
			}
		})
	}
}
