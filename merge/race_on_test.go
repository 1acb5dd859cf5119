//go:build race

package merge_test

// raceEnabled is true when the race detector is on: it adds memory of its
// own to every allocation, and the heap tests are skipped.
const raceEnabled = true
