package stats

import "fmt"

// Percentile returns the element of sorted (ascending) at index
// int(float64(len(sorted))*p), the IEEE double product truncated toward zero,
// exactly as LoadGen's PerformanceSummary::ProcessLatencies indexes its sorted
// latency vectors.
//
// For an empty slice it returns 0, the value LoadGen leaves in its summary
// fields when there are no latencies. It panics if p is not in [0, 1) (LoadGen
// asserts the same for its reported percentiles; out-of-range indices are
// undefined behaviour in the C++). The slice is not checked for order.
func Percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	if !(p >= 0 && p < 1) {
		panic(fmt.Sprintf("stats.Percentile: p = %v outside [0, 1)", p))
	}
	return sorted[percentileIndex(len(sorted), p)]
}

// percentileIndex is size_t(double(n) * p).
func percentileIndex(n int, p float64) int {
	prod := float64(float64(n) * p)
	i := int(prod)
	if i >= n { // only reachable for p within an ulp of 1 and huge n
		panic(fmt.Sprintf("stats.Percentile: index %d out of range for %d values (p = %v)", i, n, p))
	}
	return i
}

// MeanInt returns the integer mean of values as LoadGen computes it: the
// int64 sum (wrapping on overflow) divided by the count with C++'s
// int64_t / size_t semantics, that is an unsigned 64-bit division whose
// quotient is reinterpreted as int64. For a non-negative sum this is plain
// truncating division. It returns 0 for an empty slice (LoadGen's default).
func MeanInt(values []int64) int64 {
	if len(values) == 0 {
		return 0
	}
	var sum int64
	for _, v := range values {
		sum += v
	}
	return int64(uint64(sum) / uint64(len(values)))
}

// Min returns the smallest element of values, or 0 for an empty slice.
func Min(values []int64) int64 {
	if len(values) == 0 {
		return 0
	}
	m := values[0]
	for _, v := range values[1:] {
		m = min(m, v)
	}
	return m
}

// Max returns the largest element of values, or 0 for an empty slice.
func Max(values []int64) int64 {
	if len(values) == 0 {
		return 0
	}
	m := values[0]
	for _, v := range values[1:] {
		m = max(m, v)
	}
	return m
}

// CountAbove returns how many elements of values are strictly greater than
// bound; values equal to bound do not count. This is LoadGen's Server
// over-latency count t (and result_overlatency_query_count). The order of
// values does not matter.
func CountAbove(values []int64, bound int64) int64 {
	var n int64
	for _, v := range values {
		if v > bound {
			n++
		}
	}
	return n
}
