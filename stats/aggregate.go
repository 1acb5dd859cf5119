package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// IntervalUnion returns the total length of the union of the half-open
// intervals [starts[i], ends[i]), counting overlapping stretches once. It is
// the time base of the GB/T 45087 inference throughput (GB-7.6.2-TDIP, IN-74:
// the time covered by all samples' dispatch-and-processing intervals).
//
// Intervals with ends[i] <= starts[i] are empty and contribute nothing;
// intervals that merely touch ([0,5) and [5,7)) add up without a gap. The
// inputs are not modified. It panics if the slices differ in length. The sum
// is computed in int64 and is not checked for overflow.
func IntervalUnion(starts, ends []int64) int64 {
	if len(starts) != len(ends) {
		panic(fmt.Sprintf("stats.IntervalUnion: %d starts but %d ends", len(starts), len(ends)))
	}
	iv := make([][2]int64, 0, len(starts))
	for i, s := range starts {
		if ends[i] > s {
			iv = append(iv, [2]int64{s, ends[i]})
		}
	}
	if len(iv) == 0 {
		return 0
	}
	slices.SortFunc(iv, func(a, b [2]int64) int {
		switch {
		case a[0] < b[0]:
			return -1
		case a[0] > b[0]:
			return 1
		}
		return 0
	})
	var total int64
	curS, curE := iv[0][0], iv[0][1]
	for _, x := range iv[1:] {
		if x[0] > curE {
			total += curE - curS
			curS, curE = x[0], x[1]
			continue
		}
		curE = max(curE, x[1])
	}
	return total + (curE - curS)
}

// ErrBadGeometricMeanInput is wrapped by every error WeightedGeometricMean
// returns.
var ErrBadGeometricMeanInput = errors.New("stats: invalid weighted geometric mean input")

// WeightedGeometricMean returns exp(Σ w_i·ln v_i / Σ w_i), the geometric mean
// of values weighted by weights normalised to sum to 1 (GB/T 45087 composite
// relative throughput; see implementer's note IN-33, which also supplies the
// α factor the caller applies).
//
// Following IN-33, a weight may be zero (that value then does not count) but
// not negative, and the weights must not all be zero. It returns an error
// wrapping ErrBadGeometricMeanInput for empty or different-length slices, a
// value that is not a finite number > 0, a weight that is negative, NaN or
// infinite, or a zero weight sum.
func WeightedGeometricMean(values, weights []float64) (float64, error) {
	if len(values) != len(weights) {
		return 0, fmt.Errorf("%w: %d values but %d weights", ErrBadGeometricMeanInput, len(values), len(weights))
	}
	if len(values) == 0 {
		return 0, fmt.Errorf("%w: no values", ErrBadGeometricMeanInput)
	}
	var wsum, acc float64
	for i, v := range values {
		w := weights[i]
		if !(v > 0) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%w: value %d is %v, want a finite number > 0", ErrBadGeometricMeanInput, i, v)
		}
		if !(w >= 0) || math.IsInf(w, 0) {
			return 0, fmt.Errorf("%w: weight %d is %v, want a finite number >= 0", ErrBadGeometricMeanInput, i, w)
		}
		wsum += w
		acc += float64(w * math.Log(v))
	}
	if !(wsum > 0) || math.IsInf(wsum, 0) {
		return 0, fmt.Errorf("%w: weights sum to %v", ErrBadGeometricMeanInput, wsum)
	}
	return math.Exp(acc / wsum), nil
}
