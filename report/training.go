package report

import (
	"aimeter/sysinfo"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"aimeter/train"
)

// Training is a GB/T 45087 training run (clause 6) shown as a report page
// of its own: the Table 6 times, throughput, utilisation, power and the
// Annex E.1 efficiencies, the per-trial and per-epoch tables, a chart of
// throughput and accuracy per epoch and a timeline of the phases. Both
// charts are inline SVG, so the page needs neither JavaScript nor network.
type Training struct {
	// Title heads the page; "" means "aimeter training report".
	Title string
	// Name labels the run (for example "reference workload"); "" means
	// "training run".
	Name string
	// Source says how the events came in ("Go API", "MLLOG child …",
	// "collector …"); "" leaves the line out.
	Source string
	// System describes the machine aimeter ran on.
	System sysinfo.System
	// Result is the computed result (gbt_training.json). Required.
	Result *train.ResultFile
	// Events are the training events the result was computed from; they
	// give the timeline. nil: no timeline.
	Events []train.Event
	// Notes are free-form remarks shown under the headline figures (the
	// child's exit status, the parser's counts); nil shows none.
	Notes []string
}

// DefaultTrainingTitle is the page title of a Training without one.
const DefaultTrainingTitle = "aimeter training report"

//go:embed training.html.tmpl
var trainingTemplate string

var trainingTmpl = template.Must(template.New("training").Parse(trainingTemplate))

// trainingView is what the training template renders.
type trainingView struct {
	Title, Name, Source string
	PageCSS             template.CSS
	System              []kv
	Headline            []kv
	Notes               []string
	Times               table
	Figures             table
	Epochs              table
	Validations         table
	Nodes               table
	Absent              []string
	EpochChart          template.HTML
	Timeline            template.HTML
	Problems            []string
	Log                 string
	Info                string
}

// WriteTraining writes t as one self-contained HTML page to w. Every
// figure that the result lacks is written "--" (GB-6.6.2-T6-FNd).
func WriteTraining(w io.Writer, t *Training) error {
	if t == nil || t.Result == nil || t.Result.Metrics == nil {
		return errors.New("report: WriteTraining needs a Training with a Result and its Metrics")
	}
	v := buildTraining(t)
	var buf bytes.Buffer
	if err := trainingTmpl.Execute(&buf, v); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// dash is how an absent figure is written.
const dash = "--"

func optMs(p *float64) string {
	if p == nil {
		return dash
	}
	return fmtDur(int64(math.Round(*p * 1e6)))
}

func optNum(p *float64, unit string) string {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return dash
	}
	return strings.TrimSpace(fmtSig(*p, 4) + " " + unit)
}

func optPct(p *float64) string {
	if p == nil {
		return dash
	}
	return strconv.FormatFloat(100**p, 'f', 2, 64) + " %"
}

func optAcc(p *float64) string {
	if p == nil {
		return dash
	}
	return train.FormatAccuracy(p)
}

func buildTraining(t *Training) *trainingView {
	res := t.Result
	m := res.Metrics
	v := &trainingView{Title: t.Title, Name: t.Name, Source: t.Source, PageCSS: template.CSS(pageCSS), System: systemRows(t.System), Notes: t.Notes}
	if v.Title == "" {
		v.Title = DefaultTrainingTitle
	}
	if v.Name == "" {
		v.Name = "training run"
	}
	unit := m.Unit
	scenario := dash
	if s := res.Scenario; s != nil {
		scenario = fmt.Sprintf("%s (%s, %s)", s.ID, s.Type, s.Dataset)
	}
	target := dash
	if tg := res.Config.Target; tg != nil {
		target = tg.String()
	}
	mp := m.MLPerf
	mlperf := optNum(mp.OlympicAverageMin, "min") + fmt.Sprintf(" (drop %d, failed %d)", mp.Drop, mp.Failed)
	if mp.Benchmark != "" {
		mlperf = optNum(mp.OlympicAverageMin, "min") + fmt.Sprintf(" (%s: %d of %d runs, drop %d, did not converge %d)", mp.Benchmark, len(m.Trials), mp.RequiredRuns, mp.Drop, mp.Failed)
	}
	if mp.Reason != "" {
		v.Absent = append(v.Absent, "MLPerf "+mp.Reason)
	}
	if mp.Note != "" {
		v.Absent = append(v.Absent, "MLPerf: "+mp.Note+": "+optNum(mp.MeanMin, "min")+".")
	}
	// Each reason once, with the trials it holds for.
	var reasons []string
	trials := map[string][]int{}
	for _, tr := range m.Trials {
		if tr.MLPerfFailure != "" {
			v.Absent = append(v.Absent, fmt.Sprintf("Trial %d did not converge: %s.", tr.Trial, tr.MLPerfFailure))
		}
		for _, k := range slices.Sorted(maps.Keys(tr.NotAvailable)) {
			r := tr.NotAvailable[k]
			if trials[r] == nil {
				reasons = append(reasons, r)
			}
			trials[r] = append(trials[r], tr.Trial)
		}
	}
	for _, r := range reasons {
		v.Absent = append(v.Absent, trialList(trials[r], len(m.Trials))+": "+r+".")
	}
	thText := optNum(m.Throughput, unit)
	if m.Throughput == nil {
		thText = res.Reported.Instead("Th") // dash, with the workload's figure where it set one
	}
	v.Headline = []kv{
		{"Scenario", scenario},
		{"Quality target", target},
		{"Trials", strconv.Itoa(len(m.Trials))},
		{"Mean T_TR", optMs(m.MeanTTRMs)},
		{"Throughput Th", thText},
		{"Cluster throughput Th_CL", optNum(m.ClusterThroughput, unit)},
		{"Effective computing power Th-bar", optNum(m.ThBar, "")},
		{"Training efficiency (E.1.2)", optNum(m.TrainingEfficiency, "per kWh")},
		{"Mean T_NC", summaryMs(m.NC)},
		{"MLPerf time-to-train (olympic average)", mlperf},
	}
	v.Times = table{Head: []string{"Trial", "Status", "T_T", "T_L", "T_w", "T_TR", "mean T_EP", "T_CV", "T_P", "Time to train"}}
	v.Validations = table{Head: []string{"Trial", "Validation", "Samples", "T_V", "Accuracy"}}
	v.Figures = table{Head: []string{"Trial", "Th", "Th_CL", "Utilisation", "P_CTR", "Energy", "E_s / E_CL", "Final accuracy", "Target reached", "Training efficiency"}}
	v.Epochs = table{Head: []string{"Trial", "Epoch", "T_EP", "Samples", "Throughput", "Accuracy", "Utilisation", "P_EP"}}
	v.Nodes = table{Head: []string{"Trial", "Node", "mean T_EP", "Set size", "Th_n", "P_TR", "P_TRmax", "Utilisation"}}
	for _, tr := range m.Trials {
		trial := strconv.Itoa(tr.Trial)
		status := tr.Status
		if status == "" {
			status = dash
		}
		if tr.TrialStatus != "" && tr.TrialStatus != "success" {
			status += " (trial " + tr.TrialStatus + ")"
		}
		tep := optMs(tr.TEPMeanMs)
		switch {
		case tr.TEPFromSamples && tr.TEPMeanMs != nil:
			tep += " (from samples)"
		case tr.TEPFromBlocks && tr.TEPMeanMs != nil:
			tep += " (from blocks)"
		}
		v.Times.Rows = append(v.Times.Rows, []string{trial, status, optMs(tr.TTMs), optMs(tr.TLMs), optMs(tr.TWMs), optMs(tr.TTRMs), tep, optMs(tr.TCVMs), optMs(tr.TPMs), optNum(tr.TimeToTrainMin, "min")})
		for _, val := range tr.Validations {
			if val.Samples > 0 {
				v.Validations.Rows = append(v.Validations.Rows, []string{trial, strconv.Itoa(val.Index), fmtCount(uint64(val.Samples)), optMs(&val.TVMs), optAcc(val.Accuracy)})
			}
		}
		reached := dash
		if tr.ReachedTarget != nil {
			reached = map[bool]string{true: "yes", false: "no"}[*tr.ReachedTarget]
		}
		util := optPct(tr.Utilization)
		if tr.Utilization != nil && !tr.UtilizationValid {
			util += " (fewer than 3 samples per chip)"
		}
		kwh := dash
		if tr.EnergyKWh != nil {
			kwh = fmtSig(*tr.EnergyKWh*1000, 4) + " Wh"
		}
		v.Figures.Rows = append(v.Figures.Rows, []string{trial, optNum(tr.Throughput, unit), optNum(tr.ClusterThroughput, unit), util, optNum(tr.ClusterPowerW, "W"), kwh,
			optNum(tr.EnergyEfficiency, "MB/J"), optAcc(tr.FinalAccuracy), reached, optNum(tr.TrainingEfficiency, "per kWh")})
		for _, e := range tr.Epochs {
			samples := dash
			if e.Samples > 0 {
				samples = fmtCount(uint64(e.Samples))
			}
			v.Epochs.Rows = append(v.Epochs.Rows, []string{trial, strconv.Itoa(e.Epoch), optMs(&e.TEPMs), samples, optNum(e.Throughput, unit), optAcc(e.Accuracy), optPct(e.Utilization), optNum(e.PowerW, "W")})
		}
		for _, n := range tr.Nodes {
			name := n.Node
			if name == "" {
				name = "(this machine)"
			}
			size := dash
			if n.SetSize > 0 {
				size = fmtCount(uint64(n.SetSize))
			}
			v.Nodes.Rows = append(v.Nodes.Rows, []string{trial, name, optMs(n.TEPMeanMs), size, optNum(n.Throughput, unit), optNum(n.PowerW, "W"), optNum(n.PowerMaxW, "W"), optPct(n.Utilization)})
		}
	}
	for _, p := range m.Problems {
		v.Problems = append(v.Problems, p.String())
	}
	v.Log = strings.Join(res.Log, "\n")
	info := struct {
		Info     any `json:"info"`
		Training any `json:"training_info"`
	}{res.Info, res.Training}
	if b, err := json.MarshalIndent(info, "", "  "); err == nil {
		v.Info = string(b)
	}
	v.EpochChart = epochChart(m)
	v.Timeline = timelineSVG(t.Events)
	return v
}

// trialList names trials: "Trial 2", "Trials 1, 3", or "Every trial" when
// they are all n.
func trialList(ts []int, n int) string {
	switch {
	case len(ts) == 1 && n > 1:
		return "Trial " + strconv.Itoa(ts[0])
	case len(ts) == n:
		if n == 1 {
			return "Trial " + strconv.Itoa(ts[0])
		}
		return "Every trial"
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = strconv.Itoa(t)
	}
	return "Trials " + strings.Join(parts, ", ")
}

func summaryMs(s *train.Summary) string {
	if s == nil || s.Count == 0 {
		return dash
	}
	return fmt.Sprintf("%s (%d transfers, %s – %s)", optMs(&s.Mean), s.Count, optMs(&s.Min), optMs(&s.Max))
}

// svgNum writes a coordinate with one decimal.
func svgNum(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// epochChart draws throughput per epoch as bars and accuracy per epoch as
// a line with points (0–1 on the right axis), epochs of every trial side
// by side.
func epochChart(m *train.Metrics) template.HTML {
	type point struct {
		label string
		th    *float64
		acc   *float64
	}
	var pts []point
	maxTh := 0.0
	for _, tr := range m.Trials {
		for _, e := range tr.Epochs {
			pts = append(pts, point{fmt.Sprintf("%d.%d", tr.Trial, e.Epoch), e.Throughput, e.Accuracy})
			if e.Throughput != nil && *e.Throughput > maxTh {
				maxTh = *e.Throughput
			}
		}
	}
	if len(pts) == 0 {
		return ""
	}
	const w, h, left, right, top, bottom = 760.0, 260.0, 70.0, 50.0, 20.0, 40.0
	pw, ph := w-left-right, h-top-bottom
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="train-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="Throughput and accuracy per epoch">`, svgNum(w), svgNum(h), svgNum(w), svgNum(h))
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="currentColor" stroke-opacity="0.3"/>`, svgNum(left), svgNum(top), svgNum(pw), svgNum(ph))
	slot := pw / float64(len(pts))
	if maxTh > 0 {
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="currentColor">%s</text>`, svgNum(left-4), svgNum(top+10), template.HTMLEscapeString(fmtSig(maxTh, 4)))
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="currentColor">0</text>`, svgNum(left-4), svgNum(top+ph))
		fmt.Fprintf(&b, `<text x="12" y="%s" font-size="11" fill="#3b7dd8" transform="rotate(-90 12 %s)" text-anchor="middle">%s</text>`, svgNum(top+ph/2), svgNum(top+ph/2), template.HTMLEscapeString(m.Unit))
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" fill="currentColor">1.0</text>`, svgNum(left+pw+4), svgNum(top+10))
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" fill="currentColor">0</text>`, svgNum(left+pw+4), svgNum(top+ph))
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" fill="#d8613b" text-anchor="end">accuracy</text>`, svgNum(w-2), svgNum(top-6))
	var line []string
	for i, p := range pts {
		x := left + slot*float64(i)
		if p.th != nil && maxTh > 0 {
			bh := ph * (*p.th / maxTh)
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="#3b7dd8" fill-opacity="0.7"><title>epoch %s: %s</title></rect>`,
				svgNum(x+slot*0.15), svgNum(top+ph-bh), svgNum(slot*0.7), svgNum(bh), p.label, template.HTMLEscapeString(fmtRate(*p.th, m.Unit)))
		}
		if len(pts) <= 40 || i%(len(pts)/20+1) == 0 {
			fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="10" text-anchor="middle" fill="currentColor">%s</text>`, svgNum(x+slot/2), svgNum(top+ph+14), p.label)
		}
		if p.acc != nil {
			a := min(max(*p.acc, 0), 1)
			y := top + ph*(1-a)
			line = append(line, svgNum(x+slot/2)+","+svgNum(y))
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="#d8613b"><title>epoch %s: accuracy %s</title></circle>`, svgNum(x+slot/2), svgNum(y), p.label, train.FormatAccuracy(p.acc))
		}
	}
	if len(line) > 1 {
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#d8613b" stroke-width="1.5"/>`, strings.Join(line, " "))
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="middle" fill="currentColor">trial.epoch</text>`, svgNum(left+pw/2), svgNum(h-6))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// phase is one interval of the timeline.
type phase struct {
	lane       int
	start, end int64
	label      string
}

// timelineLanes name the rows of the timeline, in order.
var timelineLanes = []string{"data read", "start-up", "epochs", "validations", "conversion", "persistence"}

// timelinePhases pairs the start and end events of each phase, per trial:
// the earliest start and the latest end over ranks, as the metrics do.
func timelinePhases(events []train.Event) []phase {
	type key struct {
		kind  train.Kind
		trial int
		index int
	}
	first := map[key]int64{}
	last := map[key]int64{}
	note := func(k key, t int64, end bool) {
		if end {
			if old, ok := last[k]; !ok || t > old {
				last[k] = t
			}
			return
		}
		if old, ok := first[k]; !ok || t < old {
			first[k] = t
		}
	}
	starts := map[train.Kind]struct {
		lane int
		end  train.Kind
	}{
		train.DataReadStart:   {0, train.DataReadEnd},
		train.TrainStart:      {1, train.AcceleratorStart},
		train.EpochStart:      {2, train.EpochEnd},
		train.ValidationStart: {3, train.ValidationEnd},
		train.ConversionStart: {4, train.ConversionEnd},
		train.PersistStart:    {5, train.PersistEnd},
	}
	ends := map[train.Kind]train.Kind{}
	for s, e := range starts {
		ends[e.end] = s
	}
	for _, e := range events {
		trial := max(e.Trial, 1)
		if _, ok := starts[e.Kind]; ok {
			idx := e.Epoch
			if e.Kind == train.TrainStart || e.Kind == train.DataReadStart {
				idx = 0
			}
			note(key{e.Kind, trial, idx}, e.Time, false)
		}
		if s, ok := ends[e.Kind]; ok {
			idx := e.Epoch
			if e.Kind == train.AcceleratorStart || e.Kind == train.DataReadEnd {
				idx = 0
			}
			note(key{s, trial, idx}, e.Time, true)
		}
	}
	var out []phase
	for k, s := range first {
		end, ok := last[k]
		if !ok || end < s {
			continue
		}
		lane := starts[k.kind].lane
		label := fmt.Sprintf("trial %d %s", k.trial, timelineLanes[lane])
		if k.index > 0 {
			label = fmt.Sprintf("trial %d %s %d", k.trial, strings.TrimSuffix(timelineLanes[lane], "s"), k.index)
		}
		out = append(out, phase{lane, s, end, label})
	}
	slices.SortFunc(out, func(a, b phase) int {
		if a.start != b.start {
			if a.start < b.start {
				return -1
			}
			return 1
		}
		if a.lane != b.lane {
			return a.lane - b.lane
		}
		return strings.Compare(a.label, b.label)
	})
	return out
}

// timelineSVG draws the phases on one time axis, one lane per phase kind.
func timelineSVG(events []train.Event) template.HTML {
	ph := timelinePhases(events)
	if len(ph) == 0 {
		return ""
	}
	t0, t1 := ph[0].start, ph[0].end
	for _, p := range ph {
		t0, t1 = min(t0, p.start), max(t1, p.end)
	}
	span := float64(max(t1-t0, 1))
	const w, left, right, laneH, top = 760.0, 90.0, 10.0, 22.0, 10.0
	h := top + laneH*float64(len(timelineLanes)) + 30
	pw := w - left - right
	colors := []string{"#8a6bd1", "#c9a227", "#3b7dd8", "#d8613b", "#2aa198", "#6c757d"}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="train-timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="Timeline of the training phases">`, svgNum(w), svgNum(h), svgNum(w), svgNum(h))
	for i, name := range timelineLanes {
		y := top + laneH*float64(i)
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="currentColor">%s</text>`, svgNum(left-6), svgNum(y+laneH*0.65), name)
	}
	for _, p := range ph {
		x := left + pw*float64(p.start-t0)/span
		wd := max(pw*float64(p.end-p.start)/span, 1)
		y := top + laneH*float64(p.lane) + 3
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.8"><title>%s: %s</title></rect>`,
			svgNum(x), svgNum(y), svgNum(wd), svgNum(laneH-6), colors[p.lane], template.HTMLEscapeString(p.label), fmtDur(p.end-p.start))
	}
	axisY := top + laneH*float64(len(timelineLanes)) + 4
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="currentColor" stroke-opacity="0.5"/>`, svgNum(left), svgNum(axisY), svgNum(left+pw), svgNum(axisY))
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" fill="currentColor">0</text>`, svgNum(left), svgNum(axisY+16))
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="currentColor">%s</text>`, svgNum(left+pw), svgNum(axisY+16), fmtDur(int64(span)))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
