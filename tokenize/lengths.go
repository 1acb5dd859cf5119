package tokenize

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Lengths is a distribution of text lengths (in tokens, or words without
// a tokenizer), as AIPerf and GuideLLM draw their synthetic prompts' input
// lengths: a fixed length, uniform over a range, or normal (rounded and
// kept within [1, MaxTextTokens]). The zero value is not valid; use
// ParseLengths or FixedLength.
type Lengths struct {
	kind string // "fixed", "uniform", "normal"
	a, b float64
}

// FixedLength is the distribution of the one length n.
func FixedLength(n int) Lengths { return Lengths{kind: "fixed", a: float64(n)} }

// ParseLengths reads a distribution: "N" (a fixed length), "uniform:MIN:MAX"
// (whole lengths from MIN to MAX, both included) or "normal:MEAN:SD".
// Lengths are 1 to MaxTextTokens; the error names the part that is wrong.
func ParseLengths(spec string) (Lengths, error) {
	parts := strings.Split(spec, ":")
	num := func(i int, whole bool) (float64, error) {
		var v float64
		var err error
		if whole {
			var n int
			n, err = strconv.Atoi(parts[i])
			v = float64(n)
		} else {
			v, err = strconv.ParseFloat(parts[i], 64)
		}
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("lengths %q: %q is not a number", spec, parts[i])
		}
		return v, nil
	}
	inRange := func(v float64, what string) error {
		if v < 1 || v > MaxTextTokens {
			return fmt.Errorf("lengths %q: %s %g: want 1 to %d", spec, what, v, MaxTextTokens)
		}
		return nil
	}
	switch {
	case len(parts) == 1:
		n, err := num(0, true)
		if err != nil {
			return Lengths{}, err
		}
		return FixedLength(int(n)), inRange(n, "length")
	case len(parts) == 3 && parts[0] == "uniform":
		lo, err := num(1, true)
		if err != nil {
			return Lengths{}, err
		}
		hi, err := num(2, true)
		if err != nil {
			return Lengths{}, err
		}
		if err := inRange(lo, "minimum"); err != nil {
			return Lengths{}, err
		}
		if err := inRange(hi, "maximum"); err != nil {
			return Lengths{}, err
		}
		if hi < lo {
			return Lengths{}, fmt.Errorf("lengths %q: maximum %g below the minimum %g", spec, hi, lo)
		}
		return Lengths{kind: "uniform", a: lo, b: hi}, nil
	case len(parts) == 3 && parts[0] == "normal":
		mean, err := num(1, false)
		if err != nil {
			return Lengths{}, err
		}
		sd, err := num(2, false)
		if err != nil {
			return Lengths{}, err
		}
		if err := inRange(mean, "mean"); err != nil {
			return Lengths{}, err
		}
		if sd < 0 || sd > MaxTextTokens {
			return Lengths{}, fmt.Errorf("lengths %q: standard deviation %g: want 0 to %d", spec, sd, MaxTextTokens)
		}
		return Lengths{kind: "normal", a: mean, b: sd}, nil
	}
	return Lengths{}, fmt.Errorf("lengths %q: want N, uniform:MIN:MAX or normal:MEAN:SD", spec)
}

// Draw returns a length drawn with rng.
func (l Lengths) Draw(rng *rand.Rand) int {
	switch l.kind {
	case "uniform":
		return int(l.a) + rng.IntN(int(l.b-l.a)+1)
	case "normal":
		v := math.Round(l.a + l.b*rng.NormFloat64())
		return int(min(max(v, 1), MaxTextTokens))
	}
	return int(l.a)
}

// IsZero reports whether l is the zero value (no distribution).
func (l Lengths) IsZero() bool { return l == Lengths{} }

// IsFixed reports whether every draw is the same length.
func (l Lengths) IsFixed() bool { return l.kind == "fixed" || l.kind == "" }

// String is the distribution as ParseLengths reads it.
func (l Lengths) String() string {
	switch l.kind {
	case "uniform":
		return fmt.Sprintf("uniform:%d:%d", int(l.a), int(l.b))
	case "normal":
		return "normal:" + strconv.FormatFloat(l.a, 'g', -1, 64) + ":" + strconv.FormatFloat(l.b, 'g', -1, 64)
	}
	return strconv.Itoa(int(l.a))
}
