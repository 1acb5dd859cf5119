package metrics

import (
	"slices"

	"aimeter/loadgen"
	"aimeter/stats"
)

// Stats summarise a distribution of durations, ns: LoadGen's percentiles
// (stats.Percentile, the value at index trunc(n·p) of the sorted values)
// and the mean truncated to whole ns. result.json holds it as it is.
type Stats struct {
	Count uint64 `json:"count"`
	Min   int64  `json:"min"`
	Mean  int64  `json:"mean"`
	P50   int64  `json:"p50"`
	P90   int64  `json:"p90"`
	P95   int64  `json:"p95"`
	P99   int64  `json:"p99"`
	P999  int64  `json:"p99_9"`
	Max   int64  `json:"max"`
}

// StatsOf summarises sorted, which must be in ascending order; the zero
// Stats for none.
func StatsOf(sorted []int64) Stats {
	n := len(sorted)
	if n == 0 {
		return Stats{}
	}
	var sum float64
	for _, v := range sorted {
		sum += float64(v)
	}
	p := func(q float64) int64 { return stats.Percentile(sorted, q) }
	return Stats{Count: uint64(n), Min: sorted[0], Mean: int64(sum / float64(n)), Max: sorted[n-1],
		P50: p(0.50), P90: p(0.90), P95: p(0.95), P99: p(0.99), P999: p(0.999)}
}

// Streaming are the token figures of a streamed run's reported pass, over
// its successful samples.
type Streaming struct {
	// StreamedSamples counts the successful samples with token times.
	StreamedSamples int `json:"streamed_samples"`
	// ITLNs is the inter-token latency: every gap between consecutive
	// token arrivals of every streamed sample (a sample of n tokens gives
	// n − 1 gaps; Count is 0 when no sample has two).
	ITLNs Stats `json:"itl_ns"`
	// E2ENs is the end-to-end latency of every successful sample,
	// streamed or not: completed − scheduled, as LoadGen measures a sample.
	E2ENs Stats `json:"e2e_ns"`
	// OutputTokens are the successful samples' output tokens.
	OutputTokens int64 `json:"output_tokens"`
	// SpanNs is the pass's length, from the start of issuing to its end.
	SpanNs int64 `json:"span_ns"`
	// OutputTokensPerS is OutputTokens over SpanNs; 0 for an empty span.
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
}

// StreamingOf computes the token figures of res's reported pass (the last
// reported one) from its records and token times. Nil for a run without a
// reported pass or whose successful samples of that pass have no token
// times (not streamed).
func StreamingOf(res *loadgen.Result) *Streaming {
	if res == nil {
		return nil
	}
	pass := res.ReportedPass()
	if pass < 0 {
		return nil
	}
	info := res.Passes[pass]
	// Most runs stream no tokens: say so before reading every record.
	any := false
	for seq := range res.TokenTimes() {
		if seq >= info.FirstSeq && seq < info.EndSeq {
			any = true
			break
		}
	}
	if !any {
		return nil
	}
	// The successful samples, one bit each from info.FirstSeq: the
	// figures are computed in passes over the records and token times
	// (StatsOfSeq), never holding a value per sample or per token, so that
	// a long run's report takes no more memory than its run (issue 43).
	// The bits grow with the records: a pass generated on demand spans
	// every sample it might have issued (billions for a fixed-concurrency
	// run), not the ones it did.
	var ok []uint64
	isOK := func(seq uint64) bool {
		if seq < info.FirstSeq || seq >= info.EndSeq {
			return false
		}
		i := seq - info.FirstSeq
		return i/64 < uint64(len(ok)) && ok[i/64]&(1<<(i%64)) != 0
	}
	s := &Streaming{SpanNs: info.EndNs}
	for rec := range res.PassRecords(pass) {
		if rec.Status != loadgen.StatusOK {
			continue
		}
		if rec.SeqID >= info.FirstSeq && rec.SeqID < info.EndSeq {
			i := rec.SeqID - info.FirstSeq
			if w := int(i / 64); w >= len(ok) {
				ok = slices.Grow(ok, w+1-len(ok))[:w+1]
			}
			ok[i/64] |= 1 << (i % 64)
		}
		s.OutputTokens += rec.Tokens
	}
	for seq := range res.TokenTimes() {
		if isOK(seq) {
			s.StreamedSamples++
		}
	}
	if s.StreamedSamples == 0 {
		return nil
	}
	s.ITLNs = StatsOfSeq(func(yield func(int64) bool) {
		for seq, times := range res.TokenTimes() {
			if !isOK(seq) {
				continue
			}
			for j := 1; j < len(times); j++ {
				if !yield(times[j] - times[j-1]) {
					return
				}
			}
		}
	})
	s.E2ENs = StatsOfSeq(func(yield func(int64) bool) {
		for rec := range res.PassRecords(pass) {
			if rec.Status == loadgen.StatusOK && !yield(rec.CompletedNs-rec.ScheduledNs) {
				return
			}
		}
	})
	if s.SpanNs > 0 {
		s.OutputTokensPerS = float64(s.OutputTokens) / (float64(s.SpanNs) / 1e9)
	}
	return s
}
