package driver

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain needs nothing for the libcuda probe's child: this package's initialisation serves it
// before TestMain runs, as it does before any program's main.
func TestMain(m *testing.M) {
	// A race-enabled child sleeps a second before exiting (GORACE atexit_sleep_ms) to catch late
	// reports; the children this binary starts have none to catch.
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	var err error
	if stubDir, err = os.MkdirTemp("", "pathfinder-driver-stubs-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(stubDir)
	os.Exit(code)
}

// stubDir holds the shared libraries the tests build with gcc, for the whole run.
var stubDir string

// fileMethods are the methods that only read files under Root: hermetic on any machine.
var fileMethods = []string{methodOverride, methodSetup, methodIoctl, methodSysfs, methodProcfs, methodUserSpace, methodPCI}

// sample reads a file from testdata.
func sample(t testing.TB, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// samples lists a testdata folder's files, so a test fails when a sample has no expectation.
func samples(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("testdata", dir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// env is a LookupEnv over a map: only what the test sets exists, so the host's environment (a real
// PATHFINDER_DRIVER_VERSION, CUDA_VISIBLE_DEVICES, PATH) never leaks into a result.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// liveFiles adds to files what a machine whose driver's own code may run has: the nvidia and
// nvidia_uvm modules loaded and their device nodes present (as plain files: nothing opens them but
// the ioctl method, which then fails as on any copy of /dev).
func liveFiles(files map[string]string) map[string]string {
	out := map[string]string{
		"/sys/module/nvidia/version": "550.54.14\n", "/sys/module/nvidia_uvm": "dir",
		"/dev/nvidiactl": "", "/dev/nvidia0": "", "/dev/nvidia-uvm": "", "/dev/nvidia-uvm-tools": "",
	}
	for k, v := range files {
		out[k] = v
	}
	return out
}

// probe runs Probe with hermetic defaults: only vars as environment, nothing on PATH.
func probe(t testing.TB, root string, methods []string, vars map[string]string) *Report {
	t.Helper()
	return Probe(context.Background(), Options{
		Root:      root,
		Methods:   methods,
		LookupEnv: env(vars),
		LookPath:  func(string) (string, error) { return "", os.ErrNotExist },
	})
}

// outcome returns the named method's outcome, failing the test when it did not run.
func outcome(t testing.TB, r *Report, name string) MethodOutcome {
	t.Helper()
	for _, m := range r.Methods {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("method %q not in report: %+v", name, r.Methods)
	return MethodOutcome{}
}

func wantOutcome(t testing.TB, r *Report, name string, want Outcome, detailHas ...string) {
	t.Helper()
	m := outcome(t, r, name)
	if m.Outcome != want {
		t.Errorf("%s: outcome %s (%s), want %s", name, m.Outcome, m.Detail, want)
	}
	for _, s := range detailHas {
		if !strings.Contains(m.Detail, s) {
			t.Errorf("%s: detail %q lacks %q", name, m.Detail, s)
		}
	}
}

func hasNote(r *Report, sub string) bool {
	for _, n := range r.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// pciDevice adds one /sys/bus/pci/devices entry to a machine's files (filetree.New); driver ""
// leaves it unbound.
func pciDevice(files map[string]string, busID string, vendor, class, device uint32, driver string) {
	d := "/sys/bus/pci/devices/" + busID
	files[d+"/vendor"] = fmt.Sprintf("0x%04x\n", vendor)
	files[d+"/class"] = fmt.Sprintf("0x%06x\n", class)
	files[d+"/device"] = fmt.Sprintf("0x%04x\n", device)
	if driver != "" {
		files[d+"/driver"] = "-> ../../../../bus/pci/drivers/" + driver
	}
}

// dgxLike is a PCI tree with two H100s (3D controllers), one RTX 3090 (VGA) bound to vfio-pci, the
// 3090's HDMI audio function and an Intel VGA: three GPUs.
func dgxLike() map[string]string {
	f := map[string]string{}
	pciDevice(f, "0000:65:00.0", 0x10de, 0x030200, 0x2330, "nvidia")
	pciDevice(f, "0000:18:00.0", 0x10de, 0x030200, 0x2330, "nvidia")
	pciDevice(f, "0000:c1:00.0", 0x10de, 0x030000, 0x2204, "vfio-pci")
	pciDevice(f, "0000:c1:00.1", 0x10de, 0x040300, 0x1aef, "snd_hda_intel")
	pciDevice(f, "0000:00:02.0", 0x8086, 0x030000, 0x9a49, "i915")
	return f
}

// gpuInformation is /proc/driver/nvidia/gpus/<bus>/information as nv-procfs.c prints it.
func gpuInformation(model, uuid, bus string) string {
	return "Model: \t\t " + model + "\nIRQ:   \t\t 160\nGPU UUID: \t " + uuid + "\nVideo BIOS: \t 96.00.74.00.01\nBus Type: \t PCIe\n" +
		"DMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t " + bus + "\nDevice Minor: \t 0\nGPU Excluded:\t No\n"
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// smiFake describes a fake nvidia-smi: what it prints and how it exits for the probe's query with
// compute_cap, for the query without it, and when run bare (the table header).
type smiFake struct {
	query      string
	queryExit  int
	noCC       string
	noCCExit   int
	header     string
	headerExit int
	hang       bool
}

// writeSMI writes the fake as a shell script at path; its outputs live in files next to it so that
// samples go in byte for byte.
func writeSMI(t testing.TB, path string, f smiFake) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	for ext, content := range map[string]string{".query": f.query, ".nocc": f.noCC, ".header": f.header} {
		if err := os.WriteFile(path+ext, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := fmt.Sprintf(`#!/bin/sh
case "$*" in
  *--query-gpu=*compute_cap*) cat "$0.query"; exit %d ;;
  *--query-gpu=*) cat "$0.nocc"; exit %d ;;
  *) cat "$0.header"; exit %d ;;
esac
`, f.queryExit, f.noCCExit, f.headerExit)
	if f.hang { // until the test ends and writes $0.release
		script = "#!/bin/sh\nwhile [ ! -e \"$0.release\" ]; do sleep 0.1; done\n"
		t.Cleanup(func() { os.WriteFile(path+".release", nil, 0o644) })
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// h100Lines turns the 8xH100 sample (name, compute_cap) into the probe's query output.
func h100Lines(t testing.TB, driver string) string {
	rows, err := parseSMICSV([]byte(sample(t, "nvidia_smi/query_name_compute_cap_csv_8xH100.txt")), []string{"name", "compute_cap"})
	if err != nil || len(rows) != 8 {
		t.Fatalf("8xH100 sample: %d rows, %v", len(rows), err)
	}
	var b strings.Builder
	for i, r := range rows {
		fmt.Fprintf(&b, "%s, %s, %s, 00000000:%02X:00.0, GPU-%08d-0000-0000-0000-000000000000\n", driver, r[1], r[0], 0x18+i*0x20, i)
	}
	return b.String()
}
