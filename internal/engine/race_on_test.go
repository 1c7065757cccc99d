//go:build race

package engine

// raceEnabled: the race detector keeps shadow memory beside the heap, so RSS says little of the
// program under it.
const raceEnabled = true
