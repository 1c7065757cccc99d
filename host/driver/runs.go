package driver

import (
	"strconv"

	"github.com/pathfinder-dev/pathfinder/builtin/tables"
	"github.com/pathfinder-dev/pathfinder/internal/compat"
)

// CUDASupport is one element of Report.Runs: whether the driver runs one CUDA major, what an
// installer asks before it picks a build of a package. JSON: `pathfinder driver --json`'s "runs".
type CUDASupport struct {
	CUDA   string `json:"cuda"`   // the major, "12"
	Compat Compat `json:"compat"` // CompatFull, CompatMinorVersion (every minor, none natively) or CompatNo
	// UpTo, with CompatFull, is the newest minor the driver runs natively: its MaxCUDA ("12.4") for
	// MaxCUDA's major, the major's last release ("11.8") for an older one.
	UpTo string `json:"up_to,omitempty"`
	// NewerMinors, for MaxCUDA's major, says how minors newer than UpTo run: CompatMinorVersion or
	// CompatNo.
	NewerMinors Compat `json:"newer_minors,omitempty"`
	// MinimumDriver, where some of the major does not run, is the driver that runs all of it.
	MinimumDriver string `json:"minimum_driver,omitempty"`
}

// Compat says how a driver runs a CUDA major, by NVIDIA's rules (docs/compatibility.md).
type Compat string

const (
	CompatFull         Compat = "full"          // natively, up to CUDASupport.UpTo
	CompatMinorVersion Compat = "minor-version" // by minor-version compatibility: the driver is at least the major's minimum
	CompatNo           Compat = "no"            // not at all; CUDASupport.MinimumDriver would
)

// String says it in a few words: "full up to 12.4, newer minors by minor-version compatibility".
func (s CUDASupport) String() string {
	switch {
	case s.Compat == CompatMinorVersion:
		return "by minor-version compatibility"
	case s.Compat == CompatNo:
		return "no: needs driver " + s.MinimumDriver
	case s.NewerMinors == CompatMinorVersion:
		return "full up to " + s.UpTo + ", newer minors by minor-version compatibility"
	case s.NewerMinors == CompatNo:
		return "full up to " + s.UpTo + ", newer minors need driver " + s.MinimumDriver
	}
	return "full up to " + s.UpTo
}

// runs says, for each CUDA major with minor-version compatibility (11, 12, 13), whether d runs it,
// by compat's rule. Nil when MaxCUDA is not known.
func runs(d compat.Driver) []CUDASupport {
	max, err := compat.ParseVersion(d.MaxCUDA)
	if err != nil || !max.HasMinor {
		return nil
	}
	var out []CUDASupport
	for _, major := range compat.Majors() {
		s := CUDASupport{CUDA: strconv.Itoa(major)}
		every := d.Check(compat.Version{Major: major}) // every minor of the major, the newest included
		switch {
		case major < max.Major:
			s.Compat, s.UpTo = CompatFull, newestRelease(major)
		case major == max.Major:
			s.Compat, s.UpTo, s.NewerMinors = CompatFull, max.String(), compatOf(every)
		default:
			s.Compat = compatOf(every)
		}
		if !every.Runs {
			s.MinimumDriver, _ = compat.MinimumDriver(major, d.Windows)
		}
		out = append(out, s)
	}
	return out
}

// compatOf is how v runs, or CompatNo.
func compatOf(v compat.Verdict) Compat {
	if v.Runs {
		return Compat(v.Compat)
	}
	return CompatNo
}

// newestRelease is the newest minor of major in NVIDIA's toolkit table, "11.8"; "" when the table
// lists none (the embedded table's tests hold it parseable).
func newestRelease(major int) string {
	rows, _ := tables.CUDAReleases()
	for _, r := range rows { // newest first
		if v, err := compat.ParseVersion(r.Toolkit); err == nil && v.Major == major {
			return r.Toolkit
		}
	}
	return ""
}
