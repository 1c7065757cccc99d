package driver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pathfinder-dev/pathfinder/internal/compat"
)

// minors is "major.from", …, "major.to" then "major" alone, written out the long way.
func minors(major, from, to int, alone bool) []string {
	var out []string
	for m := from; m >= to; m-- {
		out = append(out, fmt.Sprintf("%d.%d", major, m))
	}
	if alone {
		out = append(out, fmt.Sprint(major))
	}
	return out
}

// TestVariantConfigs_550 is the whole answer for driver 550.54.14 with an sm_90 GPU, every value.
func TestVariantConfigs_550(t *testing.T) {
	got := variantConfigs(compat.Driver{Version: "550.54.14", MaxCUDA: "12.4"}, []string{"9.0"})
	upper := slices.Concat(minors(15, 20, 0, true), minors(14, 20, 0, true), minors(13, 20, 0, true), minors(12, 20, 5, false))
	want := []VariantConfig{
		{Name: "cuda_version_lower_bound", Values: slices.Concat(minors(12, 4, 0, true), minors(11, 20, 0, true))},
		{Name: "cuda_version_upper_bound", Values: upper},
		{Name: "sm_arch", Values: []string{"90_real", "90_virtual"}, MultiValue: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
	if len(want[0].Values) != 28 || len(upper) != 82 || want[0].Values[5] != "12" || upper[21] != "15" || upper[81] != "12.5" {
		t.Fatal("the expectation itself is off")
	}
	// variantlib's key names.
	b, _ := json.Marshal(got[2])
	if string(b) != `{"name":"sm_arch","values":["90_real","90_virtual"],"multi_value":true}` {
		t.Fatalf("JSON %s", b)
	}
}

// TestVariantConfigs holds the provider's rules, its own test's case (12.7 with 12.5) first.
func TestVariantConfigs(t *testing.T) {
	tests := []struct {
		name        string
		driver      compat.Driver
		ccs         []string
		first, last map[string]string // by config name: its first and last value
		absent      []string          // config names not given
	}{
		{name: "the provider's own test", driver: compat.Driver{CUDA: "12.7"}, ccs: []string{"12.5"},
			first: map[string]string{"cuda_version_lower_bound": "12.7", "cuda_version_upper_bound": "15.20", "sm_arch": "125_real"},
			last:  map[string]string{"cuda_version_lower_bound": "11", "cuda_version_upper_bound": "12.8", "sm_arch": "120_virtual"}},
		{name: "the user-mode driver's CUDA before MaxCUDA", driver: compat.Driver{MaxCUDA: "12.4", CUDA: "12.8"},
			first: map[string]string{"cuda_version_lower_bound": "12.8", "cuda_version_upper_bound": "15.20"},
			last:  map[string]string{"cuda_version_upper_bound": "12.9"}, absent: []string{"sm_arch"}},
		{name: "13.0", driver: compat.Driver{MaxCUDA: "13.0"}, ccs: []string{"10.0"},
			first: map[string]string{"cuda_version_lower_bound": "13.0", "sm_arch": "100_real"},
			last:  map[string]string{"cuda_version_lower_bound": "11", "cuda_version_upper_bound": "13.1", "sm_arch": "100_virtual"}},
		{name: "11.0, the lowest", driver: compat.Driver{MaxCUDA: "11.0"}, ccs: []string{"8.6"},
			first: map[string]string{"cuda_version_lower_bound": "11.0", "sm_arch": "86_real"},
			last:  map[string]string{"cuda_version_lower_bound": "11", "cuda_version_upper_bound": "11.1", "sm_arch": "80_virtual"}},
		{name: "15.20, the highest: nothing above", driver: compat.Driver{MaxCUDA: "15.20"},
			first: map[string]string{"cuda_version_lower_bound": "15.20"}, absent: []string{"cuda_version_upper_bound", "sm_arch"}},
		{name: "a minor past 20 below 15", driver: compat.Driver{MaxCUDA: "11.25"},
			first: map[string]string{"cuda_version_lower_bound": "11.25", "cuda_version_upper_bound": "15.20"},
			last:  map[string]string{"cuda_version_upper_bound": "12"}},
		{name: "the highest compute capability", driver: compat.Driver{MaxCUDA: "12.4"}, ccs: []string{"8.0", "9.0", "8.6", "x", "10"},
			first: map[string]string{"sm_arch": "90_real"}, last: map[string]string{"sm_arch": "90_virtual"}},
		{name: "a GPU below 5.0", driver: compat.Driver{MaxCUDA: "12.4"}, ccs: []string{"3.7"}, absent: []string{"sm_arch"}},
		{name: "5.0", driver: compat.Driver{MaxCUDA: "12.4"}, ccs: []string{"5.0"}, first: map[string]string{"sm_arch": "50_real"}, last: map[string]string{"sm_arch": "50_virtual"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := variantConfigs(tc.driver, tc.ccs)
			byName := map[string]VariantConfig{}
			for i, c := range got {
				byName[c.Name] = c
				if want := []string{"cuda_version_lower_bound", "cuda_version_upper_bound", "sm_arch"}; !slices.Contains(want, c.Name) || i > 0 && slices.Index(want, c.Name) < slices.Index(want, got[i-1].Name) {
					t.Errorf("config %d is %q", i, c.Name)
				}
				if c.MultiValue != (c.Name == "sm_arch") || len(c.Values) == 0 || len(slices.Compact(slices.Clone(c.Values))) != len(c.Values) {
					t.Errorf("%+v", c)
				}
			}
			for name, v := range tc.first {
				if c, ok := byName[name]; !ok || c.Values[0] != v {
					t.Errorf("%s starts %v, want %s", name, c.Values, v)
				}
			}
			for name, v := range tc.last {
				if c, ok := byName[name]; !ok || c.Values[len(c.Values)-1] != v {
					t.Errorf("%s ends %v, want %s", name, c.Values, v)
				}
			}
			for _, name := range tc.absent {
				if _, ok := byName[name]; ok {
					t.Errorf("%s given: %v", name, byName[name].Values)
				}
			}
			if lower, upper := byName["cuda_version_lower_bound"].Values, byName["cuda_version_upper_bound"].Values; slices.ContainsFunc(lower, func(v string) bool { return slices.Contains(upper, v) }) {
				t.Errorf("a version is in both bounds: %v / %v", lower, upper)
			}
		})
	}
}

// TestVariantConfigs_none: no CUDA version, or one outside the provider's 11.0 to 15.20, gives no
// configs, as an empty list (JSON []), whatever the GPUs.
func TestVariantConfigs_none(t *testing.T) {
	for _, d := range []compat.Driver{{}, {Version: "550.54.14"}, {MaxCUDA: "10.2"}, {MaxCUDA: "15.21"}, {MaxCUDA: "16.0"}, {MaxCUDA: "banana"}, {CUDA: "x", MaxCUDA: "12.4"}} {
		got := variantConfigs(d, []string{"9.0"})
		if b, _ := json.Marshal(got); string(b) != "[]" {
			t.Errorf("%+v: %s", d, b)
		}
	}
	if got := variantConfigs(compat.Driver{MaxCUDA: "12.4"}, nil); len(got) != 2 || strings.Contains(fmt.Sprint(got), "sm_arch") {
		t.Errorf("no GPUs: %+v", got)
	}
}
