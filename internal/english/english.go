// Package english writes the small pieces of English that the messages of pathfinder and its
// driver probe share.
package english

import "strconv"

// Plural writes a count and its noun: "1 GPU", "2 GPUs", "0 problems".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
