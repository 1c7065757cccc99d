package compat

import (
	"reflect"
	"testing"
)

func TestDriver_Runs(t *testing.T) {
	full := func(cuda, upTo string) Support { return Support{CUDA: cuda, Compat: Full, UpTo: upTo} }
	no := func(cuda, min string) Support { return Support{CUDA: cuda, Compat: No, MinimumDriver: min} }
	tests := []struct {
		name   string
		driver Driver
		want   []Support
		text   []string
	}{
		{name: "550", driver: Driver{Version: "550.54.14", MaxCUDA: "12.4"},
			want: []Support{full("11", "11.8"), {CUDA: "12", Compat: Full, UpTo: "12.4", NewerMinors: MinorVersion}, no("13", "580.65.06")},
			text: []string{"full up to 11.8", "full up to 12.4, newer minors by minor-version compatibility", "no: needs driver 580.65.06"}},
		{name: "11.0 natively, not its newer minors", driver: Driver{Version: "450.51.06", MaxCUDA: "11.0"},
			want: []Support{{CUDA: "11", Compat: Full, UpTo: "11.0", NewerMinors: No, MinimumDriver: "450.80.02"}, no("12", "525.60.13"), no("13", "580.65.06")},
			text: []string{"full up to 11.0, newer minors need driver 450.80.02", "no: needs driver 525.60.13", "no: needs driver 580.65.06"}},
		{name: "11's minimum", driver: Driver{Version: "450.80.02", MaxCUDA: "11.0"},
			want: []Support{{CUDA: "11", Compat: Full, UpTo: "11.0", NewerMinors: MinorVersion}, no("12", "525.60.13"), no("13", "580.65.06")}},
		{name: "12's minimum", driver: Driver{Version: "525.60.13", MaxCUDA: "12.0"},
			want: []Support{full("11", "11.8"), {CUDA: "12", Compat: Full, UpTo: "12.0", NewerMinors: MinorVersion}, no("13", "580.65.06")}},
		{name: "535", driver: Driver{Version: "535.54.03", MaxCUDA: "12.2"},
			want: []Support{full("11", "11.8"), {CUDA: "12", Compat: Full, UpTo: "12.2", NewerMinors: MinorVersion}, no("13", "580.65.06")}},
		{name: "13's minimum", driver: Driver{Version: "580.65.06", MaxCUDA: "13.0"},
			want: []Support{full("11", "11.8"), full("12", "12.9"), {CUDA: "13", Compat: Full, UpTo: "13.0", NewerMinors: MinorVersion}}},
		{name: "older than minor-version compatibility", driver: Driver{Version: "440.33", MaxCUDA: "10.2"},
			want: []Support{no("11", "450.80.02"), no("12", "525.60.13"), no("13", "580.65.06")}},
		{name: "windows 13 by its branch", driver: Driver{Version: "580.10", MaxCUDA: "12.9", Windows: true},
			want: []Support{full("11", "11.8"), {CUDA: "12", Compat: Full, UpTo: "12.9", NewerMinors: MinorVersion}, {CUDA: "13", Compat: MinorVersion}},
			text: []string{"full up to 11.8", "full up to 12.9, newer minors by minor-version compatibility", "by minor-version compatibility"}},
		{name: "windows numbers", driver: Driver{Version: "522.06", MaxCUDA: "11.8", Windows: true},
			want: []Support{{CUDA: "11", Compat: Full, UpTo: "11.8", NewerMinors: MinorVersion}, no("12", "527.41"), no("13", "580")}},
		{name: "no MaxCUDA", driver: Driver{Version: "340.108"}},
		{name: "a MaxCUDA that is no version", driver: Driver{Version: "550.54.14", MaxCUDA: "12"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.driver.Runs()
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Runs() =\n%+v\nwant\n%+v", got, tc.want)
			}
			for i, want := range tc.text {
				if s := got[i].String(); s != want {
					t.Errorf("CUDA %s: %q, want %q", got[i].CUDA, s, want)
				}
			}
		})
	}
}
