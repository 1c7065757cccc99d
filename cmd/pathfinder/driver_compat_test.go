package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// runDriver runs bin's driver command in a fresh process, with the pins given (unset when "") and
// args after it.
func (e *testEnv) runDriver(t *testing.T, bin, driverPin, ccPin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	pins := []string{"PATHFINDER_DRIVER_VERSION=" + driverPin, "PATHFINDER_COMPUTE_CAPABILITY=" + ccPin}
	return e.runBin(t, bin, pins, append([]string{"driver"}, args...)...)
}

// TestDriver_runs: `driver --json` carries runs for each CUDA major, for drivers pinned and found
// in a captured /sys and /proc (the Windows numbers on WSL2), and the text says the same in its
// runs lines; testdata/driver/runs.json holds every answer.
func TestDriver_runs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := noCgoBinary(t)
	e := isolate(t)
	tests := []struct {
		name, pin string
		files     map[string]string
	}{
		{name: "450.80.02", pin: "450.80.02"},
		{name: "525.60.13", pin: "525.60.13"},
		{name: "535.54.03", pin: "535.54.03"},
		{name: "550.54.14", pin: "550.54.14"},
		{name: "580.65.06", pin: "580.65.06"},
		{name: "550.54.14 in /sys and /proc", files: kernelModule("550.54.14", true)},
		{name: "527.41 on wsl2", pin: "527.41", files: map[string]string{"/dev/dxg": ""}},
		{name: "no driver"},
	}
	type answer struct {
		Machine string               `json:"machine"`
		Runs    []driver.CUDASupport `json:"runs"`
	}
	var all []answer
	for _, tc := range tests {
		root := machine(t, "", tc.files)
		out, errOut, _ := e.runDriver(t, bin, tc.pin, "", "--json", "--root", root)
		var r driver.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil || errOut != "" {
			t.Fatalf("%s: %v, stderr %q\n%s", tc.name, err, errOut, out)
		}
		all = append(all, answer{tc.name, r.Runs})
		text, _, _ := e.runDriver(t, bin, tc.pin, "", "--root", root)
		_, runs, _ := strings.Cut(text, "\nruns ")
		runs, _, _ = strings.Cut(runs, "\ngpus ")
		var lines []string
		for _, l := range strings.Split(runs, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		var want []string
		for _, s := range r.Runs {
			want = append(want, "CUDA "+s.CUDA+": "+s.String())
		}
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the text's runs lines are\n%s\nwant\n%s\nin\n%s", tc.name, strings.Join(lines, "\n"), strings.Join(want, "\n"), text)
		}
	}
	b, _ := json.MarshalIndent(all, "", "  ")
	golden(t, "driver/runs.json", string(b)+"\n")
}

// TestDriver_variant: `driver --format variant` in the static build prints the nvidia provider's
// configs for the pins, and for a captured machine's driver and GPU (its compute capability from
// the PCI-id table); [] and exit 1 with no driver; a bad compute-capability pin is exit 2.
func TestDriver_variant(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := staticBinary(t)
	e := isolate(t)
	empty := t.TempDir()

	out, errOut, code := e.runDriver(t, bin, "550.54.14", "9.0", "--format", "variant", "--root", empty)
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden(t, "driver/variant-550.54.14-9.0.json", out)

	h100 := kernelModule("550.54.14", true)
	for k, v := range map[string]string{"vendor": "0x10de\n", "class": "0x030200\n", "device": "0x2330\n"} {
		h100["/sys/bus/pci/devices/0000:18:00.0/"+k] = v
	}
	root := machine(t, "", h100)
	for _, lib := range []string{"libcuda.so", "libnvidia-ml.so"} { // the user-space driver, its version in the name the link leads to
		dir := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
		gccLib(t, filepath.Join(dir, lib+".550.54.14"), lib+".1")
		filetree.Symlink(t, lib+".550.54.14", filepath.Join(dir, lib+".1"))
	}
	captured, errOut, code := e.runDriver(t, bin, "", "", "--format", "variant", "--root", root)
	if code != exitOK || errOut != "" || captured != out {
		text, _, _ := e.runDriver(t, bin, "", "", "--root", root)
		t.Fatalf("the captured machine: exit %d, stderr %q, the configs differ from the pins':\n%s\n%s", code, errOut, captured, text)
	}

	tests := []struct {
		name, driverPin, ccPin string
		code                   int
		stdout, stderr         string
	}{
		{name: "no driver", ccPin: "9.0", code: exitNotFound, stdout: "[]\n",
			stderr: "pathfinder: no working NVIDIA driver (no-driver: no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1): no configs\n"},
		{name: "a compute capability that is none", driverPin: "550.54.14", ccPin: "9", code: exitUsage,
			stderr: `pathfinder: PATHFINDER_COMPUTE_CAPABILITY=9: "9" is not a compute capability like 9.0 (for several GPUs: 9.0,8.6)` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := e.runDriver(t, bin, tc.driverPin, tc.ccPin, "--format", "variant", "--root", empty)
			if code != tc.code || out != tc.stdout || errOut != tc.stderr {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out, errOut, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}
