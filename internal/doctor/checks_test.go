package doctor

import (
	"testing"

	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/internal/report"
)

// Test_checkIgnoredInputs: the fix follows the kind of reason the producer set, whatever its words.
func Test_checkIgnoredInputs(t *testing.T) {
	tests := []struct {
		name string
		in   report.Ignored
		fix  string
	}{
		{"relative", report.RelativePath("CUDA_PATH", "cuda"),
			"give CUDA_PATH an absolute path (pathfinder never resolves one against the working directory), or unset it"},
		{"overridden CUDA_HOME", report.Ignored{Name: "CUDA_HOME", Value: "/opt/cuda", Reason: "CUDA_PATH is set", Why: report.SetAside},
			"point CUDA_PATH and CUDA_HOME at one toolkit, or unset the one you do not mean (other tools read CUDA_HOME first)"},
		{"a driver pin that is no version", report.Ignored{Name: "PATHFINDER_DRIVER_VERSION", Value: "banana", Reason: "not a driver version"},
			"unset it to probe the machine, or pin a version like 580.65.06"},
		{"words alone decide nothing", report.Ignored{Name: "CUDA_HOME", Value: "x", Reason: "a relative path, as CUDA_PATH is set"},
			"unset it, or correct it as the reason says"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkIgnoredInputs(&Facts{Ignored: []report.Ignored{tt.in}, Driver: &driver.Report{}})
			if len(got) != 1 || got[0].Fix != tt.fix {
				t.Fatalf("%+v, want the fix %q", got, tt.fix)
			}
		})
	}
}
