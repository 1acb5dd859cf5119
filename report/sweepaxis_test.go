package report

import (
	"fmt"
	"strings"
	"testing"
)

func TestFitAxis(t *testing.T) {
	for _, c := range []struct {
		vals   []float64
		kind   int
		ticks  string // the tick labels
		reason string
	}{
		{[]float64{157, 178, 190, 199}, axisLinear, "150 160 170 180 190 200",
			"tokens/s per user from 157 to 199 (the issue's sweep): fitted to 150–200 in steps of 10, not pinned at 0"},
		{[]float64{197.05, 199.54, 199.73}, axisLinear, "197 198 199 200", "a range of under 3: steps of 1, four ticks"},
		{[]float64{199.69, 199.73}, axisLinear, "199.69 199.70 199.71 199.72 199.73",
			"a very narrow range: a step of 0.01, every tick with the decimals the step needs"},
		{[]float64{195.1, 349.5, 663.1, 1283, 10005.1}, axisLog10, "200 500 1,000 2,000 5,000 10,000",
			"from 195 to 10,005 (51×): logarithmic, 1-2-5 ticks, thousands grouped"},
		{[]float64{101, 1111}, axisLog10, "100 200 500 1,000", "just over 10×: logarithmic, from the nice value below 101"},
		{[]float64{100, 1000}, axisLinear, "0 200 400 600 800 1,000", "exactly 10×: linear (more than 10× is logarithmic)"},
		{[]float64{0, 50, 5000}, axisLinear, "0 1,000 2,000 3,000 4,000 5,000", "a zero value: never logarithmic"},
		{[]float64{42}, axisLinear, "36 38 40 42 44 46 48", "one value: ±10 % around it (37.8–46.2), in steps of 2"},
		{[]float64{0}, axisLinear, "0.0 0.2 0.4 0.6 0.8 1.0", "one zero: 0 to 1"},
		{[]float64{1e-4, 5e-3}, axisLog10, "0.0001 0.0002 0.0005 0.001 0.002 0.005", "small values: 3 significant digits, no exponent"},
		{[]float64{1, 1e6}, axisLog10, "1 10 100 1,000 10,000 100,000 1,000,000", "six decades: powers of 10 only, at most 10 ticks"},
	} {
		a := fitAxis(c.vals, 0, 1000)
		var got []string
		for _, v := range a.ticks {
			got = append(got, a.label(v))
		}
		if a.kind != c.kind || strings.Join(got, " ") != c.ticks {
			t.Errorf("%v: kind %d, ticks %q; want kind %d, %q: %s", c.vals, a.kind, strings.Join(got, " "), c.kind, c.ticks, c.reason)
		}
		if len(a.ticks) < minTicks {
			t.Errorf("%v: %d ticks, want at least %d", c.vals, len(a.ticks), minTicks)
		}
		for _, v := range c.vals {
			if p := a.px(v); p < axisPad-1e-9 || p > 1000-axisPad+1e-9 {
				t.Errorf("%v: value %g at %g px, outside the axis (0–1000 less the %d px pad)", c.vals, v, p, axisPad)
			}
		}
	}
}

func TestConcurrencyAxis(t *testing.T) {
	for _, c := range []struct {
		vals   []float64
		ticks  string
		reason string
	}{
		{[]float64{1, 2, 4, 8}, "[1 2 4 8]", "powers of 2"},
		{[]float64{1, 3, 4, 7, 11, 20, 33}, "[1 2 4 8 16 32]", "Endpoints' points: ticks at the powers of 2 between them"},
		{[]float64{1, 4096}, "[1 4 16 64 256 1024 4096]", "13 powers: every other one"},
		{[]float64{3, 3}, "[3]", "one concurrency: itself"},
		{[]float64{5, 7}, "[5 7]", "no power of 2 between: the concurrencies themselves"},
	} {
		a := concurrencyAxis(c.vals, 0, 600)
		if got := fmt.Sprint(a.ticks); got != c.ticks {
			t.Errorf("%v: ticks %s, want %s: %s", c.vals, got, c.ticks, c.reason)
		}
	}
}
