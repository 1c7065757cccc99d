package compat

import (
	"testing"

	"github.com/pathfinder-dev/pathfinder/builtin/tables"
)

func TestParseMode(t *testing.T) {
	for _, m := range Modes {
		if got, err := ParseMode(string(m)); got != m || err != nil {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	if Modes[0] != Strict {
		t.Errorf("the default mode %q is not first", Modes[0])
	}
	for _, bad := range []string{"", "x", "Strict", "best_effort", " off"} {
		_, err := ParseMode(bad)
		if want := `unknown compatibility mode "` + bad + `" (strict, best-effort or off)`; err == nil || err.Error() != want {
			t.Errorf("ParseMode(%q): %v, want %s", bad, err, want)
		}
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in   string
		want Version
		str  string
	}{
		{in: "12", want: Version{Major: 12}, str: "12"},
		{in: "12.4", want: Version{Major: 12, Minor: 4, HasMinor: true}, str: "12.4"},
		{in: "12.4.1", want: Version{Major: 12, Minor: 4, HasMinor: true}, str: "12.4"},
		{in: "13.0", want: Version{Major: 13, HasMinor: true}, str: "13.0"},
		{in: "11.20", want: Version{Major: 11, Minor: 20, HasMinor: true}, str: "11.20"},
	}
	for _, tc := range tests {
		got, err := ParseVersion(tc.in)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseVersion(%q) = %+v (%s), %v; want %+v (%s)", tc.in, got, got, err, tc.want, tc.str)
		}
	}
	for _, bad := range []string{"", "12.", ".4", "12.4.1.2", "v12", "12.x", "-1", "+1", " 12", "12.4 ", "12345"} {
		if v, err := ParseVersion(bad); err == nil || err.Error() != `"`+bad+`" is not a CUDA version like 12.4` {
			t.Errorf("ParseVersion(%q) = %+v, %v", bad, v, err)
		}
	}
}

// TestMinimumDriver holds every number of NVIDIA's minor-version compatibility table.
func TestMinimumDriver(t *testing.T) {
	tests := []struct {
		major   int
		windows bool
		want    string
	}{
		{11, false, "450.80.02"}, {12, false, "525.60.13"}, {13, false, "580.65.06"},
		{11, true, "452.39"}, {12, true, "527.41"}, {13, true, "580"},
		{10, false, ""}, {10, true, ""}, {14, false, ""}, {14, true, ""},
	}
	for _, tc := range tests {
		got, ok := MinimumDriver(tc.major, tc.windows)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("MinimumDriver(%d, windows %v) = %q, %v; want %q", tc.major, tc.windows, got, ok, tc.want)
		}
	}
}

// TestMinimumDriver_toolkitTable: the Linux minimums of 12 and 13 are the drivers of their x.0 GA
// releases, as the table of toolkit drivers says, and 11's is not: CUDA 11.0 shipped with 450.51.05,
// and minor-version compatibility came with 450.80.02. Windows' 12 is 12.0 GA's driver too.
func TestMinimumDriver_toolkitTable(t *testing.T) {
	rows, err := tables.CUDAReleases()
	if err != nil {
		t.Fatal(err)
	}
	ga := map[string]tables.CUDARelease{}
	for _, r := range rows {
		ga[r.Release] = r
	}
	for _, tc := range []struct {
		major   int
		release string
		equal   bool
	}{{11, "CUDA 11.0.2 GA", false}, {12, "CUDA 12.0 GA", true}, {13, "CUDA 13.0 GA", true}} {
		linux, _ := MinimumDriver(tc.major, false)
		row, found := ga[tc.release]
		if !found || (linux == row.MinLinuxDriver) != tc.equal || tables.CompareVersions(linux, row.MinLinuxDriver) < 0 {
			t.Errorf("CUDA %d: minimum %s, %s's driver %s (found %v); equal: want %v", tc.major, linux, tc.release, row.MinLinuxDriver, found, tc.equal)
		}
	}
	if windows, _ := MinimumDriver(12, true); windows != ga["CUDA 12.0 GA"].MinWindowsDriver {
		t.Errorf("Windows 12: %s, 12.0 GA's %s", windows, ga["CUDA 12.0 GA"].MinWindowsDriver)
	}
}

func TestDriver_Check(t *testing.T) {
	const ptx = "cannot be JIT-compiled by this driver"
	tests := []struct {
		name   string
		driver Driver
		cuda   string
		compat Compat // "" when it does not run
		text   string // Reason, or Note
	}{
		{name: "a newer major", driver: Driver{Version: "550.54.14", MaxCUDA: "12.4"}, cuda: "13",
			text: "CUDA 13: driver 550.54.14 runs CUDA 12.4 at most (CUDA 13 needs 580.65.06)"},
		{name: "a newer major's minor", driver: Driver{Version: "550.54.14", MaxCUDA: "12.4"}, cuda: "13.1",
			text: "CUDA 13.1: driver 550.54.14 runs CUDA 12.4 at most (CUDA 13.1 needs 580.65.06)"},
		{name: "an older major", driver: Driver{Version: "550.54.14", MaxCUDA: "12.4"}, cuda: "11.8", compat: Full},
		{name: "an older major alone", driver: Driver{Version: "550.54.14", MaxCUDA: "12.4"}, cuda: "11", compat: Full},
		{name: "its own CUDA", driver: Driver{Version: "550.54.14", MaxCUDA: "12.4"}, cuda: "12.4", compat: Full},
		{name: "an older minor", driver: Driver{Version: "550.54.14", MaxCUDA: "12.4"}, cuda: "12.0", compat: Full},
		{name: "a newer minor", driver: Driver{Version: "550.54.14", MaxCUDA: "12.4"}, cuda: "12.8", compat: MinorVersion,
			text: "CUDA 12.8 runs by minor-version compatibility (driver 550.54.14 runs CUDA 12.4 natively): PTX from CUDA 12.8 " + ptx},
		{name: "its major alone", driver: Driver{Version: "550.54.14", MaxCUDA: "12.4"}, cuda: "12", compat: MinorVersion,
			text: "CUDA 12 runs by minor-version compatibility (driver 550.54.14 runs CUDA 12.4 natively): PTX from a newer CUDA 12 minor " + ptx},
		{name: "11.0 natively", driver: Driver{Version: "450.51.06", MaxCUDA: "11.0"}, cuda: "11.0", compat: Full},
		{name: "11.8 below the minimum", driver: Driver{Version: "450.51.06", MaxCUDA: "11.0"}, cuda: "11.8",
			text: "CUDA 11.8: driver 450.51.06 runs CUDA 11.0 at most (CUDA 11.8 needs 450.80.02)"},
		{name: "11.8 at the minimum", driver: Driver{Version: "450.80.02", MaxCUDA: "11.0"}, cuda: "11.8", compat: MinorVersion},
		{name: "12 on an 11 driver", driver: Driver{Version: "450.80.02", MaxCUDA: "11.0"}, cuda: "12.0",
			text: "CUDA 12.0: driver 450.80.02 runs CUDA 11.0 at most (CUDA 12.0 needs 525.60.13)"},
		{name: "12.4 at 12's minimum", driver: Driver{Version: "525.60.13", MaxCUDA: "12.0"}, cuda: "12.4", compat: MinorVersion},
		{name: "13.1 at 13's minimum", driver: Driver{Version: "580.65.06", MaxCUDA: "13.0"}, cuda: "13.1", compat: MinorVersion},
		{name: "13.0 at 13's minimum", driver: Driver{Version: "580.65.06", MaxCUDA: "13.0"}, cuda: "13.0", compat: Full},
		{name: "12.9 on a 13 driver", driver: Driver{Version: "580.65.06", MaxCUDA: "13.0"}, cuda: "12.9", compat: Full},
		{name: "10 has no minor-version compatibility", driver: Driver{Version: "440.33", MaxCUDA: "10.2"}, cuda: "10",
			text: "CUDA 10: driver 440.33 runs CUDA 10.2 at most"},
		{name: "11 on a 10 driver", driver: Driver{Version: "440.33", MaxCUDA: "10.2"}, cuda: "11.0",
			text: "CUDA 11.0: driver 440.33 runs CUDA 10.2 at most (CUDA 11.0 needs 450.80.02)"},
		{name: "windows 12.8 at 12's minimum", driver: Driver{Version: "527.41", MaxCUDA: "12.0", Windows: true}, cuda: "12.8", compat: MinorVersion},
		{name: "windows 12 on an 11 driver", driver: Driver{Version: "522.06", MaxCUDA: "11.8", Windows: true}, cuda: "12.0",
			text: "CUDA 12.0: driver 522.06 runs CUDA 11.8 at most (CUDA 12.0 needs 527.41)"},
		{name: "windows 11.4 at 11's minimum", driver: Driver{Version: "452.39", MaxCUDA: "11.0", Windows: true}, cuda: "11.4", compat: MinorVersion},
		{name: "windows 11.4 below it", driver: Driver{Version: "451.82", MaxCUDA: "11.0", Windows: true}, cuda: "11.4",
			text: "CUDA 11.4: driver 451.82 runs CUDA 11.0 at most (CUDA 11.4 needs 452.39)"},
		{name: "windows 13 by its branch", driver: Driver{Version: "580.10", MaxCUDA: "12.9", Windows: true}, cuda: "13.0", compat: MinorVersion},
		{name: "linux numbers on a windows-like version", driver: Driver{Version: "580.10", MaxCUDA: "12.9"}, cuda: "13.0",
			text: "CUDA 13.0: driver 580.10 runs CUDA 12.9 at most (CUDA 13.0 needs 580.65.06)"},
		{name: "no MaxCUDA", driver: Driver{Version: "340.108"}, cuda: "12.4",
			text: "CUDA 12.4: the newest CUDA driver 340.108 runs is not known"},
		{name: "a MaxCUDA that is no version", driver: Driver{Version: "550.54.14", MaxCUDA: "12"}, cuda: "12.4",
			text: `CUDA 12.4: the newest CUDA driver 550.54.14 runs, "12", is not a major.minor CUDA version`},
		{name: "no driver version", driver: Driver{MaxCUDA: "12.4"}, cuda: "12.8",
			text: "CUDA 12.8: driver of unknown version runs CUDA 12.4 at most (CUDA 12.8 needs 525.60.13)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cuda, err := ParseVersion(tc.cuda)
			if err != nil {
				t.Fatal(err)
			}
			v := tc.driver.Check(cuda)
			if v.Runs != (tc.compat != "") || v.Compat != tc.compat {
				t.Fatalf("%+v, want compat %q", v, tc.compat)
			}
			text, other := v.Reason, v.Note
			if v.Runs {
				text, other = v.Note, v.Reason
			}
			if tc.text != "" && text != tc.text || other != "" || (tc.compat == MinorVersion) != (v.Note != "") {
				t.Fatalf("%+v, want %q", v, tc.text)
			}
		})
	}
}

// FuzzParseVersion: whatever ParseVersion accepts writes back to a string it reads the same, and
// nothing makes it panic.
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"12", "12.4", "12.4.1", "", "12.", "v12", "99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			return
		}
		if again, err := ParseVersion(v.String()); err != nil || again != v {
			t.Fatalf("%q: %+v, then %q: %+v, %v", s, v, v.String(), again, err)
		}
	})
}
