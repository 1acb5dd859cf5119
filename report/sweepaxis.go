package report

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// Axis kinds of a sweep chart.
const (
	axisLinear = iota // fitted to the data, 1-2-2.5-5 steps
	axisLog10         // fitted to the data, 1-2-5 ticks per decade
	axisLog2          // concurrency: powers of 2
)

// logSpan is the ratio of the largest to the smallest value above which a
// fitted axis is logarithmic: a range of more than 10× on a linear axis
// crowds its smaller values into a sliver.
const logSpan = 10

// minTicks is the fewest ticks a fitted axis has.
const minTicks = 4

// axisPad is the space, px, between the plot's frame and the nearest
// value drawn, so that no marker sits on the frame.
const axisPad = 12

// chartAxis maps values to pixels along one axis of a sweep chart.
type chartAxis struct {
	kind   int
	lo, hi float64 // the values at the ends of the axis, ticks included
	p0, p1 float64 // the pixels of lo and hi (p1 < p0 for a y axis)
	ticks  []float64
	step   float64 // a linear axis's tick step, which decides its decimals
}

// px is the pixel of v.
func (a chartAxis) px(v float64) float64 {
	if a.hi <= a.lo {
		return (a.p0 + a.p1) / 2
	}
	var f float64
	switch a.kind {
	case axisLinear:
		f = (v - a.lo) / (a.hi - a.lo)
	case axisLog10, axisLog2:
		f = math.Log(v/a.lo) / math.Log(a.hi/a.lo)
	}
	return a.p0 + f*(a.p1-a.p0)
}

// label is tick v as the axis writes it: as many decimals as the step
// needs on a linear axis, three significant digits on a logarithmic one,
// thousands grouped.
func (a chartAxis) label(v float64) string {
	if a.kind != axisLinear {
		return fmtSig(v, 3)
	}
	dec := 0
	for s := a.step; dec < 6 && math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, a.step); s *= 10 {
		dec++
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if s == "-0" || strings.HasPrefix(s, "-0.") && strings.Trim(s[3:], "0") == "" {
		s = s[1:]
	}
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	whole, frac, ok := strings.Cut(s, ".")
	if ok {
		return sign + groupThousands(whole) + "." + frac
	}
	return sign + groupThousands(whole)
}

// fitAxis fits an axis to vals (finite values; at least one) between the
// pixels p0 and p1: logarithmic (base 10) where every value is > 0 and
// the largest is more than logSpan times the smallest, else linear; its
// ends are the ticks around the data, never pinned at 0 unless the data
// reach it, and it has at least minTicks ticks.
func fitAxis(vals []float64, p0, p1 float64) chartAxis {
	lo, hi := slices.Min(vals), slices.Max(vals)
	a := chartAxis{p0: p0 + sign(p1-p0)*axisPad, p1: p1 - sign(p1-p0)*axisPad}
	if lo > 0 && hi > logSpan*lo {
		a.kind = axisLog10
		a.lo, a.hi = niceBelow(lo), niceAbove(hi)
		for _, mants := range [][]float64{{1, 2, 5}, {1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
			a.ticks = logTicks(a.lo, a.hi, mants)
			if len(a.ticks) >= minTicks && len(a.ticks) <= 10 {
				break
			}
		}
		return a
	}
	a.kind = axisLinear
	if hi == lo {
		d := math.Abs(lo) * 0.1
		if d == 0 {
			d = 1
		}
		lo, hi = lo-d, hi+d
		if vals[0] >= 0 && lo < 0 {
			lo = 0
		}
	}
	for _, n := range []float64{5, 8, 12} {
		a.step = niceStep((hi - lo) / n)
		a.lo, a.hi = math.Floor(lo/a.step)*a.step, math.Ceil(hi/a.step)*a.step
		a.ticks = a.ticks[:0]
		for k := 0; ; k++ {
			v := a.lo + float64(k)*a.step
			if v > a.hi+a.step/2 {
				break
			}
			a.ticks = append(a.ticks, v)
		}
		if len(a.ticks) >= minTicks {
			break
		}
	}
	return a
}

// concurrencyAxis is a logarithmic (base 2) axis over the concurrencies
// vals between the pixels p0 and p1, ticked at the powers of 2 in range
// (every other one, or fewer, where there are more than 10), or at the
// concurrencies themselves where no power of 2 lies between them: a
// fractional concurrency means nothing.
func concurrencyAxis(vals []float64, p0, p1 float64) chartAxis {
	a := chartAxis{kind: axisLog2, lo: slices.Min(vals), hi: slices.Max(vals), p0: p0 + axisPad, p1: p1 - axisPad}
	var pows []float64
	for v := 1.0; v <= a.hi; v *= 2 {
		if v >= a.lo {
			pows = append(pows, v)
		}
	}
	for len(pows) > 10 {
		var thin []float64
		for i, v := range pows {
			if i%2 == 0 {
				thin = append(thin, v)
			}
		}
		pows = thin
	}
	if len(pows) < 2 {
		pows = slices.Compact(slices.Sorted(slices.Values(vals)))
	}
	a.ticks = pows
	return a
}

func sign(v float64) float64 {
	if v < 0 {
		return -1
	}
	return 1
}

// niceMantissas are the mantissas an axis of a logarithmic chart may end
// at.
var niceMantissas = []float64{1, 1.5, 2, 3, 5, 7, 10}

// niceBelow is the largest m·10^k ≤ v, m a nice mantissa (v > 0).
func niceBelow(v float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(v)))
	best := mag
	for _, m := range niceMantissas {
		if m*mag <= v*(1+1e-12) {
			best = m * mag
		}
	}
	return best
}

// niceAbove is the smallest m·10^k ≥ v, m a nice mantissa (v > 0).
func niceAbove(v float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range niceMantissas {
		if m*mag >= v*(1-1e-12) {
			return m * mag
		}
	}
	return 10 * mag
}

// niceStep is the smallest of 1, 2, 2.5 and 5 times a power of 10 that is
// at least raw (raw > 0).
func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw*(1-1e-12) {
			return m * mag
		}
	}
	return 10 * mag
}

// logTicks are the values m·10^k from lo to hi, m one of mants.
func logTicks(lo, hi float64, mants []float64) []float64 {
	var ticks []float64
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range mants {
			// Round to 12 significant digits so that 3·10^-1 is 0.3.
			v, _ := strconv.ParseFloat(strconv.FormatFloat(m*math.Pow(10, e), 'g', 12, 64), 64)
			if v >= lo*(1-1e-12) && v <= hi*(1+1e-12) {
				ticks = append(ticks, v)
			}
		}
	}
	return ticks
}
