package driver

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/testutil/filetree"
)

// TestProbe_runs: Report.Runs from the driver the probe found, through a captured /sys and /proc
// and through the pin, with Windows' numbers on WSL2; none without a driver version.
func TestProbe_runs(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		vars  map[string]string
		want  string // each major's Support, as String says it
	}{
		{name: "550.54.14 in /sys", files: map[string]string{"/sys/module/nvidia/version": sample(t, "sys_module_nvidia_version/550.54.14.txt")},
			want: "11: full up to 11.8; 12: full up to 12.4, newer minors by minor-version compatibility; 13: no: needs driver 580.65.06"},
		{name: "570.195.03 in /proc", files: map[string]string{"/proc/driver/nvidia/version": sample(t, "proc_driver_nvidia_version/open_x86_64_570.195.03.txt")},
			want: "11: full up to 11.8; 12: full up to 12.8, newer minors by minor-version compatibility; 13: no: needs driver 580.65.06"},
		{name: "515.76 in /proc", files: map[string]string{"/proc/driver/nvidia/version": sample(t, "proc_driver_nvidia_version/closed_x86_64_515.76.txt")},
			want: "11: full up to 11.7, newer minors by minor-version compatibility; 12: no: needs driver 525.60.13; 13: no: needs driver 580.65.06"},
		{name: "440.95.01 in /proc", files: map[string]string{"/proc/driver/nvidia/version": sample(t, "proc_driver_nvidia_version/closed_x86_64_440.95.01.txt")},
			want: "11: no: needs driver 450.80.02; 12: no: needs driver 525.60.13; 13: no: needs driver 580.65.06"},
		{name: "pinned 450.51.06", vars: map[string]string{envOverride: "450.51.06"},
			want: "11: full up to 11.0, newer minors need driver 450.80.02; 12: no: needs driver 525.60.13; 13: no: needs driver 580.65.06"},
		{name: "pinned 580.65.06", vars: map[string]string{envOverride: "580.65.06"},
			want: "11: full up to 11.8; 12: full up to 12.9; 13: full up to 13.0, newer minors by minor-version compatibility"},
		{name: "wsl2 pinned 527.41", files: map[string]string{"/dev/dxg": ""}, vars: map[string]string{envOverride: "527.41"},
			want: "11: full up to 11.8; 12: full up to 12.0, newer minors by minor-version compatibility; 13: no: needs driver 580"},
		{name: "no driver", files: map[string]string{"/dev/null": ""}},
		{name: "the user-space driver alone", files: map[string]string{"/usr/lib/x86_64-linux-gnu/libcuda.so.550.163.01": "", "/usr/lib/x86_64-linux-gnu/libcuda.so.1": "-> libcuda.so.550.163.01"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := probe(t, filetree.New(t, tc.files), fileMethods, tc.vars)
			var got []string
			for _, s := range r.Runs {
				got = append(got, s.CUDA+": "+s.String())
			}
			if strings.Join(got, "; ") != tc.want {
				t.Fatalf("runs %q (driver %q, max CUDA %q), want %q", got, r.DriverVersion, r.MaxCUDA, tc.want)
			}
		})
	}
}

// TestProbe_computeCapabilityPin: the pin stands for the GPUs, in place of the machine's, and a
// pin that is no list of compute capabilities is ignored, saying so, while a good driver pin beside
// it still counts.
func TestProbe_computeCapabilityPin(t *testing.T) {
	oneGPU := map[string]string{"/proc/driver/nvidia/gpus/0000:18:00.0/information": gpuInformation("NVIDIA H100 80GB HBM3", "GPU-aaaaaaaa-0000-0000-0000-000000000000", "0000:18:00.0")}
	tests := []struct {
		name    string
		files   map[string]string
		vars    map[string]string
		ccs     []string // the report's GPUs' compute capabilities
		source  string   // their source
		outcome Outcome
		detail  string
		ignored string // the summary's end
		note    string
		summary string // the whole summary, where the test says
	}{
		{name: "one GPU", vars: map[string]string{ComputeCapabilityPin: "9.0"}, ccs: []string{"9.0"}, source: methodOverride,
			outcome: OutcomeOK, detail: "compute capability pinned to 9.0 by PATHFINDER_COMPUTE_CAPABILITY",
			summary: "no NVIDIA driver: no kernel module, no libcuda.so.1 or libnvidia-ml.so.1"}, // of the machine, which has no GPU
		{name: "two GPUs and the driver", vars: map[string]string{ComputeCapabilityPin: " 9.0, 8.6 ", envOverride: "550.54.14"}, ccs: []string{"9.0", "8.6"}, source: methodOverride,
			outcome: OutcomeOK, detail: "driver version pinned to 550.54.14 by PATHFINDER_DRIVER_VERSION; compute capability pinned to 9.0,8.6 by PATHFINDER_COMPUTE_CAPABILITY"},
		{name: "in place of the machine's", files: oneGPU, vars: map[string]string{ComputeCapabilityPin: "12.0"}, ccs: []string{"12.0"}, source: methodOverride,
			outcome: OutcomeOK, note: "PATHFINDER_COMPUTE_CAPABILITY stands for the GPUs, in place of the 1 GPU the other methods found"},
		{name: "not set", files: oneGPU, vars: map[string]string{ComputeCapabilityPin: " "}, ccs: []string{""}, outcome: OutcomeSkipped},
		{name: "a major alone", files: oneGPU, vars: map[string]string{ComputeCapabilityPin: "9"}, ccs: []string{""}, outcome: OutcomeFailed,
			detail:  `PATHFINDER_COMPUTE_CAPABILITY="9": "9" is not a compute capability like 9.0`,
			ignored: `; ignored $PATHFINDER_COMPUTE_CAPABILITY=9 ("9" is not a compute capability like 9.0 (for several GPUs: 9.0,8.6))`},
		{name: "an empty entry", vars: map[string]string{ComputeCapabilityPin: "9.0,"}, outcome: OutcomeFailed, ignored: `("" is not a compute capability like 9.0`},
		{name: "an sm name", vars: map[string]string{ComputeCapabilityPin: "sm_90"}, outcome: OutcomeFailed, ignored: `("sm_90" is not`},
		{name: "a bad one beside a good driver pin", vars: map[string]string{ComputeCapabilityPin: "90", envOverride: "550.54.14"}, outcome: OutcomeFailed,
			detail: "driver version pinned to 550.54.14 by PATHFINDER_DRIVER_VERSION; PATHFINDER_COMPUTE_CAPABILITY=\"90\"", ignored: `("90" is not`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := probe(t, filetree.New(t, tc.files), fileMethods, tc.vars)
			wantOutcome(t, r, methodOverride, tc.outcome, tc.detail)
			var ccs []string
			for _, g := range r.GPUs {
				ccs = append(ccs, g.ComputeCapability)
				if g.ComputeCapabilitySource != tc.source || tc.source != "" && !slices.Equal(g.Sources, []string{tc.source}) {
					t.Errorf("GPU %+v, want source %q", g, tc.source)
				}
			}
			if !slices.Equal(ccs, tc.ccs) {
				t.Errorf("compute capabilities %q, want %q", ccs, tc.ccs)
			}
			if tc.ignored != "" && (!strings.Contains(r.Summary, tc.ignored) || !slices.ContainsFunc(r.Ignored, func(in IgnoredInput) bool { return in.Name == ComputeCapabilityPin })) {
				t.Errorf("summary %q, ignored %+v; want %q", r.Summary, r.Ignored, tc.ignored)
			}
			if tc.ignored == "" && len(r.Ignored) > 0 {
				t.Errorf("ignored %+v", r.Ignored)
			}
			if tc.summary != "" && r.Summary != tc.summary {
				t.Errorf("summary %q, want %q", r.Summary, tc.summary)
			}
			if tc.note != "" && !hasNote(r, tc.note) {
				t.Errorf("notes %q lack %q", r.Notes, tc.note)
			}
			if pinned := tc.vars[envOverride]; pinned != "" && (r.DriverVersion != pinned || r.State != StatePinned) {
				t.Errorf("driver %s, state %s: the driver pin should stand", r.DriverVersion, r.State)
			}
		})
	}
}

// TestReport_VariantConfigs: the provider's configs for a working driver, from the pins on a
// machine with no GPU; an empty list, JSON [], for a driver that does not work.
func TestReport_VariantConfigs(t *testing.T) {
	nothing := filetree.New(t, nil)
	tests := []struct {
		name string
		vars map[string]string
		want string // the configs' names
		sm   string // sm_arch's values
	}{
		{name: "550 and sm_90", vars: map[string]string{envOverride: "550.54.14", ComputeCapabilityPin: "9.0"},
			want: "cuda_version_lower_bound,cuda_version_upper_bound,sm_arch", sm: "90_real,90_virtual"},
		{name: "the highest of two", vars: map[string]string{envOverride: "550.54.14", ComputeCapabilityPin: "8.6,8.9"},
			want: "cuda_version_lower_bound,cuda_version_upper_bound,sm_arch", sm: "89_real,88_real,87_real,86_real,85_real,84_real,83_real,82_real,81_real,80_real,80_virtual"},
		{name: "no GPU", vars: map[string]string{envOverride: "550.54.14"}, want: "cuda_version_lower_bound,cuda_version_upper_bound"},
		{name: "no driver", vars: map[string]string{ComputeCapabilityPin: "9.0"}},
		{name: "a driver below CUDA 11", vars: map[string]string{envOverride: "440.33"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := probe(t, nothing, fileMethods, tc.vars).VariantConfigs()
			var names, sm []string
			for _, c := range got {
				names = append(names, c.Name)
				if c.Name == "sm_arch" {
					sm = c.Values
				}
			}
			b, _ := json.Marshal(got)
			if strings.Join(names, ",") != tc.want || strings.Join(sm, ",") != tc.sm || len(got) == 0 && string(b) != "[]" {
				t.Fatalf("%s, want %s with sm_arch %s", b, tc.want, tc.sm)
			}
		})
	}
}

// FuzzParseComputeCapabilities: what the pin's parser accepts is one compute capability a GPU, each
// like 9.0, and reads back the same joined; nothing makes it panic.
func FuzzParseComputeCapabilities(f *testing.F) {
	for _, s := range []string{"9.0", " 9.0, 8.6 ", "9", "9.0,", "sm_90", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ccs, err := parseComputeCapabilities(s)
		if err != nil {
			return
		}
		again, err := parseComputeCapabilities(strings.Join(ccs, ","))
		if err != nil || !slices.Equal(again, ccs) || len(ccs) != strings.Count(s, ",")+1 || slices.ContainsFunc(ccs, func(cc string) bool { return !isComputeCapability(cc) }) {
			t.Fatalf("%q: %q, then %q, %v", s, ccs, again, err)
		}
	})
}
