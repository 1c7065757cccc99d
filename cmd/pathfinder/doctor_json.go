package main

import (
	"io"

	"github.com/pathfinder-dev/pathfinder/host/driver"
	"github.com/pathfinder-dev/pathfinder/host/search"
	"github.com/pathfinder-dev/pathfinder/internal/doctor"
)

// doctorDocument is doctor --json: what the text's screen says, as one document.
type doctorDocument struct {
	Version   string         `json:"version"`
	Platform  string         `json:"platform"`
	Libraries string         `json:"libraries"` // the text's summary: "3 of 50 found: 2 from site-packages, 1 from conda"
	Driver    *driver.Report `json:"driver"`    // as driver --json prints it
	// Compatibility is what the search's compatibility check knew: the mode, the driver, the anchor,
	// and its notes (a driver it could not check against).
	Compatibility *search.CompatibilityTrace `json:"compatibility"`
	// Choices are the libraries the check took over candidates it passed over, with those.
	Choices  []doctorLibraryJSON `json:"choices,omitempty"`
	Problems []doctorProblemJSON `json:"problems"` // empty when doctor finds none (exit 0)
	Found    []doctorLibraryJSON `json:"found,omitempty"`
}

type doctorProblemJSON struct {
	Problem string `json:"problem"`
	Fix     string `json:"fix,omitempty"`
}

// doctorLibraryJSON is one library of --all: where it was found, or why not.
type doctorLibraryJSON struct {
	Name       string           `json:"name"`
	Path       string           `json:"path,omitempty"`
	FoundVia   string           `json:"found_via,omitempty"`
	CUDA       string           `json:"cuda,omitempty"`
	PassedOver []search.Attempt `json:"passed_over,omitempty"`
	Error      string           `json:"error,omitempty"`
}

func writeDoctorJSON(w io.Writer, d *doctor.Facts, problems []doctor.Problem, all bool) error {
	doc := doctorDocument{
		Version: versionString(), Platform: d.Platform.String(), Libraries: librarySummary(d), Driver: d.Driver,
		Compatibility: d.Compat, Problems: []doctorProblemJSON{},
	}
	for _, a := range d.Libraries {
		if a.Found != nil && len(a.Found.PassedOver) > 0 {
			doc.Choices = append(doc.Choices, doctorLibraryJSON{Name: a.Name, Path: a.Found.Path, FoundVia: a.Found.FoundVia, CUDA: a.Found.CUDA, PassedOver: a.Found.PassedOver})
		}
	}
	for _, p := range problems {
		doc.Problems = append(doc.Problems, doctorProblemJSON{p.Title, p.Fix})
	}
	if all {
		for _, a := range d.Libraries {
			l := doctorLibraryJSON{Name: a.Name}
			switch {
			case a.Found != nil:
				l.Path, l.FoundVia, l.CUDA = a.Found.Path, a.Found.FoundVia, a.Found.CUDA
			case a.Err != nil:
				l.Error = a.Err.Error()
			default:
				l.Error = "not available on " + d.Platform.String()
			}
			doc.Found = append(doc.Found, l)
		}
	}
	return writeJSONDocument(w, doc)
}
