package compat

import (
	"fmt"
	"strings"
)

// Mode says how a search treats a candidate the driver cannot run.
type Mode string

const (
	Strict     Mode = "strict"      // passed over, with the reason; the default
	BestEffort Mode = "best-effort" // as strict where versions are known; an undated candidate is taken, with a note
	Off        Mode = "off"         // no check
)

// Modes are the valid modes, the default first.
var Modes = []Mode{Strict, BestEffort, Off}

// ParseMode reads a mode; the error names the valid ones.
func ParseMode(s string) (Mode, error) {
	names := make([]string, len(Modes))
	for i, m := range Modes {
		if s == string(m) {
			return m, nil
		}
		names[i] = string(m)
	}
	last := len(names) - 1
	return "", fmt.Errorf("unknown compatibility mode %q (%s or %s)", s, strings.Join(names[:last], ", "), names[last])
}
