package report

import (
	"fmt"
	"html/template"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"aimeter/gbt"
	"aimeter/gbt/testinfo"
	"aimeter/loadgen"
)

// GBTRun is the GB/T 45087 side of a scenario: a GB/T inference test
// (clause 7) that LoadGen carried. When a Scenario has one, its section
// leads with the GB/T verdict, the loss-rate verdict of GB-7.7.1-c-2 (IN-79),
// and shows LoadGen's own checks only as secondary information: LoadGen's
// VALID/INVALID is not the verdict of a GB/T test.
type GBTRun struct {
	// Test describes the test: arrival mode and parameters, timeout, loss
	// threshold, test information and lifecycle (gbt_test.json).
	Test *gbt.Test
	// Metrics are gbt.Evaluate's clause 7.6 metrics of the run: the Table
	// 16 time breakdown, the Table 18 throughput, the loss and its verdict
	// with the losses per second, elasticity and pressure tolerance for
	// peak tests and, for a mixed test (mode 5), the foreign jobs' metrics
	// (IN-50).
	Metrics gbt.Metrics
	// Foreign, if set, is the LoadGen result of a mixed test's foreign
	// jobs; the report reads only their late completions from it.
	Foreign *loadgen.Result
}

// gbtView is what the template shows of a GBTRun.
type gbtView struct {
	// The verdict of the main jobs' loss rate, and why.
	Pass        bool
	LossLine    string
	LateLine    string
	Explanation string

	MetricName  string
	MetricValue string
	MetricRaw   string
	TI          string
	TIAvailable bool

	Time     gbtTimeTable
	Warnings []string

	Peak []kv

	LossChart   template.HTML
	LossCaption string

	Foreign *table

	Info      []kv
	Lifecycle []kv
	Notes     []string

	// LoadGen's own summary, secondary.
	LoadGenVerdict string
	LoadGenMetric  string
}

// gbtTimeTable is the Table 16 time breakdown: one row per metric, a
// metric without data shown with the reason across the columns.
type gbtTimeTable struct {
	Head []string
	Rows []gbtTimeRow
}

type gbtTimeRow struct {
	Symbol      string
	Requirement string
	Cells       []string // n, min, mean, p50, p90, p99, max; nil when not available
	Unavailable string   // "not available: reason"
}

// gbtVerdict is the headline verdict of a GB/T test (gbt.Metrics.Passed):
// PASS when the loss rate is within the permissible threshold
// (GB-7.7.1-c-2, IN-79), the foreign jobs' too in a mixed test (IN-50),
// FAIL otherwise.
func gbtVerdict(m *gbt.Metrics) (verdict, class string) {
	if m.Passed() {
		return "PASS", "valid"
	}
	return "FAIL", "invalid"
}

// fmtFraction formats a fraction as a percentage: 0.0123 is "1.23 %".
func fmtFraction(f float64) string {
	return fmtSig(f*100, 4) + " %"
}

// msToNs converts a gbt.Stat value in ms to ns for fmtDur.
func msToNs(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

// gbtModeText names the arrival mode of a test: "GB/T 45087 arrival mode 3
// (peak)", with the underlying mode of a mixed test.
func gbtModeText(t *gbt.Test) string {
	s := fmt.Sprintf("GB/T 45087 arrival mode %d (%s)", int(t.Arrival.Mode), t.Arrival.Mode)
	if t.UnderlyingMode != nil {
		s += fmt.Sprintf(" over mode %d (%s)", int(*t.UnderlyingMode), *t.UnderlyingMode)
	}
	return s
}

// lossLine is "Lost 2 of 500 samples: rate 0.4 %, permissible 1 %".
func lossLine(l gbt.Loss) string {
	return fmt.Sprintf("Lost %s of %s samples: loss rate %s, permissible %s",
		fmtCount(uint64(max(l.Lost, 0))), fmtCount(uint64(max(l.Sent, 0))), fmtFraction(l.Rate), fmtFraction(l.Threshold))
}

// fillGBT makes sv the section of a GB/T test: the loss-rate verdict is its
// verdict, LoadGen's checks become secondary and LoadGen's recommendations
// (such as "Reduce target QPS") are not given as advice.
func fillGBT(sv *scenarioView, res *loadgen.Result, g *GBTRun) {
	t, m := g.Test, &g.Metrics
	v := &gbtView{Pass: m.Passed(), LoadGenVerdict: sv.Verdict}
	if sv.MetricName != "" {
		v.LoadGenMetric = sv.MetricName + ": " + sv.MetricValue
	}
	sv.Verdict, sv.VerdictClass = gbtVerdict(m)
	sv.Scenario = gbtModeText(t) + ", carried by LoadGen's " + sv.Scenario + " scenario"
	sv.Recommendations = nil
	sv.MetricName, sv.MetricValue, sv.MetricRaw = "", "", ""

	v.LossLine = lossLine(m.Loss)
	if res.LateCompletions > 0 {
		v.LateLine = fmt.Sprintf("Of these, %s returned after their timeout and were counted lost (GB-7.4.1-d).", fmtCount(res.LateCompletions))
	}
	timeout := "no timeout (IN-51)"
	if t.Arrival.Timeout > 0 {
		timeout = "a job timeout of " + fmtDur(int64(t.Arrival.Timeout))
	}
	if m.Loss.Valid {
		v.Explanation = "The verdict of a GB/T 45087 test is its loss rate against the permissible threshold (GB-7.7.1-c-2, IN-79): the rate is within it, with " + timeout + "."
	} else {
		reason := m.Loss.Reason
		if reason == "" {
			reason = "the loss rate exceeds the permissible threshold (GB-7.7.1-c-2, IN-79)"
		}
		v.Explanation = "The verdict of a GB/T 45087 test is its loss rate against the permissible threshold: " + reason + ", with " + timeout + "."
	}
	if f := m.Foreign; f != nil {
		if f.Loss.Valid {
			v.Explanation += " The foreign jobs, reported apart, are within the threshold too (IN-50)."
		} else {
			v.Explanation += " The foreign jobs, reported apart, lost more than the threshold, which fails the test (IN-50): a foreign job lost is a job the system failed."
		}
	}

	v.MetricName = m.Throughput.Name()
	v.MetricValue = fmtRate(m.Throughput.SamplesPerSecond, "samples/s")
	v.MetricRaw = "basis " + m.Throughput.Basis
	if m.Throughput.Tokens > 0 {
		v.MetricRaw += ", " + fmtRate(m.Throughput.TokensPerSecond, "tokens/s")
	}
	if m.Throughput.Note != "" {
		v.MetricRaw += "; " + m.Throughput.Note
	}
	if m.Time.TI.Available {
		v.TI, v.TIAvailable = fmtDur(msToNs(m.Time.TI.Ms)), true
	} else {
		v.TI = "not available: " + m.Time.TI.Reason
	}
	v.Time = gbtTimeTableOf(&m.Time)
	v.Warnings = append(slices.Clone(m.Time.Warnings), m.Throughput.Warnings...)
	v.Peak = peakRows(m)
	v.LossChart = lossChart(m.Loss.PerSecond, foreignPerSecond(m))
	v.LossCaption = lossCaption(m)
	if m.Foreign != nil {
		ft := foreignTable(res, g)
		v.Foreign = &ft
	}
	v.Info = infoRows(t)
	v.Lifecycle = lifecycleRows(t.Lifecycle)
	v.Notes = t.Notes
	sv.GBT = v
	sv.Explanation = v.Explanation
}

// gbtTimeTableOf is the Table 16 breakdown as printGBT prints it: T_TI,
// T_DIS, T_IPR, T_IN, T_IPO, T_IP and T_DIP (GB-7.6.2-*).
func gbtTimeTableOf(b *gbt.Breakdown) gbtTimeTable {
	tt := gbtTimeTable{Head: []string{"Metric", "n", "min", "mean", "p50", "p90", "p99", "max"}}
	for _, s := range []*gbt.TimeStat{&b.TTI, &b.TDIS, &b.TIPR, &b.TIN, &b.TIPO, &b.TIP, &b.TDIP} {
		row := gbtTimeRow{Symbol: s.Symbol, Requirement: s.Requirement}
		if !s.Available {
			row.Unavailable = "not available: " + s.Reason
		} else {
			st := s.Stat
			row.Cells = []string{fmtCount(uint64(max(st.N, 0))),
				fmtDur(msToNs(st.Min)), fmtDur(msToNs(st.Mean)), fmtDur(msToNs(st.P50)),
				fmtDur(msToNs(st.P90)), fmtDur(msToNs(st.P99)), fmtDur(msToNs(st.Max))}
		}
		tt.Rows = append(tt.Rows, row)
	}
	return tt
}

// peakRows are the elasticity (Table 19, GB-7.6.5-T19-EL) and pressure
// tolerance (Table 20, GB-7.6.6-T20-PT) of a peak test; nil for the modes
// without them. The IN-76 variant is labelled non-standard, as the console
// does.
func peakRows(m *gbt.Metrics) []kv {
	var rows []kv
	if el := m.Elasticity; el != nil {
		if el.Available {
			rows = append(rows,
				kv{"Elasticity EL (Table 19)", fmtSig(el.Percent, 4) + " % (" + intervals(el.N) + ")"},
				kv{"Elasticity variant (IN-76, non-standard)", fmtSig(el.PercentPerMB, 4) + " %/MB"})
		} else {
			rows = append(rows, kv{"Elasticity EL (Table 19)", "not available: " + el.Reason})
		}
	}
	if pt := m.PressureTolerance; pt != nil {
		if pt.Available {
			rows = append(rows,
				kv{"Pressure tolerance PT (Table 20)", fmtSig(pt.MBPerSecond, 4) + " MB/s"},
				kv{"Throughput while over the pressure threshold (GB-7.6.6-T20-note)", fmtRate(pt.SamplesPerSecond, "samples/s") +
					" over " + fmtDur(pt.OverNs)})
		} else {
			rows = append(rows, kv{"Pressure tolerance PT (Table 20)", "not available: " + pt.Reason})
		}
	}
	return rows
}

// intervals is "over 1 interval", "over 3 intervals".
func intervals(n int) string {
	if n == 1 {
		return "over 1 interval"
	}
	return "over " + fmtCount(uint64(max(n, 0))) + " intervals"
}

func foreignPerSecond(m *gbt.Metrics) []int {
	if m.Foreign == nil {
		return nil
	}
	return m.Foreign.Loss.PerSecond
}

// lossCaption describes the losses-per-second chart.
func lossCaption(m *gbt.Metrics) string {
	s := "Samples lost in each second of the run, counted at their deadlines (GB-7.7.1-c-1, IN-63)"
	if m.Foreign != nil {
		s += "; main jobs in blue, foreign jobs in orange"
	}
	total := m.Loss.Lost
	if m.Foreign != nil {
		total += m.Foreign.Loss.Lost
	}
	if total == 0 {
		s += ": no sample was lost"
	}
	return s + "."
}

// foreignTable sets a mixed test's foreign jobs beside its main jobs
// (IN-50): sent, lost, loss rate and its check, throughput and T_TI.
func foreignTable(res *loadgen.Result, g *GBTRun) table {
	m, f := &g.Metrics, g.Metrics.Foreign
	t := table{Head: []string{"", "Main jobs", "Foreign jobs"}}
	add := func(k, main, foreign string) { t.Rows = append(t.Rows, []string{k, main, foreign}) }
	add("Samples sent", fmtCount(uint64(max(m.Loss.Sent, 0))), fmtCount(uint64(max(f.Loss.Sent, 0))))
	add("Samples lost", fmtCount(uint64(max(m.Loss.Lost, 0))), fmtCount(uint64(max(f.Loss.Lost, 0))))
	add("Loss rate", fmtFraction(m.Loss.Rate), fmtFraction(f.Loss.Rate))
	check := func(l gbt.Loss) string {
		if l.Valid {
			return "within " + fmtFraction(l.Threshold)
		}
		return "over " + fmtFraction(l.Threshold)
	}
	add("Loss rate against the threshold", check(m.Loss), check(f.Loss))
	if g.Foreign != nil {
		add("Late completions (counted lost)", fmtCount(res.LateCompletions), fmtCount(g.Foreign.LateCompletions))
	}
	add("Inference throughput", fmtRate(m.Throughput.SamplesPerSecond, "samples/s"), fmtRate(f.Throughput.SamplesPerSecond, "samples/s"))
	stat := func(s gbt.TimeStat, pick func(gbt.Stat) float64) string {
		if !s.Available {
			return "not available"
		}
		return fmtDur(msToNs(pick(s.Stat)))
	}
	for _, p := range []struct {
		name string
		pick func(gbt.Stat) float64
	}{
		{"T_TI mean", func(s gbt.Stat) float64 { return s.Mean }},
		{"T_TI p50", func(s gbt.Stat) float64 { return s.P50 }},
		{"T_TI p99", func(s gbt.Stat) float64 { return s.P99 }},
		{"T_TI max", func(s gbt.Stat) float64 { return s.Max }},
	} {
		add(p.name, stat(m.Time.TTI, p.pick), stat(f.Time.TTI, p.pick))
	}
	ti := func(b gbt.Breakdown) string {
		if !b.TI.Available {
			return "not available"
		}
		return fmtDur(msToNs(b.TI.Ms))
	}
	add("T_I", ti(m.Time), ti(f.Time))
	return t
}

// lifecycleRows are the lifecycle events that happened (GB-7.7.1-j-1), in
// the standard's order.
func lifecycleRows(ev gbt.LifecycleEvents) []kv {
	var rows []kv
	for e := gbt.EventTestStart; e <= gbt.EventResultUploadComplete; e++ {
		if t := ev.Time(e); !t.IsZero() {
			rows = append(rows, kv{e.String(), t.Format("2006-01-02 15:04:05.000 MST")})
		}
	}
	return rows
}

// infoRows are the test information fields (7.1 a), GB-6.1-a) that are
// set, named by their keys in gbt_result.json ("servers[0].cpu.model"),
// coded fields by their names ("closed", "fixed"), then the test's
// scenario, timeout class, loss threshold, seed and schedule.
func infoRows(t *gbt.Test) []kv {
	var rows []kv
	if t.Scenario != "" {
		rows = append(rows, kv{"scenario", t.Scenario})
	}
	rows = append(rows, kv{"arrival", arrivalText(t)})
	if t.TimeoutClass != 0 {
		rows = append(rows, kv{"timeout_class", fmt.Sprint(int(t.TimeoutClass))})
	}
	rows = append(rows, kv{"loss_threshold", fmtFraction(t.LossThreshold)})
	if t.Schedule.Hash != "" {
		rows = append(rows, kv{"schedule", fmt.Sprintf("seed %d, hash %s", t.Schedule.Seed, t.Schedule.Hash)})
	}
	if len(t.Precision) > 0 {
		rows = append(rows, kv{"precision", precisionText(t.Precision)})
	}
	if t.Generator != "" {
		rows = append(rows, kv{"generator", t.Generator})
	}
	flatten(&rows, "test_info.", reflect.ValueOf(t.Info))
	return rows
}

// arrivalText gives the arrival parameters the mode uses.
func arrivalText(t *gbt.Test) string {
	a := t.Arrival
	parts := []string{gbtModeText(t)}
	if a.Lambda > 0 {
		parts = append(parts, "λ "+fmtRate(a.Lambda, "jobs/s"))
	}
	if a.Period > 0 {
		parts = append(parts, fmt.Sprintf("period %s, %d jobs each", fmtDur(int64(a.Period)), a.N))
	}
	if a.Duration > 0 {
		parts = append(parts, "duration "+fmtDur(int64(a.Duration)))
	}
	if a.Bursts > 0 {
		starts := make([]string, len(a.BurstStarts))
		for i, s := range a.BurstStarts {
			starts[i] = fmtDur(int64(s))
		}
		parts = append(parts, fmt.Sprintf("%d bursts of %s (σ %s) at %s", a.Bursts, fmtDur(int64(a.BurstLength)),
			fmtRate(a.Concurrency(), "jobs/s"), strings.Join(starts, ", ")))
	}
	if m := t.Mixed; m != nil {
		parts = append(parts, fmt.Sprintf("foreign jobs λ %s over %s samples", fmtRate(m.Lambda, "jobs/s"), fmtCount(m.QSLSize)))
	}
	if a.Timeout > 0 {
		parts = append(parts, "timeout "+fmtDur(int64(a.Timeout)))
	} else {
		parts = append(parts, "no timeout")
	}
	return strings.Join(parts, "; ")
}

func precisionText(l testinfo.PrecisionList) string {
	s := make([]string, len(l))
	for i, p := range l {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

var (
	stringerType = reflect.TypeFor[fmt.Stringer]()
	timeType     = reflect.TypeFor[time.Time]()
)

// flatten appends the set (non-zero) fields of v under their JSON keys.
func flatten(rows *[]kv, prefix string, v reflect.Value) {
	if !v.IsValid() || v.IsZero() {
		return
	}
	if v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		flatten(rows, prefix, v.Elem())
		return
	}
	key := strings.TrimSuffix(prefix, ".")
	switch {
	case v.Type() == timeType:
		*rows = append(*rows, kv{key, v.Interface().(time.Time).Format("2006-01-02 15:04:05 MST")})
		return
	case v.Type().Implements(stringerType):
		*rows = append(*rows, kv{key, v.Interface().(fmt.Stringer).String()})
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			flatten(rows, prefix+name+".", v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.String {
			s := make([]string, v.Len())
			for i := range v.Len() {
				s[i] = v.Index(i).String()
			}
			*rows = append(*rows, kv{key, strings.Join(s, ", ")})
			return
		}
		for i := range v.Len() {
			flatten(rows, fmt.Sprintf("%s[%d].", key, i), v.Index(i))
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			flatten(rows, fmt.Sprintf("%s%v.", prefix, k), v.MapIndex(k))
		}
	case reflect.Float32, reflect.Float64:
		*rows = append(*rows, kv{key, fmtSig(v.Float(), 7)})
	default:
		*rows = append(*rows, kv{key, fmt.Sprint(v.Interface())})
	}
}

// lossChart draws the samples lost per second as bars (inline SVG, so it
// needs no script): the main jobs, and a mixed test's foreign jobs beside
// them. It is empty when there is no second to draw.
func lossChart(main, foreign []int) template.HTML {
	n := max(len(main), len(foreign))
	if n == 0 {
		return ""
	}
	peak := 0
	for _, v := range slices.Concat(main, foreign) {
		peak = max(peak, v)
	}
	scale := max(peak, 1)
	const w, h, left, right, top, bottom = 760.0, 200.0, 50.0, 20.0, 16.0, 36.0
	pw, ph := w-left-right, h-top-bottom
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="gbt-loss-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="Samples lost per second">`,
		svgNum(w), svgNum(h), svgNum(w), svgNum(h))
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="currentColor" stroke-opacity="0.3"/>`, svgNum(left), svgNum(top), svgNum(pw), svgNum(ph))
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="currentColor">%s</text>`, svgNum(left-4), svgNum(top+10), fmtCount(uint64(scale)))
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="currentColor">0</text>`, svgNum(left-4), svgNum(top+ph))
	slot := pw / float64(n)
	series := [][]int{main}
	colours := []string{"#3b7dd8"}
	names := []string{"main jobs"}
	if foreign != nil {
		series, colours, names = append(series, foreign), append(colours, "#d8613b"), append(names, "foreign jobs")
	}
	bw := slot * 0.8 / float64(len(series))
	for si, s := range series {
		for i, v := range s {
			if v == 0 {
				continue
			}
			bh := ph * float64(v) / float64(scale)
			x := left + slot*float64(i) + slot*0.1 + bw*float64(si)
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.8"><title>second %d: %s %s lost</title></rect>`,
				svgNum(x), svgNum(top+ph-bh), svgNum(bw), svgNum(bh), colours[si], i, fmtCount(uint64(v)), names[si])
		}
	}
	step := n/10 + 1
	for i := 0; i < n; i += step {
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="10" text-anchor="middle" fill="currentColor">%d</text>`, svgNum(left+slot*(float64(i)+0.5)), svgNum(top+ph+14), i)
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="middle" fill="currentColor">second of the run</text>`, svgNum(left+pw/2), svgNum(h-4))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
