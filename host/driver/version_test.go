package driver

import (
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/builtin/tables"
)

func Test_parseProcVersion_samples(t *testing.T) {
	want := map[string]procVersion{
		"closed_x86_64_177.80_2008.txt":         {Version: "177.80", Module: "proprietary", Arch: "x86_64"},
		"closed_x86_64_375.74.txt":              {Version: "375.74", Module: "proprietary", Arch: "x86_64"},
		"closed_x86_64_440.95.01.txt":           {Version: "440.95.01", Module: "proprietary", Arch: "x86_64"},
		"closed_x86_64_515.76.txt":              {Version: "515.76", Module: "proprietary", Arch: "x86_64"},
		"open_aarch64_580.173.02_gb300.txt":     {Version: "580.173.02", Module: "open", Arch: "aarch64"},
		"open_x86_64_550.144.03.txt":            {Version: "550.144.03", Module: "open", Arch: "x86_64"},
		"open_x86_64_570.195.03.txt":            {Version: "570.195.03", Module: "open", Arch: "x86_64"},
		"tegra_jetson_l4t_34.1.1_line1only.txt": {Version: "34.1.1", Module: "proprietary", Arch: "aarch64", L4T: true},
	}
	for _, name := range samples(t, "proc_driver_nvidia_version") {
		t.Run(name, func(t *testing.T) {
			w, listed := want[name]
			if !listed {
				t.Fatalf("sample %s has no expectation", name)
			}
			got, err := parseProcVersion([]byte(sample(t, "proc_driver_nvidia_version/"+name)))
			if err != nil {
				t.Fatal(err)
			}
			if got != w {
				t.Fatalf("got %+v, want %+v", got, w)
			}
		})
	}
}

func Test_parseProcVersion_Errors(t *testing.T) {
	tests := []struct {
		name, data, wants string
	}{
		{name: "empty", data: "", wants: `no "NVRM version:" line`},
		{name: "gcc line only", data: "GCC version:  gcc version 12.3.0\n", wants: `no "NVRM version:" line`},
		{name: "not nvidia", data: "NVRM version: something else\n", wants: "unrecognized NVRM line"},
		{name: "no version", data: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  Release Build\n", wants: "no driver version"},
		{name: "nothing after module", data: "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64\n", wants: "no driver version"},
		{name: "garbage version", data: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  5a0.1  Mon\n", wants: "no driver version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseProcVersion([]byte(tc.data))
			if err == nil || strings.HasPrefix(err.Error(), "pathfinder: ") || !strings.Contains(err.Error(), tc.wants) {
				t.Fatalf("error %v, want one containing %q", err, tc.wants)
			}
		})
	}
}

func Test_parseSysVersion(t *testing.T) {
	want := map[string]string{
		"550.144.03.txt":                     "550.144.03",
		"550.54.14.txt":                      "550.54.14",
		"580.142_two_component_expected.txt": "580.142",
	}
	for _, name := range samples(t, "sys_module_nvidia_version") {
		t.Run(name, func(t *testing.T) {
			w, listed := want[name]
			if !listed {
				t.Fatalf("sample %s has no expectation", name)
			}
			got, err := parseSysVersion([]byte(sample(t, "sys_module_nvidia_version/"+name)))
			if err != nil || got != w {
				t.Fatalf("got %q, %v; want %q", got, err, w)
			}
		})
	}
	for _, bad := range []string{"", "\n", "550", "550.54.14 extra", "550.54.14\n550.54.14\n", "v550.54.14", "550..14", strings.Repeat("9", 100)} {
		if v, err := parseSysVersion([]byte(bad)); err == nil {
			t.Errorf("%q parsed as %q", bad, v)
		}
	}
}

func Test_compareVersions(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want int
	}{
		{name: "equal", a: "550.54.14", b: "550.54.14", want: 0},
		{name: "minor is numeric", a: "570.124.06", b: "570.26", want: 1},
		{name: "missing revision is zero", a: "570.26", b: "570.26.00", want: 0},
		{name: "leading zero", a: "535.104.05", b: "535.104.5", want: 0},
		{name: "major", a: "525.60.13", b: "580.65.06", want: -1},
		{name: "two components", a: "580.142", b: "580.95.05", want: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tables.CompareVersions(tc.a, tc.b); got != tc.want {
				t.Fatalf("tables.CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func Test_parseTegraRelease(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{name: "jetpack 5", data: "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, DATE: Tue Aug  1 19:57:35 UTC 2023\n", want: "35.4.1"},
		{name: "jetpack 4", data: "# R32 (release), REVISION: 7.1, GCID: 29818004, BOARD: t210ref, EABI: aarch64, DATE: Sat Feb 19 17:05:08 UTC 2022\n", want: "32.7.1"},
		{name: "garbage", data: "hello\n", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTegraRelease([]byte(tc.data))
			if got != tc.want || (err == nil) != (tc.want != "") {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func Test_cudaVersionString(t *testing.T) {
	for v, want := range map[int]string{12040: "12.4", 13000: "13.0", 11080: "11.8", 9020: "9.2", 0: "", -1: ""} {
		if got := cudaVersionString(v); got != want {
			t.Errorf("cudaVersionString(%d) = %q, want %q", v, got, want)
		}
	}
}

func FuzzParseProcVersion(f *testing.F) {
	for _, name := range samples(f, "proc_driver_nvidia_version") {
		f.Add([]byte(sample(f, "proc_driver_nvidia_version/"+name)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pv, err := parseProcVersion(data)
		if err != nil {
			return
		}
		if !validDriverVersion(pv.Version) || (pv.Module != "open" && pv.Module != "proprietary") {
			t.Fatalf("accepted %+v", pv)
		}
		if pv.L4T && pv.Arch != "aarch64" {
			t.Fatalf("L4T on %q", pv.Arch)
		}
	})
}

func FuzzParseSysVersion(f *testing.F) {
	for _, name := range samples(f, "sys_module_nvidia_version") {
		f.Add([]byte(sample(f, "sys_module_nvidia_version/"+name)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseSysVersion(data)
		if err == nil && !validDriverVersion(v) {
			t.Fatalf("accepted %q", v)
		}
	})
}
