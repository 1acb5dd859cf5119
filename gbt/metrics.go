package gbt

import (
	"math"
	"math/bits"
	"slices"

	"aimeter/stats"
)

// nsPerMs converts nanoseconds to the milliseconds of GB-7.6.2-unit.
const nsPerMs = 1e6

// nsPerSecond converts nanoseconds to the seconds of throughput (IN-01).
const nsPerSecond = 1e9

// bytesPerMB is the megabyte of elasticity and pressure tolerance: 10^6
// bytes (IN-76 asks that the choice be stated).
const bytesPerMB = 1e6

// Stat summarises one time metric over the samples of a run, in milliseconds
// (GB-7.6.2-unit). It is computed exactly from the nanosecond values: they
// are sorted once and P50, P90 and P99 are the elements at index
// trunc(N×p) of the ascending order — the rule of LoadGen's
// PerformanceSummary and of stats.Percentile, with no interpolation. Mean is
// the exact integer sum divided by N. All fields are 0 when N is 0.
type Stat struct {
	N    int     `json:"n"`    // number of values
	Min  float64 `json:"min"`  // smallest value, ms
	Mean float64 `json:"mean"` // exact mean, ms
	P50  float64 `json:"p50"`  // element trunc(N×0.50) of the ascending order, ms
	P90  float64 `json:"p90"`  // element trunc(N×0.90), ms
	P99  float64 `json:"p99"`  // element trunc(N×0.99), ms
	Max  float64 `json:"max"`  // largest value, ms
}

// StatOf returns the Stat of nanosecond values. Negative values are taken as
// absolute values (GB-7.6.2-T16-note). The slice is reordered (sorted in
// place) but not otherwise changed, except that negative entries are replaced
// by their absolute values.
func StatOf(ns []int64) Stat {
	for i, v := range ns {
		ns[i] = absNs(v)
	}
	sortNonNegative(ns, nil)
	return statOfSorted(ns)
}

// statOfSorted is StatOf for values already non-negative and sorted.
func statOfSorted(sorted []int64) Stat {
	n := len(sorted)
	if n == 0 {
		return Stat{}
	}
	// The exact sum of n non-negative int64 values fits in 128 bits.
	var hi, lo uint64
	for _, v := range sorted {
		var c uint64
		lo, c = bits.Add64(lo, uint64(v), 0)
		hi += c
	}
	sum := float64(hi)*(1<<64) + float64(lo)
	return Stat{
		N:    n,
		Min:  float64(sorted[0]) / nsPerMs,
		Mean: sum / float64(n) / nsPerMs,
		P50:  float64(stats.Percentile(sorted, 0.50)) / nsPerMs,
		P90:  float64(stats.Percentile(sorted, 0.90)) / nsPerMs,
		P99:  float64(stats.Percentile(sorted, 0.99)) / nsPerMs,
		Max:  float64(sorted[n-1]) / nsPerMs,
	}
}

// absNs is |v|, saturating at math.MaxInt64 for math.MinInt64.
func absNs(v int64) int64 {
	if v >= 0 {
		return v
	}
	if v == math.MinInt64 {
		return math.MaxInt64
	}
	return -v
}

// radixBits is the digit width of the LSD radix sort: values spanning less
// than 2^26 ns (67 ms) need two passes, less than 2^39 ns (9 minutes)
// three. Measured on 10 M durations up to 20 ms, 13 bits sort about 20 %
// faster than 11 (fewer passes outweigh counters that leave the L1 cache).
const radixBits = 13

// radixMin is the length below which the sorts fall back to the standard
// library.
const radixMin = 1 << 12

// sortNonNegative sorts v ascending (any int64 values, despite the name: the
// metrics only sort absolute values). Large slices use an LSD radix sort
// (linear time; 10 M durations in about 0.1–0.2 s, where a comparison sort
// takes close to a second) with tmp as the second buffer; tmp may be nil or
// short, and is then allocated.
func sortNonNegative(v, tmp []int64) {
	if len(v) < radixMin {
		slices.Sort(v)
		return
	}
	radixSort(v, nil, tmp, nil)
}

// sortPairs sorts keys ascending and moves vals along (a stable sort by
// key); tmpK and tmpV are scratch buffers as for sortNonNegative.
func sortPairs(keys, vals, tmpK, tmpV []int64) {
	if len(keys) < radixMin {
		idx := make([]int, len(keys))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case keys[a] < keys[b]:
				return -1
			case keys[a] > keys[b]:
				return 1
			}
			return 0
		})
		k2, v2 := make([]int64, len(keys)), make([]int64, len(keys))
		for i, j := range idx {
			k2[i], v2[i] = keys[j], vals[j]
		}
		copy(keys, k2)
		copy(vals, v2)
		return
	}
	radixSort(keys, vals, tmpK, tmpV)
}

// radixSort is a stable LSD radix sort of keys, relative to their minimum so
// that negative keys and narrow ranges need no extra passes; vals (nil or as
// long as keys) move with their keys.
func radixSort(keys, vals, tmpK, tmpV []int64) {
	n := len(keys)
	if n == 0 {
		return
	}
	if cap(tmpK) < n {
		tmpK = make([]int64, n)
	}
	tmpK = tmpK[:n]
	if vals != nil {
		if cap(tmpV) < n {
			tmpV = make([]int64, n)
		}
		tmpV = tmpV[:n]
	}
	lo, hi := keys[0], keys[0]
	for _, x := range keys {
		lo, hi = min(lo, x), max(hi, x)
	}
	base := uint64(lo)
	// uint64(x) − base is x − lo exactly, for every x ≥ lo.
	const maxDigits = (64 + radixBits - 1) / radixBits
	const mask = 1<<radixBits - 1
	digits := (bits.Len64(uint64(hi)-base) + radixBits - 1) / radixBits
	var count [maxDigits][1 << radixBits]int
	for _, x := range keys {
		u := uint64(x) - base
		for d := range digits {
			count[d][(u>>(d*radixBits))&mask]++
		}
	}
	srcK, dstK, srcV, dstV := keys, tmpK, vals, tmpV
	for d := range digits {
		c := &count[d]
		shift := uint(d * radixBits)
		// A digit that is the same for every key needs no pass.
		if c[((uint64(srcK[0])-base)>>shift)&mask] == n {
			continue
		}
		sum := 0
		for i := range c {
			c[i], sum = sum, sum+c[i]
		}
		if srcV == nil {
			for _, x := range srcK {
				k := ((uint64(x) - base) >> shift) & mask
				dstK[c[k]] = x
				c[k]++
			}
		} else {
			for i, x := range srcK {
				k := ((uint64(x) - base) >> shift) & mask
				dstK[c[k]] = x
				dstV[c[k]] = srcV[i]
				c[k]++
			}
			srcV, dstV = dstV, srcV
		}
		srcK, dstK = dstK, srcK
	}
	if &srcK[0] != &keys[0] {
		copy(keys, srcK)
		if vals != nil {
			copy(vals, srcV)
		}
	}
}
