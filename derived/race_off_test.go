//go:build !race

package derived

const raceEnabled = false
