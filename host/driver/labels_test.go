package driver

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// labelLines is a label set as name=value lines, sorted, for comparing.
func labelLines(l NodeLabels) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(l.Labels)) {
		b.WriteString(k + "=" + l.Labels[k] + "\n")
	}
	return b.String()
}

func TestReport_NodeLabels(t *testing.T) {
	h100 := GPU{Index: 0, Name: "NVIDIA H100 80GB HBM3", PCIBusID: "0000:18:00.0", ComputeCapability: "9.0", Sources: []string{methodNVML}}
	h100b := h100
	h100b.Index, h100b.PCIBusID = 1, "0000:65:00.0"
	versions := "nvidia.com/cuda.driver-version.full=550.144.03\nnvidia.com/cuda.driver-version.major=550\nnvidia.com/cuda.driver-version.minor=144\n" +
		"nvidia.com/cuda.driver-version.revision=03\nnvidia.com/cuda.driver.major=550\nnvidia.com/cuda.driver.minor=144\nnvidia.com/cuda.driver.rev=03\n" +
		"nvidia.com/cuda.runtime-version.full=12.4\nnvidia.com/cuda.runtime-version.major=12\nnvidia.com/cuda.runtime-version.minor=4\n" +
		"nvidia.com/cuda.runtime.major=12\nnvidia.com/cuda.runtime.minor=4\n"
	tests := []struct {
		name    string
		r       Report
		want    string
		omitted []string // "name=value" of each omitted label
	}{
		{
			name: "nvml machine",
			r:    Report{State: StateWorking, DriverVersion: "550.144.03", CUDADriverVersion: "12.4", MaxCUDA: "12.4", GPUs: []GPU{h100b, h100}},
			want: versions + "nvidia.com/gpu.compute.major=9\nnvidia.com/gpu.compute.minor=0\nnvidia.com/gpu.count=2\nnvidia.com/gpu.family=hopper\n" +
				"nvidia.com/gpu.present=true\nnvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3\n" +
				"pathfinder.feature.node.kubernetes.io/driver.state=working\npathfinder.feature.node.kubernetes.io/gpu.NVIDIA-H100-80GB-HBM3.count=2\n",
		},
		{
			name: "two-component driver, table CUDA, no GPU",
			r:    Report{State: StateNoDevices, Setup: SetupContainerNoGPU, DriverVersion: "580.142", MaxCUDA: "13.0"},
			want: "nvidia.com/cuda.driver-version.full=580.142\nnvidia.com/cuda.driver-version.major=580\nnvidia.com/cuda.driver-version.minor=142\n" +
				"nvidia.com/cuda.driver-version.revision=\nnvidia.com/cuda.driver.major=580\nnvidia.com/cuda.driver.minor=142\nnvidia.com/cuda.driver.rev=\n" +
				"nvidia.com/cuda.runtime-version.full=13.0\nnvidia.com/cuda.runtime-version.major=13\nnvidia.com/cuda.runtime-version.minor=0\n" +
				"nvidia.com/cuda.runtime.major=13\nnvidia.com/cuda.runtime.minor=0\n" +
				"pathfinder.feature.node.kubernetes.io/driver.state=container-without-device-access\n",
		},
		{
			name: "a GPU without a name or capability",
			r:    Report{State: StateWorking, GPUs: []GPU{{Index: 0}}},
			want: "nvidia.com/gpu.count=1\nnvidia.com/gpu.present=true\npathfinder.feature.node.kubernetes.io/driver.state=working\n",
		},
		{
			// NVML leaves out a GPU bound to vfio-pci (index -1); where only the PCI scan saw the
			// GPUs, the one it finds bound to vfio-pci is left out the same.
			name: "GPUs bound to another driver are not counted",
			r: Report{State: StateNoUserSpace, Setup: SetupNative, GPUs: []GPU{
				{Index: 0, Name: "Tesla T4", PCIBusID: "0000:00:1e.0", KernelDriver: "nvidia", Sources: []string{methodProcfs, methodPCI}},
				{Index: 1, Name: "GA102 [GeForce RTX 3090]", PCIBusID: "0000:c1:00.0", KernelDriver: "vfio-pci", Sources: []string{methodPCI}},
				{Index: -1, Name: "NVIDIA A10", PCIBusID: "0000:d1:00.0", Sources: []string{methodNVML}},
			}},
			want: "nvidia.com/gpu.count=1\nnvidia.com/gpu.present=true\nnvidia.com/gpu.product=Tesla-T4\n" +
				"pathfinder.feature.node.kubernetes.io/driver.state=user-space-driver-missing\npathfinder.feature.node.kubernetes.io/gpu.Tesla-T4.count=1\n",
		},
		{
			// GFD names a product by NVML; the PCI-id table's pci.ids name is another string, so no
			// product label rather than one no selector written for GFD matches.
			name: "a name only from the PCI-id table",
			r: Report{State: StateNoDevices, Setup: SetupContainerNoGPU, GPUs: []GPU{{Index: 0, Name: "GH100 [H100 SXM5 80GB]", PCIBusID: "0000:18:00.0",
				DeviceID: "0x2330", KernelDriver: "nvidia", PCIClass: "0x030200", ComputeCapability: "9.0", ComputeCapabilitySource: pciTableSource, Sources: []string{methodPCI}}}},
			want: "nvidia.com/gpu.compute.major=9\nnvidia.com/gpu.compute.minor=0\nnvidia.com/gpu.count=1\nnvidia.com/gpu.family=hopper\nnvidia.com/gpu.mode=compute\n" +
				"nvidia.com/gpu.present=true\npathfinder.feature.node.kubernetes.io/driver.state=container-without-device-access\n",
			omitted: []string{"nvidia.com/gpu.product=GH100 [H100 SXM5 80GB]"},
		},
		{
			name: "values NFD would refuse are left out",
			r: Report{State: StateWorking, DMIProductName: "To Be Filled By O.E.M.", GPUs: []GPU{
				{Index: 0, Name: "NVIDIA " + strings.Repeat("Very Long Name ", 5), Sources: []string{methodNVML}}}},
			want: "nvidia.com/gpu.count=1\nnvidia.com/gpu.present=true\npathfinder.feature.node.kubernetes.io/driver.state=working\n",
			omitted: []string{
				"nvidia.com/gpu.product=NVIDIA-Very-Long-Name-Very-Long-Name-Very-Long-Name-Very-Long-Name-Very-Long-Name",
				"pathfinder.feature.node.kubernetes.io/gpu.NVIDIA-Very-Long-Name-Very-Long-Name-Very-Long-Name-Very-Long-Name-Very-Long-Name.count=1",
				"nvidia.com/gpu.machine=To-Be-Filled-By-O.E.M.",
			},
		},
		{name: "nothing", r: Report{}, want: ""},
		{name: "no kernel module, a GPU on the bus", r: Report{State: StateNoDriver, Setup: SetupNoDriver, GPUs: []GPU{h100}}, want: ""},
		{name: "module not loaded", r: Report{State: StateNotLoaded, Setup: SetupNoDriver, UserSpaceVersion: "550.163.01", GPUs: []GPU{h100}}, want: ""},
		// A broken driver says only its state, so that no pod selecting on GFD's labels lands there.
		{name: "version mismatch", r: Report{State: StateMismatch, Setup: SetupNative, DriverVersion: "550.144.03", GPUs: []GPU{h100}},
			want: "pathfinder.feature.node.kubernetes.io/driver.state=version-mismatch\n"},
		{name: "driver not answering", r: Report{State: StateNotAnswering, Setup: SetupNative, DriverVersion: "550.144.03", GPUs: []GPU{h100}},
			want: "pathfinder.feature.node.kubernetes.io/driver.state=driver-not-answering\n"},
		{name: "wsl2 without a version", r: Report{State: StateWSL2, Setup: SetupWSL2}, want: "pathfinder.feature.node.kubernetes.io/driver.state=wsl2\n"},
		{name: "pinned", r: Report{State: StatePinned, DriverVersion: "580.65.06"}, want: "nvidia.com/cuda.driver-version.full=580.65.06\nnvidia.com/cuda.driver-version.major=580\nnvidia.com/cuda.driver-version.minor=65\nnvidia.com/cuda.driver-version.revision=06\nnvidia.com/cuda.driver.major=580\nnvidia.com/cuda.driver.minor=65\nnvidia.com/cuda.driver.rev=06\n" +
			"pathfinder.feature.node.kubernetes.io/driver.state=pinned\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.r.NodeLabels()
			if got := labelLines(l); got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
			var omitted []string
			for _, o := range l.Omitted {
				omitted = append(omitted, o.Name+"="+o.Value)
				if o.Reason == "" {
					t.Errorf("%s omitted without a reason", o.Name)
				}
			}
			if !slices.Equal(omitted, tc.omitted) {
				t.Fatalf("omitted %q, want %q", l.Omitted, tc.omitted)
			}
		})
	}
}

// TestReport_NodeLabels_severalModels: GFD's labels describe the first model by PCI bus id, whatever
// order the GPUs come in, and each model has its count.
func TestReport_NodeLabels_severalModels(t *testing.T) {
	gpu := func(index int, bus, name, class string) GPU {
		return GPU{Index: index, Name: name, PCIBusID: bus, PCIClass: class, KernelDriver: "nvidia", ComputeCapability: map[string]string{"NVIDIA L40": "8.9", "NVIDIA RTX A6000": "8.6"}[name], Sources: []string{methodProcfs, methodPCI}}
	}
	gpus := []GPU{gpu(0, "0000:65:00.0", "NVIDIA L40", "0x030200"), gpu(1, "0000:17:00.0", "NVIDIA RTX A6000", "0x030000"), gpu(2, "0000:ca:00.0", "NVIDIA L40", "0x030200")}
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}} {
		var r Report
		r.State, r.Setup = StateNoDevices, SetupContainerNoGPU
		for _, i := range order {
			r.GPUs = append(r.GPUs, gpus[i])
		}
		l := r.NodeLabels()
		want := "nvidia.com/gpu.compute.major=8\nnvidia.com/gpu.compute.minor=6\nnvidia.com/gpu.count=1\nnvidia.com/gpu.family=ampere\nnvidia.com/gpu.mode=unknown\n" +
			"nvidia.com/gpu.present=true\nnvidia.com/gpu.product=NVIDIA-RTX-A6000\npathfinder.feature.node.kubernetes.io/driver.state=container-without-device-access\n" +
			"pathfinder.feature.node.kubernetes.io/gpu.NVIDIA-L40.count=2\npathfinder.feature.node.kubernetes.io/gpu.NVIDIA-RTX-A6000.count=1\n"
		if got := labelLines(l); got != want {
			t.Fatalf("order %v: got\n%s\nwant\n%s", order, got, want)
		}
		if len(l.Omitted) != 1 || l.Omitted[0].Value != "NVIDIA-L40" || !strings.Contains(l.Omitted[0].Reason, "the first by PCI bus id (NVIDIA-RTX-A6000, from 0000:17:00.0)") {
			t.Fatalf("omitted %q", l.Omitted)
		}
	}
}

// Test_sanitise holds sanitise to GFD's (k8s-device-plugin v0.20.0, internal/lm/resource.go):
// drop what is outside [A-Za-z0-9-_. ], spaces become one dash; nothing is cut or trimmed.
func Test_sanitise(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{name: "spaces", in: "NVIDIA H100 80GB HBM3", want: "NVIDIA-H100-80GB-HBM3"},
		{name: "other characters dropped", in: "NVIDIA GeForce RTX 4090 (Laptop) / Max-Q", want: "NVIDIA-GeForce-RTX-4090-Laptop-Max-Q"},
		{name: "pci.ids name", in: "GH100 [H100 SXM5 80GB]", want: "GH100-H100-SXM5-80GB"},
		{name: "runs of spaces", in: "  Tesla   T4 ", want: "Tesla-T4"},
		{name: "a trailing dash stays", in: "Tesla T4 -", want: "Tesla-T4--"},
		{name: "not ascii", in: "Gráfica™ 5090", want: "Grfica-5090"},
		{name: "empty", in: "", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sanitise(tc.in); got != tc.want {
				t.Fatalf("sanitise(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// Test_archFamily is GFD's table (k8s-device-plugin v0.20.0, internal/lm/resource.go, getArchFamily).
func Test_archFamily(t *testing.T) {
	for cc, want := range map[string]string{
		"1.3": "tesla", "2.1": "fermi", "3.7": "kepler", "5.2": "maxwell", "6.1": "pascal", "7.0": "volta", "7.2": "volta",
		"7.5": "turing", "8.0": "ampere", "8.6": "ampere", "8.7": "ampere", "8.9": "ada-lovelace", "9.0": "hopper",
		"10.0": "blackwell", "10.3": "blackwell", "12.0": "blackwell", "12.1": "blackwell", "13.0": "rubin", "11.0": "undefined", "4.0": "undefined",
	} {
		major, minor, ok := computeCapability(cc)
		if got := archFamily(major, minor); !ok || got != want {
			t.Errorf("archFamily(%s) = %s, want %s", cc, got, want)
		}
	}
	if _, _, ok := computeCapability("0.0"); ok {
		t.Error("a capability of major 0 gives GFD no architecture labels")
	}
}

// Test_labelProblem holds the rules nfd-master checks every label against (k8s.io/apimachinery
// v0.37.2, pkg/api/validate/content/kube.go, IsLabelKey and IsLabelValue, through
// node-feature-discovery v0.19.0's validate.Label).
func Test_labelProblem(t *testing.T) {
	tests := []struct {
		name, label, value string
		ok                 bool
	}{
		{name: "gfd's", label: "nvidia.com/gpu.product", value: "NVIDIA-H100-80GB-HBM3", ok: true},
		{name: "empty value", label: "nvidia.com/cuda.driver.rev", value: "", ok: true},
		{name: "63 characters", label: "nvidia.com/" + strings.Repeat("n", 63), value: strings.Repeat("v", 63), ok: true},
		{name: "a value of 64", label: "nvidia.com/gpu.product", value: strings.Repeat("v", 64)},
		{name: "a name of 64", label: "nvidia.com/" + strings.Repeat("n", 64), value: "x"},
		{name: "a value ending in a dot", label: "nvidia.com/gpu.machine", value: "O.E.M."},
		{name: "a value starting with a dash", label: "nvidia.com/gpu.machine", value: "-x"},
		{name: "a space", label: "nvidia.com/gpu.machine", value: "a b"},
		{name: "NFD's @ for a feature reference", label: "nvidia.com/gpu.machine", value: "@x.y.z"},
		{name: "no prefix", label: "gpu.count", value: "1"},
		{name: "an upper-case prefix", label: "NVIDIA.com/gpu.count", value: "1"},
		{name: "two slashes", label: "nvidia.com/gpu/count", value: "1"},
		{name: "an empty name", label: "nvidia.com/", value: "1"},
		{name: "a prefix of 254", label: strings.Repeat("a", 254) + "/x", value: "1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if why := labelProblem(tc.label, tc.value); (why == "") != tc.ok {
				t.Fatalf("labelProblem(%q, %q) = %q, want ok %v", tc.label, tc.value, why, tc.ok)
			}
		})
	}
}

// FuzzReport_NodeLabels: whatever a GPU's name, the machine's DMI name or the driver's version
// holds, every label written is one NFD takes, and the feature file reads back as the labels: no
// value can end a line or add one.
func FuzzReport_NodeLabels(f *testing.F) {
	f.Add("NVIDIA H100 80GB HBM3", "PowerEdge XE9680", "550.144.03")
	f.Add("Tesla T4 -\nnvidia.com/gpu.count=9", "To Be Filled By O.E.M.", "580.142")
	f.Fuzz(func(t *testing.T, name, dmi, version string) {
		r := Report{State: StateNoDevices, Setup: SetupContainerNoGPU, DriverVersion: version, DMIProductName: dmi,
			GPUs: []GPU{{Index: 0, Name: name, ComputeCapability: "9.0", Sources: []string{methodProcfs}}}}
		l := r.NodeLabels()
		data, err := l.FeatureFile(time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		back := map[string]string{}
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			k, v, _ := strings.Cut(line, "=")
			back[k] = v
		}
		if !maps.Equal(back, l.Labels) {
			t.Fatalf("the file reads back as %v, not %v", back, l.Labels)
		}
		for k, v := range l.Labels {
			if why := labelProblem(k, v); why != "" {
				t.Fatalf("%s=%q written: %s", k, v, why)
			}
		}
	})
}
