package sweep

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"aimeter/loadgen"
)

// UltraLowMax is the top of MLPerf Endpoints' Ultra Low Concurrency
// region (v1.0 rules section 5.4: concurrency 1 to 32, fixed for every
// submission).
const UltraLowMax = 32

// MaxPoints is the most measurement points one Pareto curve may have,
// Offline included (Endpoints v1.0 section 5.6).
const MaxPoints = 32

// MinPoints is the fewest fixed-concurrency points of a curve (Endpoints
// v1.0 section 5.3: one ultra-low, one in each of the three concurrency regions
// and three anywhere); the Offline point makes the eighth.
const MinPoints = 7

// Range is an inclusive range of concurrencies. A range whose Start is
// above its End is empty (a region that rounding collapsed, section 5.4
// "boundary collisions").
type Range struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Contains reports whether c is in the range.
func (r Range) Contains(c int) bool { return r.Start <= c && c <= r.End }

// Regions are the concurrency regions of a curve from Cmin to Cmax, as
// MLPerf Endpoints v1.0's reference algorithm (section 5.5, compute_regions)
// computes them.
type Regions struct {
	CMin int `json:"c_min"`
	CMax int `json:"c_max"`
	// I is log2(Cmax − Cmin)/3, the width of each region in log-2 space.
	I float64 `json:"interval"`
	// UltraLow is 1 to Cmin: the low-latency point's region.
	UltraLow Range `json:"ultra_low"`
	// Low, Medium and High are the three concurrency regions:
	// Cmin+1 … round(Cmin + 2^I), … round(Cmin + 2^(2I)), … Cmax.
	Low    Range `json:"low"`
	Medium Range `json:"medium"`
	High   Range `json:"high"`
	// Margin is Cmax+1 … ceil(1.1·Cmax): valid, but it counts toward no
	// region's required point.
	Margin Range `json:"margin"`
}

// RoundHalfEven rounds x to the nearest integer, ties to the even one:
// Python's built-in round(), which the Endpoints reference algorithm uses
// ("banker's rounding").
func RoundHalfEven(x float64) int { return int(math.RoundToEven(x)) }

// ComputeRegions is Endpoints v1.0's compute_regions(C_max, C_min): it
// refuses a Cmin outside 1–32 and a Cmax of 32 or less, as the reference
// does.
func ComputeRegions(cmin, cmax int) (Regions, error) {
	if cmin < 1 || cmin > UltraLowMax {
		return Regions{}, fmt.Errorf("minimum concurrency %d: must be between 1 and %d (the Ultra Low Concurrency region)", cmin, UltraLowMax)
	}
	if cmax <= UltraLowMax {
		return Regions{}, fmt.Errorf("maximum concurrency %d: must be > %d for Endpoints' regions; list the points yourself (--points) for a smaller sweep", cmax, UltraLowMax)
	}
	in := math.Log2(float64(cmax-cmin)) / 3
	lowEnd := RoundHalfEven(float64(cmin) + math.Pow(2, in))
	medEnd := RoundHalfEven(float64(cmin) + math.Pow(2, 2*in))
	return Regions{
		CMin: cmin, CMax: cmax, I: in,
		UltraLow: Range{1, cmin},
		Low:      Range{cmin + 1, lowEnd},
		Medium:   Range{lowEnd + 1, medEnd},
		High:     Range{medEnd + 1, cmax},
		Margin:   Range{cmax + 1, MarginEnd(cmax)},
	}, nil
}

// MarginEnd is ceil(1.1·cmax), the top of the 10 % margin, computed as the
// reference does (math.ceil(1.10 * C_max) in float64).
func MarginEnd(cmax int) int { return int(math.Ceil(1.10 * float64(cmax))) }

// Region names, as Endpoints' checker spells them.
const (
	RegionUltraLow = "low_latency"
	RegionLow      = "low_concurrency"
	RegionMedium   = "med_concurrency"
	RegionHigh     = "high_concurrency"
	RegionMargin   = "margin"
)

// Classify names the region of concurrency c, testing the regions in
// ascending order (so that a collapsed region's value goes to its
// neighbour, as the checker's classify_concurrency does); "" when c is
// above the margin or below 1.
func (r Regions) Classify(c int) string {
	switch {
	case r.UltraLow.Contains(c):
		return RegionUltraLow
	case r.Low.Contains(c):
		return RegionLow
	case r.Medium.Contains(c):
		return RegionMedium
	case r.High.Contains(c):
		return RegionHigh
	case r.Margin.Contains(c):
		return RegionMargin
	}
	return ""
}

// AutoPoints chooses n fixed-concurrency points (MinPoints ≤ n <
// MaxPoints, the Offline point being the last of MaxPoints) from cmin to
// cmax by the Endpoints v1.0 rule (section 5.3): the low-latency point cmin; the
// top of each concurrency region (round(Cmin + 2^I), round(Cmin +
// 2^(2I)) and Cmax), one point in each; then the "anywhere" points, the
// geometric middle of each region first (round-half-to-even of
// sqrt(start·end)), and for n > 7 further points spaced evenly in log-2
// space over Cmin…Cmax. The points are distinct and ascending; where the
// range is too narrow for n distinct points (Cmax just above 32, where
// rounding collapses regions), fewer are returned.
func AutoPoints(cmin, cmax, n int) ([]int, Regions, error) {
	r, err := ComputeRegions(cmin, cmax)
	if err != nil {
		return nil, r, err
	}
	if n < MinPoints || n >= MaxPoints {
		return nil, r, fmt.Errorf("point count %d: want %d to %d fixed-concurrency points (the Offline point makes at most %d)", n, MinPoints, MaxPoints-1, MaxPoints)
	}
	pts := []int{cmin}
	add := func(c int) {
		if len(pts) < n && c >= cmin && c <= cmax && !slices.Contains(pts, c) {
			pts = append(pts, c)
		}
	}
	for _, reg := range []Range{r.Low, r.Medium, r.High} {
		if reg.Start <= reg.End {
			add(reg.End)
		}
	}
	for _, reg := range []Range{r.Low, r.Medium, r.High} {
		if reg.Start <= reg.End {
			add(RoundHalfEven(math.Sqrt(float64(reg.Start) * float64(reg.End))))
		}
	}
	// Further points, evenly in log-2 space; finer grids until n are found
	// or the range has no more integers.
	span := math.Log2(float64(cmax) / float64(cmin))
	for k := 2; len(pts) < n && k <= 4*MaxPoints; k *= 2 {
		for j := 1; j < k; j++ {
			add(RoundHalfEven(float64(cmin) * math.Exp2(span*float64(j)/float64(k))))
		}
	}
	slices.Sort(pts)
	return pts, r, nil
}

// Coverage says which required regions a set of points leaves empty (the
// section 5.3 minimum: one point in the ultra-low region and one in each
// concurrency region); nil when all are covered.
func (r Regions) Coverage(points []int) []string {
	var missing []string
	for _, reg := range []struct {
		name string
		rng  Range
	}{{RegionUltraLow, r.UltraLow}, {RegionLow, r.Low}, {RegionMedium, r.Medium}, {RegionHigh, r.High}} {
		if reg.rng.Start > reg.rng.End {
			continue // collapsed: its neighbour's point covers its value
		}
		if !slices.ContainsFunc(points, reg.rng.Contains) {
			missing = append(missing, reg.name)
		}
	}
	return missing
}

// ParsePoints reads a list of concurrencies, "1,2,4,8": each an integer from
// 1 to loadgen.MaxConcurrency, none twice, at most MaxPoints. The error
// names the item by its place.
func ParsePoints(text string) ([]uint64, error) {
	var pts []uint64
	for i, item := range strings.Split(text, ",") {
		c, err := strconv.ParseUint(strings.TrimSpace(item), 10, 64)
		if err != nil || c == 0 || c > loadgen.MaxConcurrency {
			return nil, fmt.Errorf("item %d %q: want a concurrency from 1 to %d", i+1, item, loadgen.MaxConcurrency)
		}
		if slices.Contains(pts, c) {
			return nil, fmt.Errorf("item %d %q: concurrency %d listed twice", i+1, item, c)
		}
		pts = append(pts, c)
	}
	if len(pts) > MaxPoints {
		return nil, fmt.Errorf("%d points: more than the %d one curve may have (Endpoints v1.0 section 5.6)", len(pts), MaxPoints)
	}
	return pts, nil
}
