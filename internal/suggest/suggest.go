// Package suggest finds the known names closest to a mistyped one, for the "did you mean" of a
// message: a library, a step in a config, a grant token.
package suggest

import (
	"fmt"
	"sort"
	"strings"
)

// Closest returns up to three of known that are close to name, best first: the same letters in
// another case, one the beginning of the other, or at most two edits apart.
func Closest(name string, known []string) []string {
	type scored struct {
		name  string
		score int
	}
	var out []scored
	lower := strings.ToLower(name)
	for _, n := range known {
		ln := strings.ToLower(n)
		d := editDistance(lower, ln)
		switch {
		case ln == lower:
			d = 0
		case strings.HasPrefix(ln, lower) || strings.HasPrefix(lower, ln):
			d = min(d, 1)
		}
		if d <= 2 {
			out = append(out, scored{n, d})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score < out[j].score })
	names := make([]string, 0, 3)
	for i := 0; i < len(out) && i < 3; i++ {
		names = append(names, out[i].name)
	}
	return names
}

// Nearest is Closest's stricter sibling, for a command line's words (commands, flags, flag values),
// where a short word has many neighbours: the one option s is a prefix of, when only one is and s
// has two letters or more; else those at the smallest edit distance, if that is at most 1 for a
// word of four letters or fewer and at most 2 for a longer one. Ties give all.
func Nearest(s string, options []string) []string {
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

// Phrase is ` (did you mean "a", "b" or "c"?)` for names, "" for none.
func Phrase(names []string) string { return PhraseAs(names, "%q") }

// PhraseAs is Phrase with each name written by format ("--%s" for a flag).
func PhraseAs(names []string, format string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf(format, n)
	}
	if len(q) == 1 {
		return " (did you mean " + q[0] + "?)"
	}
	return " (did you mean " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1] + "?)"
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
