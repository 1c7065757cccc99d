package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// a100FromList reads name and UUID of the A100 in the `nvidia-smi -L` sample (MIG lines are not GPUs).
func a100FromList(t testing.TB) (name, uuid string) {
	m := regexp.MustCompile(`(?m)^GPU 0: (.+) \(UUID: (GPU-[0-9a-f-]+)\)$`).FindStringSubmatch(sample(t, "nvidia_smi/list_gpus_L_with_MIG_A100.txt"))
	if m == nil {
		t.Fatal("no GPU line in the -L sample")
	}
	return m[1], m[2]
}

func TestProbe_nvidiaSMI(t *testing.T) {
	a100, a100UUID := a100FromList(t)
	wslVersions := strings.Fields(sample(t, "nvidia_smi/query_driver_version_csv_noheader_2gpu_wsl2.txt"))
	tests := []struct {
		name      string
		fake      smiFake
		wsl       bool // install under <root>/usr/lib/wsl/lib instead of PATH
		vars      map[string]string
		outcome   Outcome
		detail    []string
		driver    string
		cuda      string
		maxCUDA   string
		gpus      int
		cc        string
		firstName string
		firstUUID string
	}{
		{
			name: "8xH100", fake: smiFake{query: h100Lines(t, "550.54.14"), header: sample(t, "nvidia_smi/header_classic_windows_535.98.txt")},
			outcome: OutcomeOK, driver: "550.54.14", cuda: "12.2", maxCUDA: "12.4", gpus: 8, cc: "9.0", firstName: "NVIDIA H100 80GB HBM3",
		},
		{
			name: "wsl2 copy, Windows driver", wsl: true,
			fake: smiFake{query: fmt.Sprintf("%s, 8.6, NVIDIA GeForce RTX 3080, 00000000:01:00.0, GPU-a\n%s, 8.9, NVIDIA GeForce RTX 4090, 00000000:02:00.0, GPU-b\n", wslVersions[0], wslVersions[1]),
				header: sample(t, "nvidia_smi/header_610_kmd_umd.txt")},
			outcome: OutcomeOK, driver: "572.60", cuda: "13.3", maxCUDA: "12.8", gpus: 2, cc: "8.6",
		},
		{
			name: "A100 with MIG", fake: smiFake{query: "535.129.03, 8.0, " + a100 + ", 00000000:17:00.0, " + a100UUID + "\n"},
			outcome: OutcomeOK, driver: "535.129.03", maxCUDA: "12.2", gpus: 1, cc: "8.0", firstName: a100, firstUUID: a100UUID,
		},
		{
			name: "no driver, exit 9", fake: smiFake{query: sample(t, "nvidia_smi/failure_no_driver_stdout_exit9.txt"), queryExit: 9},
			outcome: OutcomeFailed, detail: []string{"exited 9", "cannot communicate with the NVIDIA driver", "couldn't communicate with the NVIDIA driver"},
		},
		{
			name: "old nvidia-smi without compute_cap, exit 2",
			fake: smiFake{query: sample(t, "nvidia_smi/failure_unknown_field_compute_cap_nvsmi470_stdout_exit2.txt"), queryExit: 2,
				noCC: "470.256.02, Tesla T4, 00000000:00:1E.0, GPU-t4\n"},
			outcome: OutcomeOK, detail: []string{"predates compute_cap"}, driver: "470.256.02", maxCUDA: "11.4", gpus: 1, firstName: "Tesla T4",
		},
		{
			name: "driver/library mismatch, exit 18", fake: smiFake{query: "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.127\n", queryExit: 18},
			outcome: OutcomeFailed, detail: []string{"exited 18", "version mismatch", "Failed to initialize NVML"},
		},
		{
			name: "ERR! on a GPU", fake: smiFake{query: "550.54.14, 9.0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, GPU-1\n550.54.14, ERR!, ERR!, 00000000:38:00.0, ERR!\n"},
			outcome: OutcomeOK, detail: []string{"GPU 1: nvidia-smi answered ERR! for compute_cap"}, driver: "550.54.14", maxCUDA: "12.4", gpus: 2, cc: "9.0",
		},
		{
			name: "disagreeing driver versions", fake: smiFake{query: "535.54.03, 9.0, NVIDIA H100, 00000000:18:00.0, GPU-1\n535.86.05, 9.0, NVIDIA H100, 00000000:38:00.0, GPU-2\n"},
			outcome: OutcomeFailed, detail: []string{"2 different driver versions (535.54.03, 535.86.05)"},
		},
		{
			name: "garbage on exit 0", fake: smiFake{query: "hello world\n"},
			outcome: OutcomeFailed, detail: []string{"has 1 fields, want 5"},
		},
		{
			name: "unknown exit code", fake: smiFake{query: "boom\n", queryExit: 77},
			outcome: OutcomeFailed, detail: []string{"exited 77 (unknown exit code): boom"},
		},
		{
			name: "no GPU, exit 6", fake: smiFake{query: "No devices were found\n", queryExit: 6},
			outcome: OutcomeFailed, detail: []string{"exited 6 (no GPU found): No devices were found"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := liveFiles(nil)
			if tc.wsl {
				files = map[string]string{"/dev/dxg": ""}
			}
			root := filetree.New(t, files)
			var path string
			if tc.wsl {
				path = writeSMI(t, filepath.Join(root, wslLibDir, "nvidia-smi"), tc.fake)
			} else {
				path = writeSMI(t, filepath.Join(t.TempDir(), "nvidia-smi"), tc.fake)
			}
			r := Probe(context.Background(), Options{
				Root: root, Methods: []string{methodNvidiaSMI}, LookupEnv: env(tc.vars), rootIsLive: true,
				LookPath: func(f string) (string, error) {
					if tc.wsl || f != "nvidia-smi" {
						return "", os.ErrNotExist
					}
					return path, nil
				},
			})
			wantOutcome(t, r, methodNvidiaSMI, tc.outcome, tc.detail...)
			if r.DriverVersion != tc.driver || r.CUDADriverVersion != tc.cuda || r.MaxCUDA != tc.maxCUDA || len(r.GPUs) != tc.gpus {
				t.Fatalf("driver %q cuda %q max %q gpus %d; want %q %q %q %d", r.DriverVersion, r.CUDADriverVersion, r.MaxCUDA, len(r.GPUs), tc.driver, tc.cuda, tc.maxCUDA, tc.gpus)
			}
			if tc.gpus == 0 {
				return
			}
			g := r.GPUs[0]
			if g.ComputeCapability != tc.cc || (tc.cc != "" && g.ComputeCapabilitySource != methodNvidiaSMI) {
				t.Errorf("GPU 0 cc %q from %q, want %q from nvidia-smi", g.ComputeCapability, g.ComputeCapabilitySource, tc.cc)
			}
			if tc.firstName != "" && g.Name != tc.firstName {
				t.Errorf("GPU 0 name %q, want %q", g.Name, tc.firstName)
			}
			if tc.firstUUID != "" && g.UUID != tc.firstUUID {
				t.Errorf("GPU 0 uuid %q, want %q", g.UUID, tc.firstUUID)
			}
			if g.Index != 0 || !strings.HasPrefix(g.PCIBusID, "0000:") {
				t.Errorf("GPU 0 index %d bus %q", g.Index, g.PCIBusID)
			}
		})
	}
}

func TestProbe_nvidiaSMI_hangs(t *testing.T) {
	path := writeSMI(t, filepath.Join(t.TempDir(), "nvidia-smi"), smiFake{hang: true})
	// The fake hangs until the test ends: a probe that waited for it would not return. A minute is
	// only how long the test waits to say so.
	done := make(chan *Report, 1)
	root := filetree.New(t, liveFiles(nil))
	go func() {
		done <- Probe(context.Background(), Options{
			Root: root, rootIsLive: true, Methods: []string{methodNvidiaSMI}, LookupEnv: env(nil), Timeout: 200 * time.Millisecond,
			LookPath: func(string) (string, error) { return path, nil },
		})
	}()
	select {
	case r := <-done:
		wantOutcome(t, r, methodNvidiaSMI, OutcomeFailed, "did not finish within 200ms")
	case <-time.After(time.Minute):
		os.WriteFile(path+".release", nil, 0o644)
		t.Fatal("a hanging nvidia-smi held the probe")
	}
}

func TestProbe_nvidiaSMI_notFound(t *testing.T) {
	dir := t.TempDir()
	// Found through PATH by the default lookup, which ignores relative entries.
	writeSMI(t, filepath.Join(dir, "nvidia-smi"), smiFake{query: h100Lines(t, "550.54.14")})
	live := filetree.New(t, liveFiles(nil))
	r := Probe(context.Background(), Options{Root: live, rootIsLive: true, Methods: []string{methodNvidiaSMI}, LookupEnv: env(map[string]string{"PATH": "relative/bin:" + dir})})
	wantOutcome(t, r, methodNvidiaSMI, OutcomeOK, dir)

	r = Probe(context.Background(), Options{Root: live, rootIsLive: true, Methods: []string{methodNvidiaSMI}, LookupEnv: env(map[string]string{"PATH": "."})})
	wantOutcome(t, r, methodNvidiaSMI, OutcomeUnavailable, "neither on PATH nor at")
}

func Test_parseSMICSV(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		fields []string
		want   [][]string
		err    string
	}{
		{name: "wsl2 driver versions", data: sample(t, "nvidia_smi/query_driver_version_csv_noheader_2gpu_wsl2.txt"), fields: []string{"driver_version"},
			want: [][]string{{"572.60"}, {"572.60"}}},
		{name: "name and cc with header", data: sample(t, "nvidia_smi/query_name_compute_cap_csv_8xH100.txt"), fields: []string{"name", "compute_cap"},
			want: slices.Repeat([][]string{{"NVIDIA H100 80GB HBM3", "9.0"}}, 8)},
		{name: "comma in name", data: "550.54.14, 9.0, NVIDIA H100, 80GB, HBM3, 0000:01:00.0, GPU-x\r\n", fields: smiQueryFields,
			want: [][]string{{"550.54.14", "9.0", "NVIDIA H100, 80GB, HBM3", "0000:01:00.0", "GPU-x"}}},
		{name: "empty", data: "\n\n", fields: smiQueryFields},
		{name: "too few fields", data: "550.54.14, 9.0\n", fields: smiQueryFields, err: "has 2 fields, want 5"},
		{name: "extra fields without a name", data: "a, b\n", fields: []string{"driver_version"}, err: "has 2 fields, want 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSMICSV([]byte(tc.data), tc.fields)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func Test_parseSMIHeader(t *testing.T) {
	tests := []struct {
		name, data, driver, cuda string
	}{
		{name: "classic", data: sample(t, "nvidia_smi/header_classic_windows_535.98.txt"), driver: "535.98", cuda: "12.2"},
		{name: "610 kmd umd", data: sample(t, "nvidia_smi/header_610_kmd_umd.txt"), driver: "610.57.04", cuda: "13.3"},
		{name: "cuda n/a", data: "| NVIDIA-SMI 550.54.14   Driver Version: 550.54.14   CUDA Version: N/A |", driver: "550.54.14"},
		{name: "nothing", data: sample(t, "nvidia_smi/failure_no_driver_stdout_exit9.txt")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			driver, cuda, err := parseSMIHeader([]byte(tc.data))
			if driver != tc.driver || cuda != tc.cuda || (err != nil) != (tc.driver == "" && tc.cuda == "") {
				t.Fatalf("got %q %q %v; want %q %q", driver, cuda, err, tc.driver, tc.cuda)
			}
		})
	}
}

func FuzzParseSMICSV(f *testing.F) {
	for _, name := range samples(f, "nvidia_smi") {
		f.Add([]byte(sample(f, "nvidia_smi/"+name)))
	}
	f.Add([]byte(h100Lines(f, "550.54.14")))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := parseSMICSV(data, smiQueryFields)
		if err != nil {
			return
		}
		for _, r := range rows {
			if len(r) != len(smiQueryFields) {
				t.Fatalf("row %q", r)
			}
		}
		obs, _, err := smiObservation(rows, smiQueryFields)
		if err != nil {
			return
		}
		if obs.driverVersion != "" && !validDriverVersion(obs.driverVersion) {
			t.Fatalf("driver %q", obs.driverVersion)
		}
		for _, g := range obs.gpus {
			if g.cc != "" && !isComputeCapability(g.cc) {
				t.Fatalf("cc %q", g.cc)
			}
		}
	})
}

func FuzzParseSMIHeader(f *testing.F) {
	for _, name := range samples(f, "nvidia_smi") {
		f.Add([]byte(sample(f, "nvidia_smi/"+name)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		driver, cuda, err := parseSMIHeader(data)
		if err != nil {
			return
		}
		if (driver != "" && !validDriverVersion(driver)) || (cuda != "" && !isComputeCapability(cuda)) {
			t.Fatalf("accepted %q %q", driver, cuda)
		}
	})
}
