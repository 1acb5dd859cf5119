package serve

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DistKind is the shape of a Dist.
type DistKind uint8

const (
	// DistConst is the constant A.
	DistConst DistKind = iota
	// DistUniform is uniform on [A, B].
	DistUniform
	// DistNormal is normal with mean A and standard deviation B, clipped
	// below at 0 (an output length at 1).
	DistNormal
	// DistLognormal is log-normal with median A and 99th percentile B
	// (B ≥ A > 0): exp(μ + σZ) with μ = ln A and σ = (ln B − ln A)/2.3263.
	DistLognormal
	// DistPerPromptToken is A per prompt token plus B, a prefill model for
	// the time to first token. Durations only.
	DistPerPromptToken
	// DistMaxTokens is the request's own max_tokens (max_completion_tokens)
	// or OpenAIOptions.DefaultMaxTokens when it has none. Output lengths
	// only.
	DistMaxTokens
)

// z99 is the 99th percentile of the standard normal distribution.
const z99 = 2.3263478740408408

// Bounds of parsed values: an output length of a million tokens or a delay
// of a day is far beyond any test and keeps every sum inside int64.
const (
	maxLength   = 1_000_000
	maxDuration = float64(24 * time.Hour)
)

// Dist is a seeded distribution of output lengths (tokens) or of delays
// (nanoseconds), parsed by ParseLengthDist or ParseDurationDist. The zero
// value is the constant 0.
type Dist struct {
	Kind DistKind // the shape
	A, B float64  // the parameters, as documented on Kind; delays in nanoseconds
	// Duration marks a distribution of delays: String prints its parameters
	// as durations. ParseDurationDist sets it.
	Duration bool
}

// Forms accepted by the parsers, for error messages and flag help.
const (
	// LengthDistForms lists the forms ParseLengthDist accepts.
	LengthDistForms = "N, uniform:MIN:MAX, normal:MEAN:SD, lognormal:MEDIAN:P99, max_tokens"
	// DurationDistForms lists the forms ParseDurationDist accepts.
	DurationDistForms = "D, uniform:MIN:MAX, normal:MEAN:SD, lognormal:MEDIAN:P99, prompt:PER_TOKEN:CONST (D a Go duration such as 50ms; 0 alone is allowed)"
)

// ParseLengthDist parses an output-length distribution: "128",
// "uniform:64:256", "normal:128:32", "lognormal:100:400" or "max_tokens".
// Values are token counts up to 1,000,000 (normal and log-normal
// parameters may have fractions).
func ParseLengthDist(s string) (Dist, error) {
	if s == "max_tokens" {
		return Dist{Kind: DistMaxTokens}, nil
	}
	kind, args, err := splitDist(s)
	if err != nil {
		return Dist{}, err
	}
	if kind == DistPerPromptToken {
		return Dist{}, fmt.Errorf("%q: prompt: is for delays, not lengths", s)
	}
	var v [2]float64
	for i, a := range args {
		integer := kind == DistConst || kind == DistUniform
		f, err := parseCount(a, integer)
		if err != nil {
			return Dist{}, fmt.Errorf("%q: %w", s, err)
		}
		v[i] = f
	}
	d := Dist{Kind: kind, A: v[0], B: v[1]}
	if err := d.check(); err != nil {
		return Dist{}, fmt.Errorf("%q: %w", s, err)
	}
	return d, nil
}

// ParseDurationDist parses a delay distribution: "50ms", "uniform:10ms:30ms",
// "normal:50ms:10ms", "lognormal:50ms:200ms" (median, p99) or
// "prompt:100us:20ms" (per prompt token, plus a constant). Durations are
// Go durations (time.ParseDuration), non-negative and at most 24h; a bare
// "0" is allowed.
func ParseDurationDist(s string) (Dist, error) {
	kind, args, err := splitDist(s)
	if err != nil {
		return Dist{}, err
	}
	var v [2]float64
	for i, a := range args {
		d, err := time.ParseDuration(a)
		if err != nil {
			return Dist{}, fmt.Errorf("%q: %q is not a duration such as 50ms", s, a)
		}
		if d < 0 || float64(d) > maxDuration {
			return Dist{}, fmt.Errorf("%q: %s is outside [0, 24h]", s, a)
		}
		v[i] = float64(d)
	}
	d := Dist{Kind: kind, A: v[0], B: v[1], Duration: true}
	if err := d.check(); err != nil {
		return Dist{}, fmt.Errorf("%q: %w", s, err)
	}
	return d, nil
}

// splitDist splits "kind:a:b" or "a" into its kind and arguments.
func splitDist(s string) (DistKind, []string, error) {
	if s == "" {
		return 0, nil, errors.New("empty distribution")
	}
	name, rest, found := strings.Cut(s, ":")
	if !found {
		return DistConst, []string{s}, nil
	}
	var kind DistKind
	switch name {
	case "uniform":
		kind = DistUniform
	case "normal":
		kind = DistNormal
	case "lognormal":
		kind = DistLognormal
	case "prompt":
		kind = DistPerPromptToken
	default:
		return 0, nil, fmt.Errorf("%q: unknown distribution %q", s, name)
	}
	args := strings.Split(rest, ":")
	if len(args) != 2 {
		return 0, nil, fmt.Errorf("%q: %s takes two parameters", s, name)
	}
	return kind, args, nil
}

// parseCount parses a non-negative token count.
func parseCount(a string, integer bool) (float64, error) {
	if integer {
		n, err := strconv.ParseUint(a, 10, 32)
		if err != nil || n > maxLength {
			return 0, fmt.Errorf("%q is not a whole number of tokens in [0, %d]", a, maxLength)
		}
		return float64(n), nil
	}
	f, err := strconv.ParseFloat(a, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > maxLength {
		return 0, fmt.Errorf("%q is not a number of tokens in [0, %d]", a, maxLength)
	}
	return f, nil
}

// check validates the parameters against the kind.
func (d Dist) check() error {
	switch d.Kind {
	case DistUniform:
		if d.B < d.A {
			return fmt.Errorf("uniform needs MIN ≤ MAX")
		}
	case DistLognormal:
		if d.A <= 0 || d.B < d.A {
			return fmt.Errorf("lognormal needs 0 < MEDIAN ≤ P99")
		}
	}
	return nil
}

// String writes d in the form its parser reads back.
func (d Dist) String() string {
	f := func(v float64) string {
		if d.Duration {
			return time.Duration(v).String()
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	switch d.Kind {
	case DistConst:
		return f(d.A)
	case DistUniform:
		return "uniform:" + f(d.A) + ":" + f(d.B)
	case DistNormal:
		return "normal:" + f(d.A) + ":" + f(d.B)
	case DistLognormal:
		return "lognormal:" + f(d.A) + ":" + f(d.B)
	case DistPerPromptToken:
		return "prompt:" + f(d.A) + ":" + f(d.B)
	case DistMaxTokens:
		return "max_tokens"
	}
	return "unknown"
}

// isZero reports whether every draw of d is 0 (and d draws nothing from
// the generator), as in the roofline mode.
func (d Dist) isZero() bool {
	return d.A == 0 && d.B == 0 && d.Kind != DistMaxTokens
}

// sample draws one value. promptTokens feeds DistPerPromptToken. The
// result is ≥ 0; DistMaxTokens returns 0 (the caller decides).
func (d Dist) sample(r *rng, promptTokens int) float64 {
	var v float64
	switch d.Kind {
	case DistConst:
		v = d.A
	case DistUniform:
		v = d.A + (d.B-d.A)*r.float()
	case DistNormal:
		v = d.A + d.B*r.normal()
	case DistLognormal:
		sigma := (math.Log(d.B) - math.Log(d.A)) / z99
		v = d.A * math.Exp(sigma*r.normal())
	case DistPerPromptToken:
		v = d.A*float64(promptTokens) + d.B
	}
	if !(v >= 0) { // also NaN
		return 0
	}
	return v
}

// sampleDuration draws a delay.
func (d Dist) sampleDuration(r *rng, promptTokens int) time.Duration {
	v := d.sample(r, promptTokens)
	if v > maxDuration*2 {
		v = maxDuration * 2
	}
	return time.Duration(v)
}

// rng is SplitMix64: small, fast, allocation-free and reproducible across
// platforms and Go versions (math/rand/v2's generators are too, but need a
// heap-allocated Source behind rand.Rand).
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float returns a uniform number in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// normal returns a standard normal number (Box–Muller).
func (r *rng) normal() float64 {
	u1 := 1 - r.float() // (0, 1]
	u2 := r.float()
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// intn returns a uniform integer in [0, n), n > 0.
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }
