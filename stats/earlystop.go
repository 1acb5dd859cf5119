package stats

import (
	"fmt"
	"math"
	"slices"
)

// Early-stopping parameters LoadGen hard-codes in PerformanceSummary::EarlyStopping.
const (
	// EarlyStoppingConfidence is the confidence c LoadGen uses: a run passes
	// when the odds of the observed over-latency count are below 1-c.
	EarlyStoppingConfidence = 0.99
	// EarlyStoppingTolerance is the tolerance d LoadGen uses (none).
	EarlyStoppingTolerance = 0.0
	// MultiStreamInferencePercentile is the percentile of the extra
	// SingleStream estimate LoadGen reports for inferring MultiStream.
	MultiStreamInferencePercentile = 0.99
)

// EarlyStopping reproduces LoadGen's MinPassingQueriesFinder: it answers
// "minimum passing query count" questions and memoises every answer per
// (p, d, c), using earlier answers to bracket later searches.
//
// Because the bracket (and so, occasionally, the answer) depends on what has
// already been memoised, results are only LoadGen-exact when an EarlyStopping
// value sees the same sequence of MinPassing calls as the C++ object does.
// In LoadGen (results.cc, PerformanceSummary::EarlyStopping) the finder is a
// local variable of each EarlyStopping call, so every scenario check starts
// from an empty memo: use a fresh EarlyStopping (NewEarlyStopping or a zero
// value) for each SingleStream, MultiStream or Server call, and a separate one
// for each of the TPOT and TTFT checks in token mode. Reusing one value for a
// whole process models a process-wide (function-static) finder instead.
//
// The zero value is ready to use. An EarlyStopping is not safe for concurrent
// use; there is no package-level state.
type EarlyStopping struct {
	memo map[esKey][]tPoint // per (p, d, c): points sorted by t
}

type esKey struct{ p, d, c float64 }

type tPoint struct{ t, h int64 }

// NewEarlyStopping returns an EarlyStopping with an empty memo.
func NewEarlyStopping() *EarlyStopping { return &EarlyStopping{} }

// MinPassing returns LoadGen's minimum passing query count h for t
// over-latency queries at percentile p, tolerance d and confidence c: the
// smallest h for which the odds of at most t of h+t queries exceeding the
// latency bound (each one under it with probability p-d) fall strictly below
// 1-c, as found by LoadGen's bracketed bisection.
//
// The bracket comes from the two largest memoised t below the query (with
// defaults (-1, 0) and (0, ceil(ln(1-c)/ln(p-d))) standing in for missing
// points): lower = trunc((t-t1)*(p-d)/(1-p+d) + h1) and
// upper = trunc((t-t1)*((h1-h0)*(t1-t0)) + h1 + 1) — a product of the two
// differences, not a slope, exactly as in LoadGen. The first h in
// [lower, upper) that passes is returned, or upper itself, unchecked, when
// none does. A memoised t is answered directly. Every answer is memoised.
//
// MinPassing panics if t < 0 or if p-d or c is not strictly between 0 and 1
// (LoadGen never asks such questions; the series would not terminate).
func (e *EarlyStopping) MinPassing(t int64, p, d, c float64) int64 {
	x := p - d
	if t < 0 || !(x > 0 && x < 1) || !(c > 0 && c < 1) {
		panic(fmt.Sprintf("stats.EarlyStopping.MinPassing: invalid arguments t=%d p=%v d=%v c=%v", t, p, d, c))
	}
	if e.memo == nil {
		e.memo = make(map[esKey][]tPoint)
	}
	key := esKey{p, d, c}
	pts := e.memo[key]
	// pos = lower_bound(t): first memoised point with point.t >= t.
	pos, found := slices.BinarySearchFunc(pts, t, func(pt tPoint, t int64) int {
		switch {
		case pt.t < t:
			return -1
		case pt.t > t:
			return 1
		}
		return 0
	})
	if found {
		return pts[pos].h
	}

	t0, h0 := int64(-1), int64(0)
	t1 := int64(0)
	h1 := int64(math.Ceil(math.Log(1-c) / math.Log(x)))
	if pos >= 1 {
		t1, h1 = pts[pos-1].t, pts[pos-1].h
	}
	if pos >= 2 {
		t0, h0 = pts[pos-2].t, pts[pos-2].h
	}

	minSlope := x / ((1 - p) + d)
	maxSlope := float64((h1 - h0) * (t1 - t0)) // LoadGen multiplies here
	dt := float64(t - t1)
	lower := int64(float64(dt*minSlope) + float64(h1))
	upper := int64(float64(float64(dt*maxSlope)+float64(h1)) + 1)

	h := bisectMinPassing(lower, upper, t, x, c)
	e.memo[key] = slices.Insert(pts, pos, tPoint{t, h})
	return h
}

// bisectMinPassing returns the first h in [lo, hi) with odds < 1-c, or hi
// (never evaluated) if there is none; a lower-bound bisection as in LoadGen's
// find_min_passing.
func bisectMinPassing(lo, hi, t int64, x, c float64) int64 {
	threshold := 1 - c
	for n := hi - lo; n > 0; {
		half := n / 2
		mid := lo + half
		if odds(mid, t, x) < threshold {
			n = half
		} else {
			lo = mid + 1
			n -= half + 1
		}
	}
	return lo
}

// odds is the regularized incomplete beta function I_x(h, t+1): the
// probability that at most t of h+t independent queries are over latency when
// each is under it with probability x.
func odds(h, t int64, x float64) float64 {
	return betaRegularized(x, h, t+1)
}

// betaRegularized evaluates I_x(a, b) as LoadGen does (DLMF 15.8.1):
// x^a (1-x)^(b-1) / (a B(a,b)) * 2F1(1, 1-b; 1+a; x/(x-1)).
func betaRegularized(x float64, a, b int64) float64 {
	e1 := float64(float64(a) * math.Log(x))
	e2 := float64(float64(b-1) * math.Log(1-x))
	exponent := float64(e1+e2) - logBeta(a, b)
	front := math.Exp(exponent) / float64(a)
	return float64(front * hyp2F1A1(1-b, 1+a, x/(x-1)))
}

// logBeta is ln B(a, b) = lgamma(a) + lgamma(b) - lgamma(a+b).
func logBeta(a, b int64) float64 {
	ga, _ := math.Lgamma(float64(a))
	gb, _ := math.Lgamma(float64(b))
	gab, _ := math.Lgamma(float64(a + b))
	return float64(ga+gb) - gab
}

// hyp2F1Tolerance is LoadGen's series cut-off, 2^-33.
const hyp2F1Tolerance = 1.0 / float64(int64(1)<<33)

// hyp2F1A1 sums the series of the Gauss hypergeometric function
// 2F1(1, b; c; z): starting from term = sum = 1, while |term| > 2^-33 the term
// is multiplied by ((b+i)*z)/(c+i) and then added, so the first term at or
// below the tolerance is still included. With b = -t the term becomes zero at
// i = t, which bounds the loop.
func hyp2F1A1(b, c int64, z float64) float64 {
	term, sum := 1.0, 1.0
	for i := int64(0); math.Abs(term) > hyp2F1Tolerance; i++ {
		factor := float64(float64(b+i)*z) / float64(c+i)
		term = float64(term * factor)
		sum += term
	}
	return sum
}
