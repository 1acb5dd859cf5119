package store

import (
	"math"
	"testing"
)

// TestUnitOf: the unit of a flattened figure of result.json comes from its
// name, and a distribution's count has none (it was shown in ns).
func TestUnitOf(t *testing.T) {
	for _, tc := range []struct{ name, want, why string }{
		{"latency_ns.p99", "ns", "a percentile of a latency in ns"},
		{"latency_ns.count", "", "how many latencies, not a time"},
		{"tokens.ttft_ns.count", "", "how many first-token times"},
		{"tokens.ttft_ns.mean", "ns", "a mean first-token time"},
		{"throughput.samples_per_s", "1/s", "a rate"},
		{"power.avg_w", "W", "a power"},
		{"power.energy_j", "J", "an energy"},
		{"samples.issued", "", "a count of samples"},
	} {
		if got := unitOf(tc.name); got != tc.want {
			t.Errorf("%s (%s): unit %q, want %q", tc.name, tc.why, got, tc.want)
		}
	}
}

// TestShiftedSums: the one-pass mean and sample standard deviation of the
// stored latency distributions, against hand-worked values.
func TestShiftedSums(t *testing.T) {
	for _, tc := range []struct {
		xs       []int64
		mean, sd float64 // sd < 0: undefined (NaN)
		why      string
	}{
		{nil, 0, -1, "no values: mean 0 as stored before, no deviation"},
		{[]int64{7}, 7, -1, "one value: the sample deviation needs two"},
		{[]int64{2, 4, 4, 4, 5, 5, 7, 9}, 5, math.Sqrt(32.0 / 7), "the textbook set: squared deviations sum to 32 over n − 1 = 7"},
		{[]int64{1e12 + 1, 1e12 + 2, 1e12 + 3, 1e12 + 4}, 1e12 + 2.5, math.Sqrt(5.0 / 3), "large values close together lose nothing to cancellation (shifted by the first)"},
		{[]int64{5e9, 5e9, 5e9}, 5e9, 0, "equal values: zero, never a negative variance's NaN"},
	} {
		var w shiftedSums
		for _, x := range tc.xs {
			w.add(x)
		}
		if got := w.mean(); got != tc.mean {
			t.Errorf("%s: mean %v, want %v", tc.why, got, tc.mean)
		}
		got := w.stddev()
		switch {
		case tc.sd < 0 && !math.IsNaN(got):
			t.Errorf("%s: stddev %v, want NaN", tc.why, got)
		case tc.sd >= 0 && math.Abs(got-tc.sd) > 1e-12*max(1, tc.sd):
			t.Errorf("%s: stddev %v, want %v", tc.why, got, tc.sd)
		}
	}
}
