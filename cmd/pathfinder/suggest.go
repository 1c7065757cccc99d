package main

import (
	"fmt"
	"strings"
)

// didYouMean returns ` (did you mean X?)`, as the host words it for a library, when s looks like a
// typo of some of options (each X written with format, "%q" or "--%s"), else "".
func didYouMean(s string, options []string, format string) string {
	near := nearest(s, options)
	if len(near) == 0 {
		return ""
	}
	q := make([]string, len(near))
	for i, n := range near {
		q[i] = fmt.Sprintf(format, n)
	}
	if len(q) == 1 {
		return " (did you mean " + q[0] + "?)"
	}
	return " (did you mean " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1] + "?)"
}

// didYouMeanOrValid is didYouMean for a value from a short fixed list: without a near one, it lists them.
func didYouMeanOrValid(s string, options []string) string {
	if m := didYouMean(s, options, "%q"); m != "" {
		return m
	}
	return " (valid: " + strings.Join(options, ", ") + ")"
}

// nearest returns the options s is likely a typo of: the one s is a prefix of, when only one is and
// s has two letters or more; else those at the smallest edit distance, if that is at most 1 for a
// word of four letters or fewer and at most 2 for a longer one.
func nearest(s string, options []string) []string {
	if len(s) >= 2 {
		var prefixed []string
		for _, o := range options {
			if strings.HasPrefix(o, s) {
				prefixed = append(prefixed, o)
			}
		}
		if len(prefixed) == 1 {
			return prefixed
		}
	}
	limit := 1
	if len(s) > 4 {
		limit = 2
	}
	var best []string
	for _, o := range options {
		d := editDistance(s, o)
		switch {
		case d > limit:
		case d < limit:
			limit, best = d, []string{o}
		default:
			best = append(best, o)
		}
	}
	return best
}

// editDistance counts the insertions, deletions, substitutions and swaps of two neighbours that turn
// a into b (the optimal string alignment distance: "fidn" is one from "find").
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
