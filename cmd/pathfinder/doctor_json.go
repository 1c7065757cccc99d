package main

import (
	"io"

	"github.com/pathfinder-dev/pathfinder/host/driver"
)

// doctorDocument is doctor --json: what the text's screen says, as one document.
type doctorDocument struct {
	Version   string              `json:"version"`
	Platform  string              `json:"platform"`
	Libraries string              `json:"libraries"` // the text's summary: "3 of 50 found: 2 from site-packages, 1 from conda"
	Driver    *driver.Report      `json:"driver"`    // as driver --json prints it
	Problems  []doctorProblemJSON `json:"problems"`  // empty when doctor finds none (exit 0)
	Found     []doctorLibraryJSON `json:"found,omitempty"`
}

type doctorProblemJSON struct {
	Problem string `json:"problem"`
	Fix     string `json:"fix,omitempty"`
}

// doctorLibraryJSON is one library of --all: where it was found, or why not.
type doctorLibraryJSON struct {
	Name     string `json:"name"`
	Path     string `json:"path,omitempty"`
	FoundVia string `json:"found_via,omitempty"`
	Error    string `json:"error,omitempty"`
}

func writeDoctorJSON(w io.Writer, d *doctorFacts, problems []problem, all bool) error {
	doc := doctorDocument{
		Version: d.version, Platform: d.platform.String(), Libraries: librarySummary(d), Driver: d.report,
		Problems: []doctorProblemJSON{},
	}
	for _, p := range problems {
		doc.Problems = append(doc.Problems, doctorProblemJSON{p.title, p.fix})
	}
	if all {
		for _, a := range d.libs {
			l := doctorLibraryJSON{Name: a.Name}
			switch {
			case a.lib != nil:
				l.Path, l.FoundVia = a.lib.Path, a.lib.FoundVia
			case a.err != nil:
				l.Error = a.err.Error()
			default:
				l.Error = "not available on " + d.platform.String()
			}
			doc.Found = append(doc.Found, l)
		}
	}
	return writeJSONDocument(w, doc)
}
