package metrics

import (
	"iter"
	"math/bits"
	"slices"

	"aimeter/stats"
)

// seqBuckets is the number of buckets of one counting pass of StatsOfSeq,
// and seqCollect the most values of a target's bucket it collects and
// sorts rather than counting them again in finer buckets.
const (
	seqBuckets = 1 << 16
	seqCollect = 1 << 16
)

// statsPercentiles are the quantiles of Stats, in the order of its fields.
var statsPercentiles = [...]float64{0.50, 0.90, 0.95, 0.99, 0.999}

// StatsOfSeq is StatsOf of the values values yields, sorted, computed
// without holding them: values is read several times (once for the count,
// extremes and sum, then once for each level of counting buckets that
// narrows down the values at the percentiles' ranks, at most five, and
// once to collect the few values of the narrowed buckets), and must
// yield the same values each time. The figures are exactly StatsOf's:
// the percentiles are the values at the same ranks, and the mean, which
// StatsOf sums as float64 in ascending order, is the exact integer sum
// over the count whenever every partial sum is below 2^53, as it is for
// values that are not negative and sum below 2^53 (104 days of ns);
// otherwise the values are collected and sorted.
func StatsOfSeq(values iter.Seq[int64]) Stats {
	var n int
	var lo, hi, sum int64
	exactSum := true
	for v := range values {
		if n == 0 {
			lo, hi = v, v
		}
		lo, hi = min(lo, v), max(hi, v)
		var carry uint64
		var s uint64
		s, carry = bits.Add64(uint64(sum), uint64(v), 0)
		if v < 0 || carry != 0 || s >= 1<<53 {
			exactSum = false
		}
		sum = int64(s)
		n++
	}
	if n == 0 {
		return Stats{}
	}
	if !exactSum {
		all := make([]int64, 0, n)
		for v := range values {
			all = append(all, v)
		}
		slices.Sort(all)
		return StatsOf(all)
	}
	st := Stats{Count: uint64(n), Min: lo, Max: hi, Mean: int64(float64(sum) / float64(n))}
	var got [len(statsPercentiles)]int64
	ranks := make([]int, len(statsPercentiles))
	for k, p := range statsPercentiles {
		ranks[k] = stats.PercentileRank(n, p)
	}
	selectSeq(values, n, lo, hi, ranks, got[:])
	st.P50, st.P90, st.P95, st.P99, st.P999 = got[0], got[1], got[2], got[3], got[4]
	return st
}

// seqTarget is the search for the value of one rank: it lies in [lo, hi]
// at rank rank among the values in that range.
type seqTarget struct {
	lo, hi  int64
	rank    int
	count   int // values in [lo, hi]
	counts  []int
	shift   uint
	collect []int64
	done    bool
}

// selectSeq sets out[k] to the value at rank ranks[k] of the n values
// of values sorted, all of which lie in [lo, hi].
func selectSeq(values iter.Seq[int64], n int, lo, hi int64, ranks []int, out []int64) {
	ts := make([]seqTarget, len(ranks))
	for k, r := range ranks {
		ts[k] = seqTarget{lo: lo, hi: hi, rank: r, count: n}
	}
	for {
		pending := false
		for k := range ts {
			t := &ts[k]
			switch {
			case t.done:
			case t.lo == t.hi:
				out[k], t.done = t.lo, true
			case t.count <= seqCollect:
				t.collect = make([]int64, 0, t.count)
				pending = true
			default:
				width := uint64(t.hi - t.lo)
				t.shift = uint(max(0, bits.Len64(width)-16))
				t.counts = make([]int, seqBuckets)
				pending = true
			}
		}
		if !pending {
			return
		}
		for v := range values {
			for k := range ts {
				t := &ts[k]
				if t.done || v < t.lo || v > t.hi {
					continue
				}
				if t.collect != nil {
					t.collect = append(t.collect, v)
				} else {
					t.counts[uint64(v-t.lo)>>t.shift]++
				}
			}
		}
		for k := range ts {
			t := &ts[k]
			switch {
			case t.done:
			case t.collect != nil:
				slices.Sort(t.collect)
				out[k], t.done, t.collect = t.collect[t.rank], true, nil
			default:
				below := 0
				for b, c := range t.counts {
					if below+c > t.rank {
						blo := t.lo + int64(uint64(b)<<t.shift)
						bhi := t.hi
						if end := uint64(b+1) << t.shift; end-1 < uint64(t.hi-t.lo) {
							bhi = t.lo + int64(end-1)
						}
						t.lo, t.hi, t.rank, t.count = blo, bhi, t.rank-below, c
						break
					}
					below += c
				}
				t.counts = nil
			}
		}
	}
}
