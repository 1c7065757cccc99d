package compat

import (
	"strconv"

	"github.com/pathfinder-dev/pathfinder/builtin/tables"
)

// Support says whether a driver runs one CUDA major: what an installer asks before it picks a
// build of a package. JSON: host/driver's Report.Runs, `pathfinder driver --json`'s "runs".
type Support struct {
	CUDA   string `json:"cuda"`   // the major, "12"
	Compat Compat `json:"compat"` // Full, MinorVersion (every minor, none natively) or No
	// UpTo, with Full, is the newest minor the driver runs natively: its MaxCUDA ("12.4") for
	// MaxCUDA's major, the major's last release ("11.8") for an older one.
	UpTo string `json:"up_to,omitempty"`
	// NewerMinors, for MaxCUDA's major, says how minors newer than UpTo run: MinorVersion or No.
	NewerMinors Compat `json:"newer_minors,omitempty"`
	// MinimumDriver, where some of the major does not run, is the driver that runs all of it.
	MinimumDriver string `json:"minimum_driver,omitempty"`
}

// String says it in a few words: "full up to 12.4, newer minors by minor-version compatibility".
func (s Support) String() string {
	switch {
	case s.Compat == MinorVersion:
		return "by minor-version compatibility"
	case s.Compat == No:
		return "no: needs driver " + s.MinimumDriver
	case s.NewerMinors == MinorVersion:
		return "full up to " + s.UpTo + ", newer minors by minor-version compatibility"
	case s.NewerMinors == No:
		return "full up to " + s.UpTo + ", newer minors need driver " + s.MinimumDriver
	}
	return "full up to " + s.UpTo
}

// Runs says, for each CUDA major with minor-version compatibility (11, 12, 13), whether this driver
// runs it, by Check's rule. Nil when MaxCUDA is not known.
func (d Driver) Runs() []Support {
	max, err := ParseVersion(d.MaxCUDA)
	if err != nil || !max.HasMinor {
		return nil
	}
	var out []Support
	for _, m := range minimumDrivers {
		s := Support{CUDA: strconv.Itoa(m.major)}
		every := d.Check(Version{Major: m.major}) // every minor of the major, the newest included
		switch {
		case m.major < max.Major:
			s.Compat, s.UpTo = Full, newestRelease(m.major)
		case m.major == max.Major:
			s.Compat, s.UpTo, s.NewerMinors = Full, max.String(), compatOf(every)
		default:
			s.Compat = compatOf(every)
		}
		if !every.Runs {
			s.MinimumDriver, _ = MinimumDriver(m.major, d.Windows)
		}
		out = append(out, s)
	}
	return out
}

// compatOf is how v runs, or No.
func compatOf(v Verdict) Compat {
	if v.Runs {
		return v.Compat
	}
	return No
}

// newestRelease is the newest minor of major in NVIDIA's toolkit table, "11.8"; "" when the table
// lists none (the embedded table's tests hold it parseable).
func newestRelease(major int) string {
	rows, _ := tables.CUDAReleases()
	for _, r := range rows { // newest first
		if v, err := ParseVersion(r.Toolkit); err == nil && v.Major == major {
			return r.Toolkit
		}
	}
	return ""
}
