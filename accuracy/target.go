package accuracy

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Target is a quality target: a value the score must reach, written as
// MLPerf writes its targets, "99% of FP32 (76.46)" (a fraction of a
// reference score), or as a plain value ("75.69").
type Target struct {
	// Value is the score to reach, on the scale of the reference.
	Value float64
	// Text is the target as written.
	Text string
}

var targetRE = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*of\s*[A-Za-z0-9_.-]+\s*\(\s*([0-9]+(?:\.[0-9]+)?)\s*\)\s*$`)

// ParseTarget reads a target: "P% of NAME (R)" is P/100 × R, e.g. "99% of
// FP32 (76.46)" is 75.6954; a plain number is itself.
func ParseTarget(s string) (Target, error) {
	if m := targetRE.FindStringSubmatch(s); m != nil {
		p, _ := strconv.ParseFloat(m[1], 64)
		r, _ := strconv.ParseFloat(m[2], 64)
		if p > 100 {
			return Target{}, fmt.Errorf("target %q: %v%% of the reference is more than all of it", s, p)
		}
		return Target{Value: p / 100 * r, Text: strings.TrimSpace(s)}, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Target{}, fmt.Errorf("target %q: want \"99%% of FP32 (76.46)\" or a number", s)
	}
	return Target{Value: v, Text: strings.TrimSpace(s)}, nil
}
