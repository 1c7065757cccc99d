package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// goldenMachines are fake roots whose JSON reports are pinned in testdata/golden.
func goldenMachines(t *testing.T) map[string]string {
	dgx := dgxLike()
	dgx["/dev/nvidiactl"] = ""
	dgx["/sys/module/nvidia/version"] = sample(t, "sys_module_nvidia_version/550.144.03.txt")
	dgx["/proc/driver/nvidia/version"] = sample(t, "proc_driver_nvidia_version/open_x86_64_550.144.03.txt")
	dgx["/proc/driver/nvidia/gpus/0000:18:00.0/information"] = gpuInformation("NVIDIA H100 80GB HBM3", "GPU-aaaaaaaa-0000-0000-0000-000000000000", "0000:18:00.0")
	return map[string]string{
		"native_open_550": filetree.New(t, dgx),
		"container_580.142": filetree.New(t, map[string]string{
			"/sys/module/nvidia/version":  sample(t, "sys_module_nvidia_version/580.142_two_component_expected.txt"),
			"/proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.142  Release Build  (dvs-builder@U22-I3-B05-1-1)  Thu Jul 30 00:00:00 UTC 2026\n",
		}),
		"jetson_l4t": filetree.New(t, map[string]string{
			"/proc/driver/nvidia/version": sample(t, "proc_driver_nvidia_version/tegra_jetson_l4t_34.1.1_line1only.txt"),
			"/etc/nv_tegra_release":       "# R34 (release), REVISION: 1.1, GCID: 30414990, BOARD: t186ref, EABI: aarch64, DATE: Tue May 17 04:20:55 UTC 2022\n",
		}),
		"no_driver": filetree.New(t, nil),
	}
}

// TestReport_json_golden pins the Report's JSON form, encoded as pathfinder driver --json encodes it.
func TestReport_json_golden(t *testing.T) {
	for name, root := range goldenMachines(t) {
		t.Run(name, func(t *testing.T) {
			r := probe(t, root, fileMethods, nil)
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetIndent("", "  ")
			if err := enc.Encode(stable(r, root)); err != nil {
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
