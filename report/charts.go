package report

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"aimeter/loadgen"
)

// num is a float64 that marshals to JSON with seven significant digits, and
// as null when it is not finite (a gap in a uPlot series).
type num float64

// MarshalJSON implements json.Marshaler.
func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', 7, 64), nil
}

// chartSet is the data of one scenario's charts, as the page script reads it.
// Latencies are in Unit; times in seconds from the start of the pass.
type chartSet struct {
	ID           string `json:"id"`
	Unit         string `json:"unit"`
	LatencyLabel string `json:"latencyLabel"`
	LogX         bool   `json:"logX"`
	Hist         struct {
		X []num `json:"x"` // bucket lower edges, then the last upper edge
		Y []num `json:"y"` // samples per bucket (0 after the last edge)
	} `json:"hist"`
	CDF struct {
		X     []num `json:"x"`
		Y     []num `json:"y"` // fraction ≤ x
		Exact bool  `json:"exact"`
	} `json:"cdf"`
	Time struct {
		X         []num `json:"x"` // bucket midpoints (s)
		Min       []num `json:"min"`
		Mean      []num `json:"mean"`
		Max       []num `json:"max"`
		Issued    []num `json:"issued,omitempty"` // samples per second; none for Offline
		Completed []num `json:"completed"`
		Failed    []num `json:"failed,omitempty"`
		BucketS   num   `json:"bucketS"`
		LogY      bool  `json:"logY"`
	} `json:"time"`
	// BucketText is the width of a time bucket, for the captions.
	BucketText string `json:"-"`
	// Legend holds, for each chart, the text its legend shows for each
	// series (the x series first) while the mouse is not over the chart: a
	// summary of the whole pass, formatted by the report's formatters.
	Legend struct {
		Hist       []string `json:"hist"`
		CDF        []string `json:"cdf"`
		Latency    []string `json:"latency"`
		Throughput []string `json:"throughput"`
	} `json:"legend"`
	// TargetP is the target percentile (0.9 for p90); TargetLatency the
	// Summary's latency at it; Bound the Server latency bound (null if none).
	TargetP       num    `json:"targetP"`
	TargetLabel   string `json:"targetLabel"`
	TargetLatency num    `json:"targetLatency"`
	Bound         num    `json:"bound"`
	// TargetText and BoundText label the marker lines ("p99 10.52 ms").
	TargetText string `json:"targetText"`
	BoundText  string `json:"boundText,omitempty"`
	HasBound   bool   `json:"-"`
	// Windows are the steady-state windows, shaded on the timeline charts.
	Windows []windowMark `json:"windows,omitempty"`
	// IsGoal is false for Offline, whose percentile is only informative.
	IsGoal bool `json:"-"`
	// Lost is the number of lost samples, left out of the over-time latencies.
	Lost uint64 `json:"-"`
}

// latencyUnit picks the unit the charts show latencies in.
func latencyUnit(maxNs int64) (string, float64) {
	switch {
	case maxNs < 1e6:
		return "µs", 1e3
	case maxNs < 1e10:
		return "ms", 1e6
	}
	return "s", 1e9
}

func buildCharts(id string, s *loadgen.Summary, ps *passStats) *chartSet {
	e := &s.Effective
	c := &chartSet{ID: id, LatencyLabel: "Sample latency"}
	target := s.TargetPercentile.SampleLatency
	if e.Scenario == loadgen.MultiStream {
		c.LatencyLabel = "Query latency"
		target = s.TargetPercentile.QueryLatency
	}
	maxNs := ps.hist.max
	bound := int64(-1)
	if e.Scenario == loadgen.Server && !e.UseTokenLatencies && e.TargetLatencyNs > 0 {
		bound = e.TargetLatencyNs
		maxNs = max(maxNs, bound)
	}
	unit, div := latencyUnit(maxNs)
	c.Unit = unit
	c.TargetP = num(s.TargetPercentile.Percentile)
	c.TargetLabel = fmtPct(s.TargetPercentile.Percentile)
	c.TargetLatency = num(float64(target) / div)
	c.TargetText = c.TargetLabel + " " + fmtDur(target)
	c.Bound = num(math.NaN())
	if bound >= 0 {
		c.Bound = num(float64(bound) / div)
		c.HasBound = true
		c.BoundText = "bound " + fmtDur(bound)
	}
	h := &ps.hist
	// A log axis for wide distributions, and whenever only the log-spaced
	// histogram is at hand: its buckets are of equal width on a log axis only.
	c.LogX = h.min > 0 && (float64(h.max)/float64(h.min) > 50 || ps.exact == nil)
	if c.LogX {
		// The non-empty range of the log buckets, one empty bucket either side.
		lo, hi := histIndex(h.min), histIndex(h.max)
		lo = max(lo-1, 0)
		hi = min(hi+1, len(h.counts)-1)
		for i := lo; i <= hi; i++ {
			c.Hist.X = append(c.Hist.X, num(histEdge(i)/div))
			c.Hist.Y = append(c.Hist.Y, num(h.counts[i]))
		}
		c.Hist.X = append(c.Hist.X, num(histEdge(hi+1)/div))
		c.Hist.Y = append(c.Hist.Y, 0)
	} else {
		edges, counts := linearHist(ps.exact)
		for i := range counts {
			c.Hist.X = append(c.Hist.X, num(edges[i]/div))
			c.Hist.Y = append(c.Hist.Y, num(counts[i]))
		}
	}

	if ps.exact != nil {
		xs, ys := cdfFromSorted(ps.exact)
		c.CDF.Exact = true
		// Start from 0 just left of the smallest latency, so that the first
		// step is drawn.
		c.CDF.X = append(c.CDF.X, num(0.99*float64(xs[0])/div))
		c.CDF.Y = append(c.CDF.Y, 0)
		for i := range xs {
			c.CDF.X = append(c.CDF.X, num(float64(xs[i])/div))
			c.CDF.Y = append(c.CDF.Y, num(ys[i]))
		}
	} else {
		xs, ys := cdfFromHist(h)
		for i := range xs {
			c.CDF.X = append(c.CDF.X, num(xs[i]/div))
			c.CDF.Y = append(c.CDF.Y, num(ys[i]))
		}
	}

	tl := ps.tl
	ws := float64(tl.width) / 1e9
	c.Time.BucketS = num(ws)
	c.IsGoal = e.Scenario != loadgen.Offline
	c.Lost = ps.lost
	offline := e.Scenario == loadgen.Offline // every sample is issued at 0
	var latLo, latHi int64 = math.MaxInt64, 0
	for i := range tl.used {
		start, span := float64(i)*ws, ws
		rates := true
		if i == tl.used-1 {
			// The last bucket ends with the pass: rate over its used part,
			// and none when that is too short to mean anything.
			span = float64(tl.last)/1e9 - start
			if span < ws/4 {
				span, rates = ws, false
			}
		}
		c.Time.X = append(c.Time.X, num(start+span/2))
		rate := func(n uint64) num {
			if !rates {
				return num(math.NaN())
			}
			return num(float64(n) / span)
		}
		if tl.latN[i] == 0 {
			nan := num(math.NaN())
			c.Time.Min = append(c.Time.Min, nan)
			c.Time.Mean = append(c.Time.Mean, nan)
			c.Time.Max = append(c.Time.Max, nan)
		} else {
			latLo, latHi = min(latLo, tl.latMin[i]), max(latHi, tl.latMax[i])
			c.Time.Min = append(c.Time.Min, num(float64(tl.latMin[i])/div))
			c.Time.Mean = append(c.Time.Mean, num(tl.latSum[i]/float64(tl.latN[i])/div))
			c.Time.Max = append(c.Time.Max, num(float64(tl.latMax[i])/div))
		}
		if !offline {
			c.Time.Issued = append(c.Time.Issued, rate(tl.issued[i]))
		}
		c.Time.Completed = append(c.Time.Completed, rate(tl.completed[i]))
		if ps.failed > 0 {
			c.Time.Failed = append(c.Time.Failed, rate(tl.failed[i]))
		}
	}
	c.Time.LogY = latLo > 0 && latHi > 0 && float64(latHi)/float64(latLo) > 50
	c.BucketText = fmtDur(tl.width)
	fillLegend(c, ps, target)
	return c
}

// fillLegend sets the legends' summaries of the pass: the latency range and
// count, the latency at the target percentile, the minimum, mean and maximum
// latency over the pass, and the mean rates.
func fillLegend(c *chartSet, ps *passStats, targetNs int64) {
	h := &ps.hist
	c.Legend.Hist = []string{fmtDur(h.min) + " – " + fmtDur(h.max), fmtCount(h.n) + " in all"}
	c.Legend.CDF = []string{fmtDur(targetNs), fmtSig(float64(c.TargetP), 4) + " (" + c.TargetLabel + ")"}

	tl := ps.tl
	var n uint64
	var sum float64
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	var issued, completed, failed uint64
	for i := range tl.used {
		issued += tl.issued[i]
		completed += tl.completed[i]
		failed += tl.failed[i]
		if tl.latN[i] == 0 {
			continue
		}
		n += tl.latN[i]
		sum += tl.latSum[i]
		lo, hi = min(lo, tl.latMin[i]), max(hi, tl.latMax[i])
	}
	if n == 0 {
		c.Legend.Latency = []string{"whole pass", "n/a", "n/a", "n/a"}
	} else {
		c.Legend.Latency = []string{"whole pass", fmtDur(lo), fmtDur(int64(math.Round(sum / float64(n)))), fmtDur(hi)}
	}

	span := float64(max(ps.endNs, tl.last)) / 1e9
	rate := func(k uint64) string {
		if span <= 0 {
			return "n/a"
		}
		return fmtRate(float64(k)/span, "samples/s")
	}
	c.Legend.Throughput = []string{"mean over the pass"}
	if c.Time.Issued != nil {
		c.Legend.Throughput = append(c.Legend.Throughput, rate(issued))
	}
	c.Legend.Throughput = append(c.Legend.Throughput, rate(completed))
	if c.Time.Failed != nil {
		c.Legend.Throughput = append(c.Legend.Throughput, rate(failed))
	}
}

// linearHist bins sorted latencies into equal-width bins (Rice's rule, 10 to
// 200 of them), with an empty bin either side. It returns each bin's lower
// edge and count; the last entry is the upper edge with a count of 0.
func linearHist(sorted []int64) (edges []float64, counts []uint64) {
	n := len(sorted)
	lo, hi := float64(sorted[0]), float64(sorted[n-1])
	bins := min(max(int(math.Ceil(2*math.Cbrt(float64(n)))), 10), 200)
	w := (hi - lo) / float64(bins)
	if w <= 0 { // one value: a single bin around it
		bins, w = 1, max(math.Abs(lo)*0.02, 1)
		lo -= w / 2
	}
	counts = make([]uint64, bins+2) // bins plus an empty one either side
	for _, v := range sorted {
		i := min(int((float64(v)-lo)/w), bins-1)
		counts[i+1]++
	}
	for i := range bins + 2 {
		edges = append(edges, lo+float64(i-1)*w)
	}
	edges = append(edges, lo+float64(bins+1)*w)
	counts = append(counts, 0)
	return edges, counts
}

// settingsTable lists every effective setting under its LoadGen name, floats
// with at most seven significant digits, durations also in readable units.
func settingsTable(e loadgen.Effective) table {
	t := table{Head: []string{"Setting", "Value"}}
	v := reflect.ValueOf(e)
	ty := v.Type()
	for i := range ty.NumField() {
		f := ty.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		fv := v.Field(i)
		if strings.Contains(opts, "omitempty") && fv.IsZero() {
			continue // an aimeter addition that is off, as in settings.json
		}
		val := fmt.Sprint(fv.Interface())
		switch {
		case fv.CanFloat():
			val = fmtSetting(fv.Float())
		case strings.HasSuffix(f.Name, "Ns") && fv.CanInt() && fv.Int() > 0:
			val += " (" + fmtDur(fv.Int()) + ")"
		case strings.HasSuffix(f.Name, "Ms") && fv.CanUint() && fv.Uint() > 0:
			val += " (" + fmtDur(int64(fv.Uint())*1e6) + ")"
		}
		t.Rows = append(t.Rows, []string{name, val})
	}
	return t
}
