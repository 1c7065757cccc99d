package driver

import (
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

func TestProbe_pci(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		outcome Outcome
		want    []string // "bus device kernel-driver cc source"
	}{
		{
			name: "dgx-like", files: dgxLike(), outcome: OutcomeOK,
			want: []string{
				"0000:18:00.0 0x2330 nvidia 9.0 " + pciTableSource,
				"0000:65:00.0 0x2330 nvidia 9.0 " + pciTableSource,
				"0000:c1:00.0 0x2204 vfio-pci 8.6 " + pciTableSource,
			},
		},
		{
			name: "unknown device id, unbound", files: func() map[string]string {
				f := map[string]string{}
				pciDevice(f, "0000:01:00.0", 0x10de, 0x030000, 0xfffe, "")
				return f
			}(), outcome: OutcomeOK, want: []string{"0000:01:00.0 0xfffe   "},
		},
		{name: "no nvidia", files: func() map[string]string {
			f := map[string]string{}
			pciDevice(f, "0000:00:02.0", 0x8086, 0x030000, 0x9a49, "i915")
			return f
		}(), outcome: OutcomeOK},
		{name: "garbage attributes are skipped", files: map[string]string{
			"/sys/bus/pci/devices/0000:01:00.0/vendor": "nvidia\n",
			"/sys/bus/pci/devices/0000:02:00.0/vendor": "0x10de\n",
			"/sys/bus/pci/devices/0000:02:00.0/class":  "0x030000\n",
		}, outcome: OutcomeOK},
		{name: "no sysfs", files: map[string]string{}, outcome: OutcomeUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := probe(t, filetree.New(t, tc.files), []string{methodPCI}, nil)
			wantOutcome(t, r, methodPCI, tc.outcome)
			var got []string
			for i, g := range r.GPUs {
				if g.Index != i || !slices.Equal(g.Sources, []string{methodPCI}) {
					t.Errorf("GPU %d: index %d sources %v", i, g.Index, g.Sources)
				}
				got = append(got, strings.Join([]string{g.PCIBusID, g.DeviceID, g.KernelDriver, g.ComputeCapability, g.ComputeCapabilitySource}, " "))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func Test_canonicalBusID(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{name: "sysfs", in: "0000:65:00.0", want: "0000:65:00.0"},
		{name: "nvml upper case 8-digit domain", in: "00000000:3B:00.0", want: "0000:3b:00.0"},
		{name: "large domain", in: "00010000:01:00.0", want: "10000:01:00.0"},
		{name: "no domain", in: "65:00.0", want: "0000:65:00.0"},
		{name: "no function", in: "0000:65:00", want: "0000:65:00.0"},
		{name: "spaces", in: " 0000:65:00.0\n", want: "0000:65:00.0"},
		{name: "device out of range", in: "0000:65:20.0", want: ""},
		{name: "function out of range", in: "0000:65:00.8", want: ""},
		{name: "bus too big", in: "0000:100:00.0", want: ""},
		{name: "not hex", in: "0000:zz:00.0", want: ""},
		{name: "n/a", in: "[N/A]", want: ""},
		{name: "empty", in: "", want: ""},
		{name: "too many parts", in: "0:0:0:0.0", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := canonicalBusID(tc.in); got != tc.want {
				t.Fatalf("canonicalBusID(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func Test_parseProcGPUInformation(t *testing.T) {
	tests := []struct {
		name string
		data string
		want gpuObs
		err  bool
	}{
		{name: "h100", data: gpuInformation("NVIDIA H100 80GB HBM3", "GPU-9e1f2a3b-0000-1111-2222-333344445555", "0000:65:00.0"),
			want: gpuObs{index: -1, name: "NVIDIA H100 80GB HBM3", uuid: "GPU-9e1f2a3b-0000-1111-2222-333344445555", busID: "0000:65:00.0"}},
		{name: "masked uuid", data: gpuInformation("Tesla T4", "GPU-????????-????-????-????-????????????", "0000:00:1e.0"),
			want: gpuObs{index: -1, name: "Tesla T4", busID: "0000:00:1e.0"}},
		{name: "no bus location", data: "Model: \t\t Tesla T4\n", err: true},
		{name: "empty", data: "", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcGPUInformation([]byte(tc.data))
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v (error %v)", got, err, tc.want, tc.err)
			}
		})
	}
}

func FuzzParseProcGPUInformation(f *testing.F) {
	f.Add([]byte(gpuInformation("NVIDIA H100 80GB HBM3", "GPU-1", "0000:65:00.0")))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := parseProcGPUInformation(data)
		if err == nil && canonicalBusID(g.busID) != g.busID {
			t.Fatalf("bus id %q is not canonical", g.busID)
		}
	})
}

func FuzzCanonicalBusID(f *testing.F) {
	for _, s := range []string{"0000:65:00.0", "00000000:3B:00.0", "65:00.0", "[N/A]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := canonicalBusID(s)
		if c != "" && canonicalBusID(c) != c {
			t.Fatalf("%q -> %q is not a fixed point", s, c)
		}
	})
}
