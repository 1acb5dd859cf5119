package telemetry

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// SeriesKey names one series of readings: one kind of one device.
type SeriesKey struct {
	Source string `json:"source"`
	Node   string `json:"node"`
	Device string `json:"device"`
	Kind   Kind   `json:"kind"`
}

func keyOf(r Reading) SeriesKey { return SeriesKey{r.Source, r.Node, r.Device, r.Kind} }

func compareKey(a, b SeriesKey) int {
	return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Node, b.Node), cmp.Compare(a.Device, b.Device), cmp.Compare(a.Kind, b.Kind))
}

// MaxGap is the longest time between two readings of a series that still
// counts as covered: two and a half periods, so that one missed read is
// bridged and two are not. Summarize takes as the period the larger of the
// log's sampling period and the series' own median spacing, so that a
// replayed or scraped series at 1 Hz is covered in a log sampled at 10 Hz.
func MaxGap(periodNs int64) int64 { return periodNs * 5 / 2 }

// Window is a stretch of the run's clock, in nanoseconds from its start.
type Window struct {
	FromNs int64 `json:"from_ns"`
	ToNs   int64 `json:"to_ns"`
}

// Seconds is the window's length in seconds.
func (w Window) Seconds() float64 { return float64(w.ToNs-w.FromNs) / 1e9 }

// The methods by which an energy figure was found.
const (
	// MethodCounter is the difference of an energy counter's readings.
	MethodCounter = "counter"
	// MethodTrapezoid is power readings integrated by the trapezoid rule.
	MethodTrapezoid = "trapezoid"
	// MethodMean is the plain mean of utilisation readings.
	MethodMean = "mean"
)

// SeriesSummary is one series over a window. A figure is nil where the
// readings cannot support it, and Note says why.
type SeriesSummary struct {
	SeriesKey
	// Readings counts the readings inside the window.
	Readings int `json:"readings"`
	// Coverage is the share of the window (0 to 1) between two readings
	// at most MaxGap apart.
	Coverage float64 `json:"coverage"`
	// Method is MethodCounter or MethodTrapezoid (energy), MethodMean
	// (utilisation).
	Method string `json:"method,omitempty"`
	// EnergyJ is the energy over the covered part of the window, J.
	EnergyJ *float64 `json:"energy_j,omitempty"`
	// AvgW is EnergyJ over the covered time (GB-7.6.3-T17-avg); PeakW the
	// largest power reading, or the largest mean power between two counter
	// readings (GB-6.6.3-T7-PTRmax).
	AvgW  *float64 `json:"avg_w,omitempty"`
	PeakW *float64 `json:"peak_w,omitempty"`
	// AvgPct and PeakPct are a utilisation series' mean and largest
	// reading, %.
	AvgPct  *float64 `json:"avg_pct,omitempty"`
	PeakPct *float64 `json:"peak_pct,omitempty"`
	Note    string   `json:"note,omitempty"`
}

// Summary is every series of a Log over one window, and the total over
// devices.
type Summary struct {
	Window
	Series []SeriesSummary `json:"series"`
	// Devices counts the devices in the total: for each (source, node,
	// device), its energy counter where it gave a figure, else its power.
	Devices int `json:"devices"`
	// EnergyJ, AvgW and PeakW are the totals: the sum of the devices'
	// energies and average powers (GB-6.6.3-T7-PCTR), and the largest sum
	// of the devices' powers at the same instants (every period from the
	// window's start, a million instants at most; an instant where a
	// device has no value is left out).
	EnergyJ *float64 `json:"energy_j,omitempty"`
	AvgW    *float64 `json:"avg_w,omitempty"`
	PeakW   *float64 `json:"peak_w,omitempty"`
	// Method lists the methods of the devices' energies, e.g. "counter"
	// or "counter+trapezoid".
	Method string `json:"method,omitempty"`
	// Coverage is the least coverage among the devices in the total.
	Coverage float64 `json:"coverage"`
	// Note says why a total is missing, or what limits it.
	Note string `json:"note,omitempty"`
}

// point is a value at a time of one series.
type point struct {
	t int64
	v float64
}

// series is one series' readings, in time order, and the stretches its
// gaps leave out.
type series struct {
	key   SeriesKey
	pts   []point
	holes []Window
}

// holesOf are the stretches that the gaps of l leave out of the series k.
func holesOf(l *Log, k SeriesKey) []Window {
	var out []Window
	for _, g := range l.Gaps {
		if g.ofSeries() && g.Source == k.Source && g.Node == k.Node && g.Device == k.Device && g.Kind == k.Kind {
			out = append(out, Window{g.T, g.T + g.DurationNs})
		}
	}
	return out
}

// LeftOut is true when the stretch of the series k from fromNs to toNs
// overlaps one of the log's gaps of that series: a counter step not
// counted, or a reading left out (Gap).
func (l *Log) LeftOut(k SeriesKey, fromNs, toNs int64) bool {
	return inHole(holesOf(l, k), fromNs, toNs)
}

// inHole is true when the stretch from a to b overlaps one of holes.
func inHole(holes []Window, a, b int64) bool {
	for _, h := range holes {
		if h.FromNs < b && h.ToNs > a {
			return true
		}
	}
	return false
}

// clip returns the points of s inside w, with a value interpolated at each
// edge of w where readings at most maxGap apart straddle it.
func clip(pts []point, w Window, maxGap int64) (out []point, inside int) {
	for i, p := range pts {
		if p.t < w.FromNs || p.t > w.ToNs {
			continue
		}
		inside++
		if len(out) == 0 && p.t > w.FromNs && i > 0 && p.t-pts[i-1].t <= maxGap {
			out = append(out, interpolate(pts[i-1], p, w.FromNs))
		}
		out = append(out, p)
		if p.t < w.ToNs && i+1 < len(pts) && pts[i+1].t > w.ToNs && pts[i+1].t-p.t <= maxGap {
			out = append(out, interpolate(p, pts[i+1], w.ToNs))
		}
	}
	if inside == 0 { // readings around the window, none inside
		for i := 1; i < len(pts); i++ {
			a, b := pts[i-1], pts[i]
			if a.t < w.FromNs && b.t > w.ToNs && b.t-a.t <= maxGap {
				out = []point{interpolate(a, b, w.FromNs), interpolate(a, b, w.ToNs)}
			}
		}
	}
	return out, inside
}

func interpolate(a, b point, t int64) point {
	if b.t == a.t {
		return point{t, a.v}
	}
	return point{t, a.v + (b.v-a.v)*float64(t-a.t)/float64(b.t-a.t)}
}

// Summarize computes the figures of l over w. It invents nothing: a series
// with fewer than two readings (or one utilisation reading) in reach of
// the window gets a Note instead of figures, and a stretch longer than
// MaxGap between readings, or where a counter went down, is not covered.
func Summarize(l *Log, w Window) Summary {
	s := Summary{Window: w}
	if w.ToNs <= w.FromNs {
		s.Note = fmt.Sprintf("empty window (%d to %d ns)", w.FromNs, w.ToNs)
		return s
	}
	rs := slices.Clone(l.Readings)
	sortReadings(rs)
	var all []series
	for i := 0; i < len(rs); {
		j := i
		for j < len(rs) && keyOf(rs[j]) == keyOf(rs[i]) {
			j++
		}
		ser := series{key: keyOf(rs[i])}
		ser.holes = holesOf(l, ser.key)
		for _, r := range rs[i:j] {
			ser.pts = append(ser.pts, point{r.T, r.Value})
		}
		all = append(all, ser)
		i = j
	}
	length := float64(w.ToNs - w.FromNs)
	type device struct {
		sum    SeriesSummary
		maxGap int64
		pts    []point
		holes  []Window
		ok     bool
		power  bool
	}
	var devices []device
	for _, ser := range all {
		maxGap := MaxGap(max(l.PeriodNs, medianSpacing(ser.pts)))
		pts, inside := clip(ser.pts, w, maxGap)
		ss := SeriesSummary{SeriesKey: ser.key, Readings: inside}
		switch ser.key.Kind {
		case Utilization:
			summarizeUtilization(&ss, ser.pts, w, maxGap, length)
		default:
			summarizeEnergy(&ss, pts, ser.holes, maxGap, length)
		}
		s.Series = append(s.Series, ss)
		if ser.key.Kind == Utilization {
			continue
		}
		d := device{sum: ss, maxGap: maxGap, pts: pts, holes: ser.holes, ok: ss.EnergyJ != nil, power: ser.key.Kind == Power}
		// One entry per device: its counter when that gave a figure.
		k := slices.IndexFunc(devices, func(o device) bool {
			return o.sum.Source == ss.Source && o.sum.Node == ss.Node && o.sum.Device == ss.Device
		})
		switch {
		case k < 0:
			devices = append(devices, d)
		case d.ok && (!devices[k].ok || !d.power):
			devices[k] = d
		}
	}
	var notes, methods []string
	energy, avg, coverage := 0.0, 0.0, 1.0
	var used []device
	for _, d := range devices {
		if !d.ok {
			notes = append(notes, fmt.Sprintf("%s left out: %s", deviceName(d.sum.SeriesKey), d.sum.Note))
			continue
		}
		used = append(used, d)
		if d.sum.Note != "" {
			notes = append(notes, deviceName(d.sum.SeriesKey)+": "+d.sum.Note)
		}
		energy += *d.sum.EnergyJ
		avg += *d.sum.AvgW
		coverage = min(coverage, d.sum.Coverage)
		if !slices.Contains(methods, d.sum.Method) {
			methods = append(methods, d.sum.Method)
		}
	}
	s.Devices = len(used)
	if len(used) == 0 {
		s.Coverage = 0
		notes = append([]string{"no power or energy figures in the window"}, notes...)
		s.Note = strings.Join(notes, "; ")
		return s
	}
	slices.Sort(methods)
	s.EnergyJ, s.AvgW, s.Coverage, s.Method = &energy, &avg, coverage, strings.Join(methods, "+")
	// The cluster's peak: the sum over devices at the same instants.
	peak, found := 0.0, false
	// Every period, but no more than a million instants.
	step := max(l.PeriodNs, (w.ToNs-w.FromNs)/1_000_000, 1)
	for k := range (w.ToNs-w.FromNs)/step + 1 {
		t := w.FromNs + k*step
		sum, all := 0.0, true
		for _, d := range used {
			v, ok := powerAt(d.pts, d.holes, t, d.maxGap, d.power)
			if !ok {
				all = false
				break
			}
			sum += v
		}
		if all && (!found || sum > peak) {
			peak, found = sum, true
		}
	}
	if found {
		s.PeakW = &peak
	} else {
		notes = append(notes, "no instant where every device had a reading: no peak of the total")
	}
	if coverage < 1 {
		notes = append(notes, fmt.Sprintf("readings cover %.1f %% of the window: energy is over the covered part only", coverage*100))
	}
	s.Note = strings.Join(notes, "; ")
	return s
}

// medianSpacing is the median time between consecutive points (0 for
// fewer than two).
func medianSpacing(pts []point) int64 {
	if len(pts) < 2 {
		return 0
	}
	d := make([]int64, 0, len(pts)-1)
	for i := 1; i < len(pts); i++ {
		d = append(d, pts[i].t-pts[i-1].t)
	}
	slices.Sort(d)
	return d[(len(d)-1)/2] // the lower median: one long hole in three readings stays a hole
}

func deviceName(k SeriesKey) string {
	if k.Node == "" {
		return k.Source + " " + k.Device
	}
	return k.Source + " " + k.Node + "/" + k.Device
}

// powerAt is a device's power at t: a power series interpolated between
// readings at most maxGap apart, or a counter's mean power over the
// interval holding t; none inside one of holes.
func powerAt(pts []point, holes []Window, t int64, maxGap int64, power bool) (float64, bool) {
	// The first point at or after t (points are in time order).
	i, _ := slices.BinarySearchFunc(pts, t, func(p point, t int64) int { return cmp.Compare(p.t, t) })
	if i == len(pts) {
		return 0, false
	}
	if pts[i].t == t && power && !inHole(holes, t, t) {
		return pts[i].v, true
	}
	if i == 0 {
		return 0, false
	}
	a, b := pts[i-1], pts[i]
	if b.t-a.t > maxGap || b.t == a.t || inHole(holes, a.t, b.t) {
		return 0, false
	}
	if power {
		return interpolate(a, b, t).v, true
	}
	if b.v < a.v {
		return 0, false
	}
	return (b.v - a.v) / (float64(b.t-a.t) / 1e9), true
}

// summarizeEnergy fills ss from the clipped points of a power series
// (trapezoid rule) or an energy counter (differences); a stretch between
// two readings that overlaps one of holes (the series' gaps) adds nothing
// and is not covered.
func summarizeEnergy(ss *SeriesSummary, pts []point, holes []Window, maxGap int64, length float64) {
	if len(pts) < 2 {
		ss.Note = fmt.Sprintf("too few readings: %d in reach of the window (want at least 2)", len(pts))
		return
	}
	counter := ss.Kind == Energy
	energy, covered, peak := 0.0, int64(0), 0.0
	backwards, leftOut := 0, 0
	if !counter {
		for _, p := range pts {
			peak = max(peak, p.v)
		}
	}
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		dt := b.t - a.t
		if dt > maxGap || dt <= 0 {
			continue
		}
		if inHole(holes, a.t, b.t) {
			leftOut++
			continue
		}
		if counter {
			if b.v < a.v {
				backwards++
				continue
			}
			energy += b.v - a.v
			peak = max(peak, (b.v-a.v)/(float64(dt)/1e9))
		} else {
			energy += (a.v + b.v) / 2 * float64(dt) / 1e9
		}
		covered += dt
	}
	ss.Coverage = float64(covered) / length
	ss.Method = MethodTrapezoid
	if counter {
		ss.Method = MethodCounter
	}
	if covered == 0 {
		ss.Note = fmt.Sprintf("no two readings in reach of the window within %v ns of each other", maxGap)
		return
	}
	avg := energy / (float64(covered) / 1e9)
	ss.EnergyJ, ss.AvgW, ss.PeakW = &energy, &avg, &peak
	var notes []string
	if backwards > 0 {
		notes = append(notes, fmt.Sprintf("the counter went down %d times: those stretches are not covered", backwards))
	}
	switch {
	case leftOut == 1:
		notes = append(notes, "1 stretch between readings overlaps a gap of this series (telemetry.json's gaps): it adds nothing and is not covered")
	case leftOut > 1:
		notes = append(notes, fmt.Sprintf("%d stretches between readings overlap gaps of this series (telemetry.json's gaps): they add nothing and are not covered", leftOut))
	}
	ss.Note = strings.Join(notes, "; ")
}

// summarizeUtilization fills ss with the mean and largest reading inside w
// (GB-6.6.5-T9-server) and the coverage.
func summarizeUtilization(ss *SeriesSummary, pts []point, w Window, maxGap int64, length float64) {
	sum, peak, n := 0.0, 0.0, 0
	for _, p := range pts {
		if p.t >= w.FromNs && p.t <= w.ToNs {
			sum += p.v
			peak = max(peak, p.v)
			n++
		}
	}
	clipped, _ := clip(pts, w, maxGap)
	covered := int64(0)
	for i := 1; i < len(clipped); i++ {
		if dt := clipped[i].t - clipped[i-1].t; dt <= maxGap {
			covered += dt
		}
	}
	ss.Coverage = float64(covered) / length
	ss.Method = MethodMean
	if n == 0 {
		ss.Note = "too few readings: none in the window (want at least 1)"
		return
	}
	mean := sum / float64(n)
	ss.AvgPct, ss.PeakPct = &mean, &peak
}

// Efficiency is the energy efficiency MLPerf Power reports for a scenario:
// samples per joule for Offline and Server (performance per watt: samples/s
// over W), millijoules per query for SingleStream and MultiStream.
type Efficiency struct {
	// Name is "samples per joule" or "millijoules per query".
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// EfficiencyOf returns the efficiency of a run of scenario (LoadGen's name,
// e.g. "Offline") that completed samples in queries over energyJ joules; ok
// is false for an unknown scenario or a count or energy of zero.
func EfficiencyOf(scenario string, samples, queries uint64, energyJ float64) (e Efficiency, ok bool) {
	if energyJ <= 0 {
		return e, false
	}
	switch scenario {
	case "Offline", "Server":
		if samples == 0 {
			return e, false
		}
		return Efficiency{"samples per joule", float64(samples) / energyJ}, true
	case "SingleStream", "MultiStream":
		if queries == 0 {
			return e, false
		}
		return Efficiency{"millijoules per query", energyJ * 1000 / float64(queries)}, true
	}
	return e, false
}
