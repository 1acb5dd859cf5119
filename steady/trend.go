package steady

import (
	"math"
	"slices"
)

// minTrendN is the fewest super-passes a trend test, and a plateau, needs
// (Endpoints' MIN_TREND_N).
const minTrendN = 4

// Trend is the verdict of a trend test on a trajectory.
type Trend int

// The verdicts of a trend test.
const (
	Insufficient Trend = iota // fewer than 4 points
	Flat                      // no significant trend
	Up                        // a significant rise
	Down                      // a significant fall
)

// String names the verdict.
func (t Trend) String() string {
	return [...]string{"insufficient", "steady", "up", "down"}[t]
}

// mannKendallHamedRao is the Mann-Kendall trend test with the Hamed-Rao
// correction of its variance for the autocorrelation of the ranks, at a
// two-sided significance of alpha: Endpoints' mk_hamed_rao, the gate of
// its steady-state detector.
//
// S = Σ_{i<j} sign(v_j − v_i); Var(S) = (n(n−1)(2n+5) − Σ_ties t(t−1)(2t+5))/18,
// times 1 + 2/(n(n−1)(n−2)) · Σ_k (n−k)(n−k−1)(n−k−2)·r_k over the lags k whose
// rank autocorrelation |r_k| exceeds 1.96/√n (a correction ≤ 0 is dropped);
// Z = (S ∓ 1)/√Var; the trend is significant when 2(1 − Φ(|Z|)) < alpha.
func mannKendallHamedRao(v []float64, alpha float64) Trend {
	if len(v) < minTrendN {
		return Insufficient
	}
	s, variance, z := mkStatistics(v)
	if variance <= 0 {
		return direction(float64(s))
	}
	p := math.Erfc(math.Abs(z) / math.Sqrt2) // two-sided normal p-value
	if p < alpha {
		return direction(float64(s))
	}
	return Flat
}

// mkStatistics are the Mann-Kendall S, its Hamed-Rao corrected variance
// and Z of v (len(v) ≥ 3).
func mkStatistics(v []float64) (s int, variance, z float64) {
	n := len(v)
	for i := 0; i < n-1; i++ {
		for j := i + 1; j < n; j++ {
			switch d := v[j] - v[i]; {
			case d > 0:
				s++
			case d < 0:
				s--
			}
		}
	}
	counts := map[float64]int{}
	for _, x := range v {
		counts[x]++
	}
	tie := 0.0
	for _, t := range counts {
		tf := float64(t)
		tie += tf * (tf - 1) * (2*tf + 5)
	}
	nf := float64(n)
	variance = (nf*(nf-1)*(2*nf+5) - tie) / 18
	acf := rankAutocorrelation(v)
	ci := 1.96 / math.Sqrt(nf)
	sum := 0.0
	for k := 1; k < n; k++ {
		r := acf[k-1]
		if math.Abs(r) <= ci {
			continue
		}
		kf := float64(k)
		sum += (nf - kf) * (nf - kf - 1) * (nf - kf - 2) * r
	}
	correction := 1 + 2/(nf*(nf-1)*(nf-2))*sum
	if correction <= 0 {
		correction = 1
	}
	variance *= correction
	if variance <= 0 {
		return s, variance, 0
	}
	switch {
	case s > 0:
		z = float64(s-1) / math.Sqrt(variance)
	case s < 0:
		z = float64(s+1) / math.Sqrt(variance)
	}
	return s, variance, z
}

func direction(x float64) Trend {
	switch {
	case x > 0:
		return Up
	case x < 0:
		return Down
	}
	return Flat
}

// rankAutocorrelation is the autocorrelation at lags 1…n−1 of the ranks of
// v (ties ranked in order of position, as Endpoints' stable sort does).
func rankAutocorrelation(v []float64) []float64 {
	n := len(v)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	})
	ranks := make([]float64, n)
	for r, i := range order {
		ranks[i] = float64(r + 1)
	}
	mean := 0.0
	for _, r := range ranks {
		mean += r
	}
	mean /= float64(n)
	dev := make([]float64, n)
	denom := 0.0
	for i, r := range ranks {
		dev[i] = r - mean
		denom += dev[i] * dev[i]
	}
	acf := make([]float64, n-1)
	if denom == 0 {
		return acf
	}
	for k := 1; k < n; k++ {
		num := 0.0
		for t := k; t < n; t++ {
			num += dev[t] * dev[t-k]
		}
		acf[k-1] = num / denom
	}
	return acf
}

// cov is the coefficient of variation: the population standard deviation
// over the absolute mean; 0 for fewer than two values or a zero mean.
func cov(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	if m == 0 {
		return 0
	}
	ss := 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss/float64(len(v))) / math.Abs(m)
}

// median of v (the mean of the middle two for an even count).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// relDrift is the end-to-end change of the least-squares line through v
// over its median: slope·(n−1)/median (a zero median counts as 1e-9).
func relDrift(v []float64) float64 {
	n := len(v)
	if n < 2 {
		return 0
	}
	xbar := float64(n-1) / 2
	ybar := 0.0
	for _, y := range v {
		ybar += y
	}
	ybar /= float64(n)
	sxx, sxy := 0.0, 0.0
	for x, y := range v {
		dx := float64(x) - xbar
		sxx += dx * dx
		sxy += dx * (y - ybar)
	}
	slope := 0.0
	if sxx != 0 {
		slope = sxy / sxx
	}
	med := median(v)
	if med == 0 {
		med = 1e-9
	}
	return slope * float64(n-1) / med
}

// percentileLower is Endpoints' percentile of a sorted slice: the element
// at index ⌊p·(n−1)⌋.
func percentileLower(sorted []float64, p float64) float64 {
	return sorted[int(p*float64(len(sorted)-1))]
}
