package store

import "testing"

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
