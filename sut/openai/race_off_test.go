//go:build !race

package openai

const raceEnabled = false
