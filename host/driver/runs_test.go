package driver

import (
	"reflect"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/compat"
)

func TestRuns(t *testing.T) {
	full := func(cuda, upTo string) CUDASupport { return CUDASupport{CUDA: cuda, Compat: CompatFull, UpTo: upTo} }
	no := func(cuda, min string) CUDASupport {
		return CUDASupport{CUDA: cuda, Compat: CompatNo, MinimumDriver: min}
	}
	tests := []struct {
		name   string
		driver compat.Driver
		want   []CUDASupport
		text   []string
	}{
		{name: "550", driver: compat.Driver{Version: "550.54.14", MaxCUDA: "12.4"},
			want: []CUDASupport{full("11", "11.8"), {CUDA: "12", Compat: CompatFull, UpTo: "12.4", NewerMinors: CompatMinorVersion}, no("13", "580.65.06")},
			text: []string{"full up to 11.8", "full up to 12.4, newer minors by minor-version compatibility", "no: needs driver 580.65.06"}},
		{name: "11.0 natively, not its newer minors", driver: compat.Driver{Version: "450.51.06", MaxCUDA: "11.0"},
			want: []CUDASupport{{CUDA: "11", Compat: CompatFull, UpTo: "11.0", NewerMinors: CompatNo, MinimumDriver: "450.80.02"}, no("12", "525.60.13"), no("13", "580.65.06")},
			text: []string{"full up to 11.0, newer minors need driver 450.80.02", "no: needs driver 525.60.13", "no: needs driver 580.65.06"}},
		{name: "11's minimum", driver: compat.Driver{Version: "450.80.02", MaxCUDA: "11.0"},
			want: []CUDASupport{{CUDA: "11", Compat: CompatFull, UpTo: "11.0", NewerMinors: CompatMinorVersion}, no("12", "525.60.13"), no("13", "580.65.06")}},
		{name: "12's minimum", driver: compat.Driver{Version: "525.60.13", MaxCUDA: "12.0"},
			want: []CUDASupport{full("11", "11.8"), {CUDA: "12", Compat: CompatFull, UpTo: "12.0", NewerMinors: CompatMinorVersion}, no("13", "580.65.06")}},
		{name: "535", driver: compat.Driver{Version: "535.54.03", MaxCUDA: "12.2"},
			want: []CUDASupport{full("11", "11.8"), {CUDA: "12", Compat: CompatFull, UpTo: "12.2", NewerMinors: CompatMinorVersion}, no("13", "580.65.06")}},
		{name: "13's minimum", driver: compat.Driver{Version: "580.65.06", MaxCUDA: "13.0"},
			want: []CUDASupport{full("11", "11.8"), full("12", "12.9"), {CUDA: "13", Compat: CompatFull, UpTo: "13.0", NewerMinors: CompatMinorVersion}}},
		{name: "older than minor-version compatibility", driver: compat.Driver{Version: "440.33", MaxCUDA: "10.2"},
			want: []CUDASupport{no("11", "450.80.02"), no("12", "525.60.13"), no("13", "580.65.06")}},
		{name: "windows 13 by its branch", driver: compat.Driver{Version: "580.10", MaxCUDA: "12.9", Windows: true},
			want: []CUDASupport{full("11", "11.8"), {CUDA: "12", Compat: CompatFull, UpTo: "12.9", NewerMinors: CompatMinorVersion}, {CUDA: "13", Compat: CompatMinorVersion}},
			text: []string{"full up to 11.8", "full up to 12.9, newer minors by minor-version compatibility", "by minor-version compatibility"}},
		{name: "windows numbers", driver: compat.Driver{Version: "522.06", MaxCUDA: "11.8", Windows: true},
			want: []CUDASupport{{CUDA: "11", Compat: CompatFull, UpTo: "11.8", NewerMinors: CompatMinorVersion}, no("12", "527.41"), no("13", "580")}},
		{name: "no MaxCUDA", driver: compat.Driver{Version: "340.108"}},
		{name: "a MaxCUDA that is no version", driver: compat.Driver{Version: "550.54.14", MaxCUDA: "12"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runs(tc.driver)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("runs() =\n%+v\nwant\n%+v", got, tc.want)
			}
			for i, want := range tc.text {
				if s := got[i].String(); s != want {
					t.Errorf("CUDA %s: %q, want %q", got[i].CUDA, s, want)
				}
			}
		})
	}
}
