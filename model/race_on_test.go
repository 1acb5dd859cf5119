//go:build race

package model

// raceEnabled is true when the race detector is on; timing assertions and
// allocation counts are skipped then.
const raceEnabled = true
