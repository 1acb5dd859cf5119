// Package steady finds the steady-state window of a run, by MLPerf
// Endpoints' super-pass method (SuperPass) and by the in-flight ratio that
// SGLang's bench_serving uses (InFlight), and measures a run over a window
// (Measure), so that a report gives every metric over the window and over
// the whole run side by side.
package steady

import (
	"slices"

	"aimeter/loadgen"
	"aimeter/stats"
)

// Metrics are a run's figures over a set of its samples. Latencies are
// from the scheduled time, percentiles by LoadGen's rule (stats.Percentile)
// over the successful samples; failures and lost samples are counted, never
// timed.
type Metrics struct {
	Samples, Completed, Failed, Lost int
	// SpanNs is the time the rates are per: the window's length.
	SpanNs int64
	// CompletedPerSec is the successful samples per second of SpanNs;
	// OutputTokensPerSec their output tokens per second.
	CompletedPerSec, OutputTokensPerSec float64
	// Latency, TTFT and TPOT are the p50, p90 and p99, in ns (TPOT per
	// token: (completion − first token)/(tokens − 1)); TTFT and TPOT are
	// zero when no sample reported a first token.
	Latency, TTFT, TPOT [3]int64
	HasTokens           bool
}

// Percentiles are the percentiles of Metrics' arrays.
var Percentiles = [3]float64{0.5, 0.9, 0.99}

// Measure measures the records whose seq id is in seqs (all when seqs is
// nil) over a span of spanNs nanoseconds.
func Measure(recs []loadgen.Record, seqs []uint64, spanNs int64) Metrics {
	// The seq ids to keep, one bit each from the least (issue 43: a map
	// took about 40 bytes a record of a long run's report).
	// The seq ids of a pass are dense; scattered ones (bits for more
	// than a few words a seq id) go into a map instead.
	var lo uint64
	var bits []uint64
	var scattered map[uint64]bool
	if len(seqs) > 0 {
		lo = slices.Min(seqs)
		if words := (slices.Max(seqs)-lo)/64 + 1; words <= 4*uint64(len(seqs))+1024 {
			bits = make([]uint64, words)
			for _, s := range seqs {
				bits[(s-lo)/64] |= 1 << ((s - lo) % 64)
			}
		} else {
			scattered = make(map[uint64]bool, len(seqs))
			for _, s := range seqs {
				scattered[s] = true
			}
		}
	}
	keep := func(seq uint64) bool {
		switch {
		case seqs == nil:
			return true
		case scattered != nil:
			return scattered[seq]
		}
		i := seq - lo
		return seq >= lo && i/64 < uint64(len(bits)) && bits[i/64]&(1<<(i%64)) != 0
	}
	m := Metrics{SpanNs: spanNs}
	var lat, ttft, tpot []int64
	tokens := int64(0)
	for _, r := range recs {
		if !keep(r.SeqID) {
			continue
		}
		m.Samples++
		switch r.Status {
		case loadgen.StatusError:
			m.Failed++
			continue
		case loadgen.StatusLost:
			m.Lost++
			continue
		}
		if r.CompletedNs == loadgen.NoTime {
			m.Lost++
			continue
		}
		m.Completed++
		tokens += r.Tokens
		lat = append(lat, r.CompletedNs-r.ScheduledNs)
		if r.FirstTokenNs != loadgen.NoTime {
			ttft = append(ttft, r.FirstTokenNs-r.ScheduledNs)
			if r.Tokens > 1 {
				tpot = append(tpot, (r.CompletedNs-r.FirstTokenNs)/(r.Tokens-1))
			}
		}
	}
	if spanNs > 0 {
		m.CompletedPerSec = float64(m.Completed) / (float64(spanNs) / 1e9)
		m.OutputTokensPerSec = float64(tokens) / (float64(spanNs) / 1e9)
	}
	m.HasTokens = len(ttft) > 0
	for _, v := range [][]int64{lat, ttft, tpot} {
		slices.Sort(v)
	}
	for i, p := range Percentiles {
		m.Latency[i] = stats.Percentile(lat, p)
		m.TTFT[i] = stats.Percentile(ttft, p)
		m.TPOT[i] = stats.Percentile(tpot, p)
	}
	return m
}
