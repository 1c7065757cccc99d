package main

import (
	"strings"

	"github.com/pathfinder-dev/pathfinder/internal/suggest"
)

// didYouMean returns ` (did you mean X?)`, as the host words it for a library, when s looks like a
// typo of some of options (each X written with format, "%q" or "--%s"), else "".
func didYouMean(s string, options []string, format string) string {
	return suggest.PhraseAs(suggest.Nearest(s, options), format)
}

// didYouMeanOrValid is didYouMean for a value from a short fixed list: without a near one, it lists them.
func didYouMeanOrValid(s string, options []string) string {
	if m := didYouMean(s, options, "%q"); m != "" {
		return m
	}
	return " (valid: " + strings.Join(options, ", ") + ")"
}
