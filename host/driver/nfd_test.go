package driver

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteNFD(t *testing.T) {
	h100 := GPU{Index: 0, Name: "NVIDIA H100 80GB HBM3", ComputeCapability: "9.0", ComputeCapabilitySource: methodNVML}
	tests := []struct {
		name string
		r    Report
		want string
	}{
		{
			name: "nvml machine",
			r:    Report{State: StateWorking, DriverVersion: "550.144.03", CUDADriverVersion: "12.4", MaxCUDA: "12.4", GPUs: []GPU{h100, h100}},
			want: `nvidia.com/cuda.driver-version.full=550.144.03
nvidia.com/cuda.driver-version.major=550
nvidia.com/cuda.driver-version.minor=144
nvidia.com/cuda.driver-version.revision=03
nvidia.com/cuda.driver.major=550
nvidia.com/cuda.driver.minor=144
nvidia.com/cuda.driver.rev=03
nvidia.com/cuda.runtime-version.full=12.4
nvidia.com/cuda.runtime-version.major=12
nvidia.com/cuda.runtime-version.minor=4
nvidia.com/cuda.runtime.major=12
nvidia.com/cuda.runtime.minor=4
nvidia.com/gpu.compute.major=9
nvidia.com/gpu.compute.minor=0
nvidia.com/gpu.count=2
nvidia.com/gpu.family=hopper
nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3
`,
		},
		{
			name: "two-component driver, table CUDA, no GPU",
			r:    Report{State: StateWorking, DriverVersion: "580.142", MaxCUDA: "13.0"},
			want: `nvidia.com/cuda.driver-version.full=580.142
nvidia.com/cuda.driver-version.major=580
nvidia.com/cuda.driver-version.minor=142
nvidia.com/cuda.driver-version.revision=
nvidia.com/cuda.driver.major=580
nvidia.com/cuda.driver.minor=142
nvidia.com/cuda.driver.rev=
nvidia.com/cuda.runtime-version.full=13.0
nvidia.com/cuda.runtime-version.major=13
nvidia.com/cuda.runtime-version.minor=0
nvidia.com/cuda.runtime.major=13
nvidia.com/cuda.runtime.minor=0
`,
		},
		{
			name: "gpu without name or capability",
			r:    Report{State: StateWorking, GPUs: []GPU{{Index: 0}}},
			want: "nvidia.com/gpu.count=1\n",
		},
		{
			name: "a GPU the driver does not list is not counted",
			r:    Report{State: StateWorking, GPUs: []GPU{{Index: 0, Name: "Tesla T4"}, {Index: -1, Name: "GA102 [GeForce RTX 3090]"}}},
			want: "nvidia.com/gpu.count=1\nnvidia.com/gpu.product=Tesla-T4\n",
		},
		{name: "nothing", r: Report{}, want: ""},
		// Labels come only from a working driver: a kernel module with other libraries is no driver
		// to schedule CUDA work on, whatever its version.
		{name: "version mismatch", r: Report{State: StateMismatch, DriverVersion: "550.144.03", GPUs: []GPU{h100}}, want: ""},
		{name: "module not loaded", r: Report{State: StateNotLoaded, UserSpaceVersion: "550.163.01", GPUs: []GPU{h100}}, want: ""},
		{name: "wsl2 without a version", r: Report{State: StateWSL2}, want: ""},
		{name: "pinned", r: Report{State: StatePinned, DriverVersion: "580.65.06"}, want: "nvidia.com/cuda.driver-version.full=580.65.06\nnvidia.com/cuda.driver-version.major=580\nnvidia.com/cuda.driver-version.minor=65\nnvidia.com/cuda.driver-version.revision=06\nnvidia.com/cuda.driver.major=580\nnvidia.com/cuda.driver.minor=65\nnvidia.com/cuda.driver.rev=06\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.r.WriteNFD(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

func TestWriteNFDFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, NFDFileName)
	if err := os.WriteFile(path, []byte("stale=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Report{State: StateWorking, DriverVersion: "550.54.14", GPUs: []GPU{{Index: 0, Name: "Tesla T4", ComputeCapability: "7.5"}}}
	if err := WriteNFDFile(dir, r); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	_ = r.WriteNFD(&want)
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("file %q, %v; want %q", got, err, want.String())
	}
	if !strings.Contains(string(got), "nvidia.com/gpu.family=turing\n") || !strings.Contains(string(got), "nvidia.com/gpu.product=Tesla-T4\n") {
		t.Fatalf("file %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	if err := WriteNFDFile(filepath.Join(dir, "missing"), r); err == nil || !strings.HasPrefix(err.Error(), "writing the feature file: ") {
		t.Fatalf("error %v", err)
	}
}

func Test_labelValue(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{name: "spaces", in: "NVIDIA H100 80GB HBM3", want: "NVIDIA-H100-80GB-HBM3"},
		{name: "gfd drops other characters", in: "NVIDIA GeForce RTX 4090 (Laptop) / Max-Q", want: "NVIDIA-GeForce-RTX-4090-Laptop-Max-Q"},
		{name: "pci.ids name", in: "GH100 [H100 SXM5 80GB]", want: "GH100-H100-SXM5-80GB"},
		{name: "long", in: strings.Repeat("A100 ", 20), want: strings.TrimSuffix(strings.Repeat("A100-", 13), "-")[:63]},
		{name: "ends in punctuation", in: "Tesla T4 -", want: "Tesla-T4"},
		{name: "empty", in: "", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := labelValue(tc.in); got != tc.want || len(got) > 63 {
				t.Fatalf("labelValue(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func Test_archFamily(t *testing.T) {
	for cc, want := range map[string]string{
		"1.3": "tesla", "2.1": "fermi", "3.7": "kepler", "5.2": "maxwell", "6.1": "pascal", "7.0": "volta", "7.2": "volta",
		"7.5": "turing", "8.0": "ampere", "8.6": "ampere", "8.7": "ampere", "8.9": "ada-lovelace", "9.0": "hopper",
		"10.0": "blackwell", "12.0": "blackwell", "11.0": "undefined", "4.0": "undefined",
	} {
		major, minor, _ := splitVersion(cc)
		if got := archFamily(major, minor); got != want {
			t.Errorf("archFamily(%s) = %s, want %s", cc, got, want)
		}
	}
}
