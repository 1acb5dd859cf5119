package stats

import "math"

// Moments are the exact mean and the sample standard deviation of a set of
// integer values: what a comparison between runs needs (a t-test pools
// them), beside LoadGen's truncated integer mean (MeanInt).
type Moments struct {
	N      int64   // how many values
	Mean   float64 // their mean; 0 for none
	Stddev float64 // their sample standard deviation (n − 1); 0 below two values
}

// MomentsOf computes the Moments of values in one pass, as sums of the
// differences from the first value (the shifted-data algorithm): no
// division per value, and no cancellation while the values stay near the
// first, as a run's latencies do. Each difference is exact in float64
// below 2^53 (in ns, 104 days).
func MomentsOf(values []int64) Moments {
	if len(values) == 0 {
		return Moments{}
	}
	k := values[0]
	var s1, s2 float64
	for _, v := range values {
		d := float64(v - k)
		s1 += d
		s2 += d * d
	}
	n := float64(len(values))
	m := Moments{N: int64(len(values)), Mean: float64(k) + s1/n}
	if len(values) > 1 {
		m.Stddev = math.Sqrt(max(s2-s1*s1/n, 0) / (n - 1))
	}
	return m
}
