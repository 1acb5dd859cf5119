//go:build race

package derived

// raceEnabled is true when the race detector is on: sync.Pool then drops
// items at random, so allocation counts grow, and they are skipped.
const raceEnabled = true
