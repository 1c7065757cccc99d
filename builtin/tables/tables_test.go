package tables

import (
	"bytes"
	"strings"
	"testing"
)

// dataLines counts the lines a parser must turn into rows: not blank, not a comment, not the header.
func dataLines(data []byte) int {
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			n++
		}
	}
	return n - 1
}

func TestCUDAReleases_everyRowParses(t *testing.T) {
	rs, err := CUDAReleases()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rs), dataLines(cudaTSV); got != want {
		t.Fatalf("parsed %d rows, file has %d", got, want)
	}
	// Newest first, and a newer toolkit never needs an older driver: both make the table easy to audit
	// against NVIDIA's, which is printed the same way.
	for i := 1; i < len(rs); i++ {
		if CompareVersions(rs[i-1].Toolkit, rs[i].Toolkit) < 0 {
			t.Errorf("row %d (%s) is newer than row %d (%s)", i+1, rs[i].Release, i, rs[i-1].Release)
		}
		if CompareVersions(rs[i-1].MinLinuxDriver, rs[i].MinLinuxDriver) < 0 {
			t.Errorf("%s needs %s, older %s needs more (%s)", rs[i-1].Release, rs[i-1].MinLinuxDriver, rs[i].Release, rs[i].MinLinuxDriver)
		}
	}
	// The brief's anchors, straight from NVIDIA's table.
	want := map[string]string{
		"CUDA 13.0 GA": "580.65.06", "CUDA 12.9 GA": "575.51.03", "CUDA 12.8 GA": "570.26",
		"CUDA 12.6 GA": "560.28.03", "CUDA 12.4 GA": "550.54.14", "CUDA 12.0 GA": "525.60.13",
		"CUDA 11.8 GA": "520.61.05", "CUDA 10.0.130": "410.48",
	}
	for _, r := range rs {
		if w, ok := want[r.Release]; ok {
			if r.MinLinuxDriver != w {
				t.Errorf("%s: linux driver %s, want %s", r.Release, r.MinLinuxDriver, w)
			}
			delete(want, r.Release)
		}
	}
	for rel := range want {
		t.Errorf("release %q missing", rel)
	}
}

func TestCUDAReleases_returnsCopy(t *testing.T) {
	a, _ := CUDAReleases()
	a[0].Toolkit = "99.9"
	b, _ := CUDAReleases()
	if b[0].Toolkit == "99.9" {
		t.Fatal("CUDAReleases shares its slice with callers")
	}
}

func TestLookupPCIDevice_everyRowParses(t *testing.T) {
	if _, _, err := LookupPCIDevice(0); err != nil {
		t.Fatal(err)
	}
	if got, want := len(pciDevices), dataLines(pciTSV); got != want {
		t.Fatalf("parsed %d rows, file has %d", got, want)
	}
	if !bytes.Contains(pciTSV, []byte("# DERIVED: pci.ids")) {
		t.Error("the research file's provenance header is gone")
	}
}

func TestLookupPCIDevice(t *testing.T) {
	tests := []struct {
		name   string
		id     uint16
		ok     bool
		cc     string
		chip   string
		hasTag string
	}{
		{name: "H100 SXM5", id: 0x2330, ok: true, cc: "9.0", chip: "GH100", hasTag: "H100"},
		{name: "RTX 3090", id: 0x2204, ok: true, cc: "8.6", chip: "GA102"},
		{name: "A100 SXM4", id: 0x20b0, ok: true, cc: "8.0", chip: "GA100"},
		{name: "RTX 5090", id: 0x2b85, ok: true, cc: "12.0", chip: "GB202"},
		{name: "chip known capability unknown", id: 0x3340, ok: true, cc: "", chip: "GB120"},
		{name: "not a GPU id", id: 0xffff, ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok, err := LookupPCIDevice(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.ok || d.ComputeCapability != tc.cc || d.Chip != tc.chip {
				t.Fatalf("got %+v ok=%v, want cc %q chip %q ok=%v", d, ok, tc.cc, tc.chip, tc.ok)
			}
			if tc.hasTag != "" && !strings.Contains(d.Name, tc.hasTag) {
				t.Errorf("name %q lacks %q", d.Name, tc.hasTag)
			}
		})
	}
}

func TestParse_Errors(t *testing.T) {
	cudaHeader := "toolkit\trelease\tlinux_min_driver\twindows_min_driver\n"
	pciHeader := "device_id\tpciids_chip_token\tchip\tcompute_capability\tconfidence\tpciids_name\n"
	tests := []struct {
		name  string
		pci   bool
		data  string
		wants string
	}{
		{name: "empty", data: "", wants: "no header"},
		{name: "comments only", data: "# hi\n\n", wants: "no header"},
		{name: "wrong header", data: "a\tb\n", wants: "header is"},
		{name: "no rows", data: cudaHeader, wants: "no rows"},
		{name: "short row", data: cudaHeader + "12.4\tCUDA 12.4 GA\t550.54.14\n", wants: ":2: 3 fields"},
		{name: "bad toolkit", data: cudaHeader + "12\tx\t550.54.14\tN/A\n", wants: "not major.minor"},
		{name: "empty release", data: cudaHeader + "12.4\t\t550.54.14\tN/A\n", wants: "empty release"},
		{name: "bad linux driver", data: cudaHeader + "12.4\tx\t550\tN/A\n", wants: "linux driver"},
		{name: "bad windows driver", data: cudaHeader + "12.4\tx\t550.54.14\tnone\n", wants: "windows driver"},
		{name: "pci upper-case id", pci: true, data: pciHeader + "2330\tGH100\tGH100\t9.0\thigh\tx\n" + "233A\tGH100\tGH100\t9.0\thigh\tx\n", wants: ":3: device id"},
		{name: "pci not hex", pci: true, data: pciHeader + "23zz\tGH100\tGH100\t9.0\thigh\tx\n", wants: "not hex"},
		{name: "pci no chip", pci: true, data: pciHeader + "2330\tGH100\t\t9.0\thigh\tx\n", wants: "no chip"},
		{name: "pci bad cc", pci: true, data: pciHeader + "2330\tGH100\tGH100\t9\thigh\tx\n", wants: "compute capability"},
		{name: "pci bad confidence", pci: true, data: pciHeader + "2330\tGH100\tGH100\t9.0\tsure\tx\n", wants: "confidence"},
		{name: "pci duplicate", pci: true, data: pciHeader + "2330\tGH100\tGH100\t9.0\thigh\tx\n2330\tGH100\tGH100\t9.0\thigh\tx\n", wants: "twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.pci {
				_, err = parsePCIDevices([]byte(tc.data))
			} else {
				_, err = parseCUDAReleases([]byte(tc.data))
			}
			if err == nil {
				t.Fatal("no error")
			}
			// The file and line lead, with no program prefix: the command adds "pathfinder: ".
			if strings.HasPrefix(err.Error(), "pathfinder: ") || !strings.Contains(err.Error(), tc.wants) {
				t.Fatalf("error %q, want it to contain %q, with no prefix", err, tc.wants)
			}
		})
	}
}

func FuzzParseCUDAReleases(f *testing.F) {
	f.Add(cudaTSV)
	f.Add([]byte("toolkit\trelease\tlinux_min_driver\twindows_min_driver\n13.0\tCUDA 13.0 GA\t580.65.06\tN/A\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := parseCUDAReleases(data)
		if err != nil {
			return
		}
		for _, r := range rs {
			if !isDotted(r.Toolkit, 2, 2) || !isDotted(r.MinLinuxDriver, 2, 3) || r.Release == "" {
				t.Fatalf("accepted a bad row %+v", r)
			}
		}
	})
}

func FuzzParsePCIDevices(f *testing.F) {
	f.Add(pciTSV)
	f.Add([]byte("device_id\tpciids_chip_token\tchip\tcompute_capability\tconfidence\tpciids_name\n2330\tGH100\tGH100\t9.0\thigh\tGH100 [H100 SXM5 80GB]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := parsePCIDevices(data)
		if err != nil {
			return
		}
		for id, d := range ds {
			if id != d.DeviceID || d.Chip == "" || (d.ComputeCapability != "" && !isDotted(d.ComputeCapability, 2, 2)) {
				t.Fatalf("accepted a bad row %+v", d)
			}
		}
	})
}
