package netsut

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Durations summarises a distribution of durations. Percentiles are the
// upper bounds of log-spaced buckets (at most 1/8 too high).
type Durations struct {
	// Count is the number of values.
	Count uint64
	// P50, P99 and Max are the median, the 99th percentile and the largest.
	P50, P99, Max time.Duration
}

// Histogram counts non-negative nanosecond durations in buckets of 8 per
// power of two, with atomic counters: Record is safe from any goroutine and
// allocates nothing. The zero value is empty and ready to use.
type Histogram struct {
	counts [64 * 8]atomic.Uint64
	max    atomic.Int64
}

func bucketOf(v int64) int {
	if v < 8 {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - 4 // v >> e is in [8, 16)
	return (e+1)*8 + int(uint64(v)>>e) - 8
}

// bucketTop is the largest value of bucket i.
func bucketTop(i int) int64 {
	if i < 8 {
		return int64(i)
	}
	e := i/8 - 1
	m := int64(i%8 + 8)
	return (m+1)<<e - 1
}

// Record counts one duration in nanoseconds (a negative one as 0).
func (h *Histogram) Record(v int64) {
	v = max(v, 0)
	h.counts[bucketOf(v)].Add(1)
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			return
		}
	}
}

// Summary returns the count, the median, the 99th percentile and the
// largest value recorded so far.
func (h *Histogram) Summary() Durations {
	var n uint64
	var counts [len(h.counts)]uint64
	for i := range h.counts {
		counts[i] = h.counts[i].Load()
		n += counts[i]
	}
	d := Durations{Count: n, Max: time.Duration(h.max.Load())}
	if n == 0 {
		return d
	}
	at := func(q float64) time.Duration {
		rank := uint64(q*float64(n-1)) + 1
		var seen uint64
		for i, c := range counts {
			seen += c
			if seen >= rank {
				return min(time.Duration(bucketTop(i)), d.Max)
			}
		}
		return d.Max
	}
	d.P50, d.P99 = at(0.50), at(0.99)
	return d
}
