package serve

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseLengthDist(t *testing.T) {
	tests := []struct {
		in     string
		want   Dist
		errHas string // empty: no error
		why    string
	}{
		{"128", Dist{Kind: DistConst, A: 128}, "", "a bare count is a constant"},
		{"0", Dist{Kind: DistConst}, "", "zero is a constant too (NewOpenAI reads it as max_tokens)"},
		{"uniform:64:256", Dist{Kind: DistUniform, A: 64, B: 256}, "", "uniform between two counts"},
		{"uniform:5:5", Dist{Kind: DistUniform, A: 5, B: 5}, "", "a degenerate uniform is allowed"},
		{"normal:128:32", Dist{Kind: DistNormal, A: 128, B: 32}, "", "normal by mean and sd"},
		{"normal:12.5:0.5", Dist{Kind: DistNormal, A: 12.5, B: 0.5}, "", "normal parameters may have fractions"},
		{"lognormal:100:400", Dist{Kind: DistLognormal, A: 100, B: 400}, "", "lognormal by median and p99"},
		{"max_tokens", Dist{Kind: DistMaxTokens}, "", "the request's own max_tokens"},
		{"", Dist{}, "empty", "an empty flag says so"},
		{"-1", Dist{}, "whole number", "negative lengths are refused"},
		{"1.5", Dist{}, "whole number", "a constant length is whole"},
		{"1000001", Dist{}, "whole number", "over the bound"},
		{"uniform:9:3", Dist{}, "MIN ≤ MAX", "reversed bounds"},
		{"uniform:3", Dist{}, "two parameters", "one parameter missing"},
		{"uniform:1:2:3", Dist{}, "two parameters", "one parameter too many"},
		{"lognormal:0:5", Dist{}, "0 < MEDIAN", "the median of a lognormal is positive"},
		{"lognormal:10:5", Dist{}, "MEDIAN ≤ P99", "p99 below the median"},
		{"normal:NaN:1", Dist{}, "number of tokens", "NaN is refused"},
		{"normal:Inf:1", Dist{}, "number of tokens", "infinity is refused"},
		{"prompt:1:2", Dist{}, "delays", "prompt: is for durations only"},
		{"gamma:1:2", Dist{}, "unknown distribution", "an unknown kind is named"},
		{"50ms", Dist{}, "whole number", "a duration is not a length"},
	}
	for _, tt := range tests {
		got, err := ParseLengthDist(tt.in)
		if tt.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("ParseLengthDist(%q) error = %v, want one containing %q (%s)", tt.in, err, tt.errHas, tt.why)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseLengthDist(%q) = %+v, %v; want %+v (%s)", tt.in, got, err, tt.want, tt.why)
			continue
		}
		if back, err := ParseLengthDist(got.String()); err != nil || back != got {
			t.Errorf("ParseLengthDist(%q).String() = %q does not read back: %+v, %v", tt.in, got.String(), back, err)
		}
	}
}

func TestParseDurationDist(t *testing.T) {
	ms := float64(time.Millisecond)
	tests := []struct {
		in     string
		want   Dist
		errHas string
		why    string
	}{
		{"50ms", Dist{Kind: DistConst, A: 50 * ms, Duration: true}, "", "a bare duration is a constant"},
		{"0", Dist{Kind: DistConst, Duration: true}, "", "a bare 0 needs no unit"},
		{"uniform:10ms:30ms", Dist{Kind: DistUniform, A: 10 * ms, B: 30 * ms, Duration: true}, "", "uniform delays"},
		{"normal:50ms:10ms", Dist{Kind: DistNormal, A: 50 * ms, B: 10 * ms, Duration: true}, "", "normal delays"},
		{"lognormal:50ms:200ms", Dist{Kind: DistLognormal, A: 50 * ms, B: 200 * ms, Duration: true}, "", "lognormal by median and p99"},
		{"prompt:100us:20ms", Dist{Kind: DistPerPromptToken, A: 0.1 * ms, B: 20 * ms, Duration: true}, "", "per prompt token plus a constant"},
		{"50", Dist{}, "not a duration", "a duration needs a unit"},
		{"-5ms", Dist{}, "outside [0, 24h]", "negative delays are refused"},
		{"25h", Dist{}, "outside [0, 24h]", "over a day is refused"},
		{"lognormal:0s:1s", Dist{}, "0 < MEDIAN", "zero median"},
		{"uniform:2s:1s", Dist{}, "MIN ≤ MAX", "reversed bounds"},
		{"max_tokens", Dist{}, "not a duration", "max_tokens is for lengths"},
		{"normal:1ms", Dist{}, "two parameters", "sd missing"},
	}
	for _, tt := range tests {
		got, err := ParseDurationDist(tt.in)
		if tt.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("ParseDurationDist(%q) error = %v, want one containing %q (%s)", tt.in, err, tt.errHas, tt.why)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDurationDist(%q) = %+v, %v; want %+v (%s)", tt.in, got, err, tt.want, tt.why)
			continue
		}
		if back, err := ParseDurationDist(got.String()); err != nil || back != got {
			t.Errorf("ParseDurationDist(%q).String() = %q does not read back: %+v, %v", tt.in, got.String(), back, err)
		}
	}
}

// FuzzParseDist checks that neither parser panics, that what they accept
// is in range, and that String reads back to the same distribution.
func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"128", "uniform:64:256", "normal:128:32", "lognormal:50ms:200ms", "prompt:1ms:2ms", "max_tokens", "0", "normal:1e5:1e-3", "uniform::", ":", "1h1m1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, parse := range []func(string) (Dist, error){ParseLengthDist, ParseDurationDist} {
			d, err := parse(s)
			if err != nil {
				continue
			}
			if !(d.A >= 0 && d.B >= 0) || math.IsInf(d.A, 0) || math.IsInf(d.B, 0) {
				t.Fatalf("%q parsed to out-of-range %+v", s, d)
			}
			back, err := parse(d.String())
			if err != nil || back != d {
				t.Fatalf("%q → %+v → %q → %+v, %v", s, d, d.String(), back, err)
			}
			r := rng{s: 1}
			for range 8 {
				if v := d.sample(&r, 100); !(v >= 0) || math.IsInf(v, 0) {
					t.Fatalf("%q sampled %v", s, v)
				}
			}
		}
	})
}

// TestDistSample checks the drawn distributions by their quantiles, with a
// fixed generator seed (so the test is deterministic).
func TestDistSample(t *testing.T) {
	const n = 20000
	draw := func(d Dist, prompt int) []float64 {
		r := rng{s: 42}
		v := make([]float64, n)
		for i := range v {
			v[i] = d.sample(&r, prompt)
		}
		slices.Sort(v)
		return v
	}
	q := func(v []float64, p float64) float64 { return v[int(p*float64(len(v)-1))] }
	near := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol*want {
			t.Errorf("%s = %v, want %v ± %v%%", name, got, want, tol*100)
		}
	}
	u := draw(Dist{Kind: DistUniform, A: 10, B: 30}, 0)
	if u[0] < 10 || u[n-1] > 30 {
		t.Errorf("uniform[10,30] drew outside: %v … %v", u[0], u[n-1])
	}
	near("uniform median", q(u, 0.5), 20, 0.02)
	nm := draw(Dist{Kind: DistNormal, A: 100, B: 10}, 0)
	near("normal median", q(nm, 0.5), 100, 0.01)
	near("normal p84", q(nm, 0.8413), 110, 0.01)
	ln := draw(Dist{Kind: DistLognormal, A: 50, B: 200}, 0)
	near("lognormal median", q(ln, 0.5), 50, 0.03)
	near("lognormal p99", q(ln, 0.99), 200, 0.08)
	if v := (Dist{Kind: DistPerPromptToken, A: 2, B: 5}).sample(&rng{}, 10); v != 25 {
		t.Errorf("prompt:2:5 with 10 prompt tokens = %v, want 25", v)
	}
	clip := draw(Dist{Kind: DistNormal, A: 0, B: 10}, 0)
	if clip[0] != 0 {
		t.Errorf("normal clipped at 0 drew %v", clip[0])
	}
}

// FuzzCountPrompt checks the fast word count of plain JSON strings against
// decoding the string and counting its fields.
func FuzzCountPrompt(f *testing.F) {
	for _, s := range []string{`"a b"`, `"  x  "`, `"a\tb"`, `"é è"`, `"a\u2003b"`, `["a","b c"]`, `[1,2]`, `""`, `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := countPrompt(json.RawMessage(raw))
		var str string
		if json.Unmarshal([]byte(raw), &str) == nil {
			if want := len(strings.Fields(str)); got != want {
				t.Fatalf("countPrompt(%s) = %d, want %d", raw, got, want)
			}
		}
	})
}
