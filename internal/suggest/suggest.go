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

// Phrase is ` (did you mean "a", "b" or "c"?)` for names, "" for none.
func Phrase(names []string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return " (did you mean " + q[0] + "?)"
	}
	return " (did you mean " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1] + "?)"
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
