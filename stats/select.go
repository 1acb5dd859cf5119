package stats

import (
	"math/bits"
	"slices"
)

// SelectRanks reorders values in place so that values[r], for every rank r
// in ranks (indexes into values, in any order, repeats allowed), is the
// element that sorting values ascending would put at r: what
// Percentile, Min and Max read, in O(n) expected time instead of a sort's
// O(n log n). The other elements are left in no particular order. Ranks
// outside [0, len(values)) are ignored.
//
// It partitions around medians of three elements at pseudo-random
// places and falls back to sorting a part
// that does not shrink fast enough, so that no input makes it slower than
// a sort.
func SelectRanks(values []int64, ranks []int) {
	rs := make([]int, 0, len(ranks))
	for _, r := range ranks {
		if r >= 0 && r < len(values) {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return
	}
	slices.Sort(rs)
	rs = slices.Compact(rs)
	selectRanks(values, 0, rs, 2*bits.Len(uint(len(values))))
}

// PercentileRank is the index Percentile reads for p in a slice of n
// values, or -1 when it reads none (n = 0) or p is outside [0, 1), where
// Percentile panics: the rank to give SelectRanks before Percentile.
func PercentileRank(n int, p float64) int {
	if n == 0 || !(p >= 0 && p < 1) {
		return -1
	}
	if i := int(float64(float64(n) * p)); i < n {
		return i
	}
	return -1
}

// selectRanks is SelectRanks of v, whose first element is element off of
// the whole slice, for ranks (sorted, within [off, off+len(v))); depth is
// how many more partitions it may make before it sorts.
func selectRanks(v []int64, off int, ranks []int, depth int) {
	seed := uint64(len(v))
	for len(ranks) > 0 {
		if len(v) <= 16 || depth == 0 {
			slices.Sort(v)
			return
		}
		depth--
		// Three elements at pseudo-random places (a fixed sequence: the
		// result never depends on it, only the time): runs and saw teeth,
		// which latencies in issue order often are, pick no bad pivot.
		seed = seed*6364136223846793005 + 1442695040888963407
		n := uint64(len(v))
		p := medianOfThree(v[(seed>>33)%n], v[(seed>>13)%n], v[(seed^seed>>29)%n])
		// Three-way partition: v[:lt] < p, v[lt:gt] == p, v[gt:] > p.
		lt, i, gt := 0, 0, len(v)
		for i < gt {
			switch x := v[i]; {
			case x < p:
				v[lt], v[i] = v[i], v[lt]
				lt++
				i++
			case x > p:
				gt--
				v[gt], v[i] = v[i], v[gt]
			default:
				i++
			}
		}
		// The ranks below, among and above the pivot's copies.
		a := sortSearch(ranks, off+lt)
		b := sortSearch(ranks, off+gt)
		below, above := ranks[:a], ranks[b:]
		// Recurse into the smaller side, loop on the larger.
		if lt < len(v)-gt {
			selectRanks(v[:lt], off, below, depth)
			v, off, ranks = v[gt:], off+gt, above
		} else {
			selectRanks(v[gt:], off+gt, above, depth)
			v, ranks = v[:lt], below
		}
	}
}

// sortSearch is the index of the first rank at least r.
func sortSearch(ranks []int, r int) int {
	i, _ := slices.BinarySearch(ranks, r)
	return i
}

func medianOfThree(a, b, c int64) int64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
}
