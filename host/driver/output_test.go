package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenMachines are fake roots whose JSON reports are pinned in testdata/golden.
func goldenMachines(t *testing.T) map[string]string {
	dgx := dgxLike()
	dgx["/dev/nvidiactl"] = ""
	dgx["/sys/module/nvidia/version"] = sample(t, "sys_module_nvidia_version/550.144.03.txt")
	dgx["/proc/driver/nvidia/version"] = sample(t, "proc_driver_nvidia_version/open_x86_64_550.144.03.txt")
	dgx["/proc/driver/nvidia/gpus/0000:18:00.0/information"] = gpuInformation("NVIDIA H100 80GB HBM3", "GPU-aaaaaaaa-0000-0000-0000-000000000000", "0000:18:00.0")
	return map[string]string{
		"native_open_550": fakeRoot(t, dgx),
		"container_580.142": fakeRoot(t, map[string]string{
			"/sys/module/nvidia/version":  sample(t, "sys_module_nvidia_version/580.142_two_component_expected.txt"),
			"/proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.142  Release Build  (dvs-builder@U22-I3-B05-1-1)  Thu Jul 30 00:00:00 UTC 2026\n",
		}),
		"jetson_l4t": fakeRoot(t, map[string]string{
			"/proc/driver/nvidia/version": sample(t, "proc_driver_nvidia_version/tegra_jetson_l4t_34.1.1_line1only.txt"),
			"/etc/nv_tegra_release":       "# R34 (release), REVISION: 1.1, GCID: 30414990, BOARD: t186ref, EABI: aarch64, DATE: Tue May 17 04:20:55 UTC 2022\n",
		}),
		"no_driver": fakeRoot(t, nil),
	}
}

func TestWriteJSON_golden(t *testing.T) {
	for name, root := range goldenMachines(t) {
		t.Run(name, func(t *testing.T) {
			r := probe(t, root, fileMethods, nil)
			var b bytes.Buffer
			if err := stable(r, root).WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Fatalf("JSON differs from %s (run with -update after checking):\n%s", path, b.String())
			}
			// snake_case names, and the report reads back.
			var back Report
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Setup != r.Setup || len(back.GPUs) != len(r.GPUs) {
				t.Fatalf("round trip: %v %+v", err, back)
			}
			for _, key := range []string{`"setup"`, `"gpus"`, `"methods"`, `"duration_ns"`} {
				if !bytes.Contains(b.Bytes(), []byte(key)) {
					t.Errorf("JSON lacks %s", key)
				}
			}
		})
	}
}

// stable zeroes what changes from run to run: durations and the temporary root in details.
func stable(r *Report, root string) *Report {
	r.Duration = 0
	for i := range r.Methods {
		r.Methods[i].Duration = 0
		r.Methods[i].Detail = strings.ReplaceAll(r.Methods[i].Detail, root, "$ROOT")
	}
	return r
}

func TestWriteText(t *testing.T) {
	r := probe(t, goldenMachines(t)["native_open_550"], fileMethods, nil)
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	// Column widths depend on the data; compare with runs of spaces squeezed.
	squeeze := func(s string) string { return regexp.MustCompile(` +`).ReplaceAllString(s, " ") }
	out := squeeze(b.String())
	for _, want := range []string{
		"setup native\n",
		"driver 550.144.03 (sysfs; open kernel module)\n",
		"max cuda toolkit 12.4 (CUDA 12.4 Update 1)\n",
		"gpus 3\n",
		" 0 NVIDIA H100 80GB HBM3 0000:18:00.0 0x2330 cc 9.0 (pci-id-table (inferred)) GPU-aaaaaaaa-0000-0000-0000-000000000000\n",
		" 1 GH100 [H100 SXM5 80GB] 0000:65:00.0 0x2330 cc 9.0 (pci-id-table (inferred))\n",
		" 2 GA102 [GeForce RTX 3090] 0000:c1:00.0 0x2204 cc 8.6 (pci-id-table (inferred)) bound to vfio-pci\n",
		"methods\n setup ok ",
		" ioctl failed ",
		"inappropriate ioctl for device",
		"\ntook ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	var none bytes.Buffer
	if err := probe(t, fakeRoot(t, nil), fileMethods, nil).WriteText(&none); err != nil || !strings.Contains(squeeze(none.String()), "driver not found\n") ||
		!strings.HasPrefix(none.String(), "no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1\nhint: install NVIDIA's driver") {
		t.Errorf("no-driver text:\n%s", none.String())
	}
}

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

func TestReport_Err(t *testing.T) {
	if err := (&Report{}).Err(); err != ErrNoDriver || err.Error() != "no working nvidia driver" {
		t.Fatalf("Err() = %v", err)
	}
	for _, r := range []Report{{State: StateWorking}, {State: StatePinned}, {State: StateWSL2, DriverVersion: "572.60"}, {State: StateTegra, L4TRelease: "36.4.3"}} {
		if err := r.Err(); err != nil || !r.Working() {
			t.Errorf("%+v: Err() = %v", r, err)
		}
	}
	for _, r := range []Report{{State: StateMismatch, DriverVersion: "550.144.03", Summary: "s"}, {State: StateNotLoaded, GPUs: []GPU{{}}}, {State: StateWSL2}, {State: StateTegra}} {
		if err := r.Err(); !errors.Is(err, ErrNoDriver) || r.Working() {
			t.Errorf("%+v: Err() = %v", r, err)
		}
	}
	r := Report{State: StateNoDriver, Summary: "no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1"}
	if err := r.Err(); err.Error() != "no working nvidia driver: no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1" {
		t.Errorf("Err() = %v", err)
	}
}

// ExampleProbe shows the intended use: probe, check, print.
func ExampleProbe() {
	r := Probe(context.Background(), Options{Root: "testdata/does-not-exist"})
	if err := r.Err(); err != nil {
		_, _ = os.Stdout.WriteString(err.Error() + "\n")
	}
	// Output: no working nvidia driver: no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1
}
