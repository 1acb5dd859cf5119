package cli

import (
	"slices"
	"testing"

	"aimeter/derived/metrics"
)

// TestTokenFigures checks the console lines of the streaming figures
// (metrics.StreamingOf computes them; its tests work them by hand).
func TestTokenFigures(t *testing.T) {
	ms := int64(1e6)
	one := func(v int64) metrics.Stats {
		return metrics.Stats{Count: 1, Min: v, Mean: v, P50: v, P90: v, P95: v, P99: v, P999: v, Max: v}
	}
	for _, tc := range []struct {
		name string
		s    *metrics.Streaming
		want []string
	}{
		{"not streamed: no lines", nil, nil},
		{"one sample: gaps of 1, 2 and 3 ms",
			&metrics.Streaming{StreamedSamples: 1, ITLNs: metrics.Stats{Count: 3, Min: ms, Mean: 2 * ms, P50: 2 * ms, P90: 3 * ms, P95: 3 * ms, P99: 3 * ms, P999: 3 * ms, Max: 3 * ms},
				E2ENs: one(10 * ms), OutputTokens: 4, SpanNs: 2e9, OutputTokensPerS: 2},
			[]string{
				"  ITL p50 2.000 ms, p90 3.000 ms, p99 3.000 ms (3 gaps between tokens of 1 streamed samples)",
				"  E2E latency p50 10.00 ms, p90 10.00 ms, p99 10.00 ms (1 successful samples)",
				"  Output tokens/s 2.0 (4 tokens in 2.000 s)",
			}},
		{"single-token samples: no gaps",
			&metrics.Streaming{StreamedSamples: 1, E2ENs: one(3 * ms), OutputTokens: 1, SpanNs: 1e9, OutputTokensPerS: 1},
			[]string{
				"  ITL none (0 gaps between tokens of 1 streamed samples)",
				"  E2E latency p50 3.000 ms, p90 3.000 ms, p99 3.000 ms (1 successful samples)",
				"  Output tokens/s 1.0 (1 tokens in 1.000 s)",
			}},
		{"an empty span: no rate",
			&metrics.Streaming{StreamedSamples: 1, E2ENs: one(3 * ms), OutputTokens: 1},
			[]string{
				"  ITL none (0 gaps between tokens of 1 streamed samples)",
				"  E2E latency p50 3.000 ms, p90 3.000 ms, p99 3.000 ms (1 successful samples)",
			}},
	} {
		if got := tokenFigures(tc.s); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
