// Package steady finds the steady-state window of a run, by MLPerf
// Endpoints' super-pass method (SuperPass) and by the in-flight ratio that
// SGLang's bench_serving uses (InFlight), and measures a run over a window
// (Measure), so that a report gives every metric over the window and over
// the whole run side by side. Each analysis reads a run's records by
// position and by column, a loadgen.RecordAccess (InFlightTable,
// MeasureTable, SuperPassTable), or, for the same results, a
// []loadgen.Record.
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
// nil) over a span of spanNs nanoseconds: MeasureTable of the records.
func Measure(recs []loadgen.Record, seqs []uint64, spanNs int64) Metrics {
	return MeasureTable(tableOf(recs), seqs, spanNs)
}

// MeasureTable measures the records of t whose seq id is in seqs (all when
// seqs is nil) over a span of spanNs nanoseconds. It holds one latency a
// successful record at a time (each kind in turn), and a bit a seq id.
func MeasureTable(t loadgen.RecordAccess, seqs []uint64, spanNs int64) Metrics {
	keep := NewSeqSet(seqs)
	m := Metrics{SpanNs: spanNs}
	tokens := int64(0)
	nTTFT, nTPOT := 0, 0
	for c := range t.Blocks(scanBlock) {
		for k, seq := range c.SeqID {
			if !keep.Has(seq) {
				continue
			}
			m.Samples++
			switch c.Status[k] {
			case loadgen.StatusError:
				m.Failed++
				continue
			case loadgen.StatusLost:
				m.Lost++
				continue
			}
			if c.CompletedNs[k] == loadgen.NoTime {
				m.Lost++
				continue
			}
			m.Completed++
			tokens += c.Tokens[k]
			if c.FirstTokenNs[k] != loadgen.NoTime {
				nTTFT++
				if c.Tokens[k] > 1 {
					nTPOT++
				}
			}
		}
	}
	if spanNs > 0 {
		m.CompletedPerSec = float64(m.Completed) / (float64(spanNs) / 1e9)
		m.OutputTokensPerSec = float64(tokens) / (float64(spanNs) / 1e9)
	}
	m.HasTokens = nTTFT > 0
	// Each kind of latency of the successful kept records, sorted, one
	// kind at a time.
	values := func(n int, of func(c *loadgen.RecordColumns, k int) (int64, bool)) []int64 {
		v := make([]int64, 0, n)
		for c := range t.Blocks(scanBlock) {
			for k, seq := range c.SeqID {
				if c.Status[k] == loadgen.StatusError || c.Status[k] == loadgen.StatusLost || c.CompletedNs[k] == loadgen.NoTime || !keep.Has(seq) {
					continue
				}
				if x, ok := of(c, k); ok {
					v = append(v, x)
				}
			}
		}
		slices.Sort(v)
		return v
	}
	lat := values(m.Completed, func(c *loadgen.RecordColumns, k int) (int64, bool) {
		return c.CompletedNs[k] - c.ScheduledNs[k], true
	})
	for i, p := range Percentiles {
		m.Latency[i] = stats.Percentile(lat, p)
	}
	ttft := values(nTTFT, func(c *loadgen.RecordColumns, k int) (int64, bool) {
		return c.FirstTokenNs[k] - c.ScheduledNs[k], c.FirstTokenNs[k] != loadgen.NoTime
	})
	for i, p := range Percentiles {
		m.TTFT[i] = stats.Percentile(ttft, p)
	}
	tpot := values(nTPOT, func(c *loadgen.RecordColumns, k int) (int64, bool) {
		return (c.CompletedNs[k] - c.FirstTokenNs[k]) / max(c.Tokens[k]-1, 1), c.FirstTokenNs[k] != loadgen.NoTime && c.Tokens[k] > 1
	})
	for i, p := range Percentiles {
		m.TPOT[i] = stats.Percentile(tpot, p)
	}
	return m
}
