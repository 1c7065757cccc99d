package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Test_table reads saved outputs written by hand: the cases a real machine can bring that the fake
// machine's run does not.
func Test_table(t *testing.T) {
	const report = `{"state":"working","summary":"s","driver_version":"535.261.03","cuda_driver_version":"12.2","gpus":[
		{"index":0,"name":"Tesla T4 (PG183)","pci_bus_id":"0000:00:1e.0","compute_capability":"7.5","compute_capability_source":"nvml","sources":["nvml"]}],
		"methods":[{"name":"setup","outcome":"ok"},{"name":"nvml","outcome":"ok"}]}`
	const smiXML = `<nvidia_smi_log><driver_version>535.261.03</driver_version><cuda_version>12.2</cuda_version><attached_gpus>1</attached_gpus>
		<gpu id="00000000:00:1E.0"><product_name>Tesla T4 (PG183)</product_name><pci><pci_bus_id>00000000:00:1E.0</pci_bus_id></pci></gpu></nvidia_smi_log>`
	tests := []struct {
		name  string
		files map[string]string
		code  int
		want  []string
	}{
		{name: "nvidia-smi without compute_cap, a name with parentheses", code: 0, files: map[string]string{
			fileDriverAll: report, methodFile("nvml"): report, fileSMIXML: smiXML,
			fileSMIQuery: "0, 00000000:00:1E.0, Tesla T4 (PG183), GPU-1, 535.261.03\n",
			fileCUDA:     `{"driver_version":12020,"device_count":1,"devices":[{"ordinal":0,"pci_bus_id":"0000:00:1E.0","compute_capability":"7.5"}]}`,
		}, want: []string{
			"gpu 0000:00:1e.0 name", "Tesla T4 (PG183)  Tesla T4 (PG183) (nvidia-smi -q -x, nvidia-smi --query-gpu)  agree",
			"7.5 (nvml)  7.5 (libcuda)  agree", "disagreements: none",
		}},
		{name: "the driver's tools disagree", code: 1, files: map[string]string{
			fileDriverAll: report, fileSMIXML: smiXML,
			fileCUDA: `{"driver_version":12080,"device_count":1,"devices":[]}`,
		}, want: []string{
			"cuda driver version: the driver's tools disagree: 12.8 (cuDriverGetVersion); 12.2 (nvidia-smi -q -x)",
			"cuda driver version  all methods  12.2  12.8 (cuDriverGetVersion); 12.2 (nvidia-smi -q -x)  agrees with one tool",
		}},
		{name: "libcuda failed, nothing else saved", code: 0, files: map[string]string{
			fileCUDA: `{"device_count":0,"devices":[],"error":"\"cuda\" not found"}`, fileCUDA + ".err": "gpucheck: cuda: \"cuda\" not found\n",
		}, want: []string{
			"note: driver.json: not saved", "note: cuda.json: gpucheck: cuda: \"cuda\" not found",
			"libcuda through pathfinder's Go API: \"cuda\" not found", "disagreements: none",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var out, errOut bytes.Buffer
			code := doMain(context.Background(), []string{"table", dir}, &out, &errOut)
			text := squeeze(out.String())
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out.String(), errOut.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(text, squeeze(w)) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// squeeze writes every run of two or more spaces as two, as the table's columns are padded.
func squeeze(s string) string {
	for strings.Contains(s, "   ") {
		s = strings.ReplaceAll(s, "   ", "  ")
	}
	return s
}

func Test_doMainUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"table"}, {"cuda", "extra"}, {"tabel", "."}} {
		var out, errOut bytes.Buffer
		if code := doMain(context.Background(), args, &out, &errOut); code != 2 || errOut.String() != usage+"\n" {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if code := doMain(context.Background(), []string{"table", "/nonexistent/dir"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), `"/nonexistent/dir" is not a directory`) {
		t.Errorf("a missing directory: exit %d, stderr %q", code, errOut.String())
	}
}
