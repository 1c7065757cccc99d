//go:build race

package search

// raceEnabled: the race detector keeps shadow memory beside the heap, so RSS says little of the
// program under it.
const raceEnabled = true
