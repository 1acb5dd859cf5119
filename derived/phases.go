package derived

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/derived/metrics"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/report"
	"aimeter/telemetry"
)

// MinWorkCoverage is the least coverage of a phase's window by readings
// for which result.json gives energy per sample and per token: below it,
// the energy is that of the covered part only, and dividing it by the work
// of the whole phase would understate the cost.
const MinWorkCoverage = 0.95

// The names of the phases of result.json's power.phases.
const (
	// PhaseWarmup is a fixed-concurrency run's warm-up (before the
	// records' clock starts, so its window is negative).
	PhaseWarmup = "warm-up"
	// PhaseMLPerfWindow is the reported pass from its start to its last
	// completion: LoadGen's power_begin to power_end.
	PhaseMLPerfWindow = "mlperf-power-window"
	// PhaseGBTRun is a GB/T test's T_I: from the test's time zero to its
	// end (gbt.Test.EndNs).
	PhaseGBTRun = "gbt-t_i"
	// PhaseSteadySuperPass and PhaseSteadyInFlight are the steady-state
	// windows of a token run's reported pass (metrics.SteadyOf), where found:
	// ML.ENERGY reports joules per output token over the steady state.
	PhaseSteadySuperPass = "steady-super-pass"
	PhaseSteadyInFlight  = "steady-in-flight"
)

// WorkEnergy is the energy of a phase per unit of the work done in it.
// A figure is nil where the phase has no energy figure, no such work, or
// too little coverage (MinWorkCoverage).
type WorkEnergy struct {
	// Samples counts the samples that completed successfully in the
	// phase; OutputTokens their output tokens (0 for a run without).
	Samples      uint64 `json:"samples"`
	OutputTokens int64  `json:"output_tokens,omitempty"`
	// JPerSample and SamplesPerJ are the energy per successful sample and
	// its inverse; JPerToken and TokensPerJ the same per output token.
	JPerSample  *float64 `json:"j_per_sample,omitempty"`
	SamplesPerJ *float64 `json:"samples_per_j,omitempty"`
	JPerToken   *float64 `json:"j_per_token,omitempty"`
	TokensPerJ  *float64 `json:"tokens_per_j,omitempty"`
}

// PhaseEnergy is the telemetry over one phase of a run.
type PhaseEnergy struct {
	// Name is one of the Phase… names, or a pass's kind with its index
	// among the passes ("performance", "accuracy", "find-peak-probe 2").
	Name string `json:"name"`
	telemetry.Window
	// EnergyJ, AvgW, PeakW, Method and Coverage are the totals over the
	// devices (telemetry.Summary); Note says what limits them.
	EnergyJ  *float64 `json:"energy_j,omitempty"`
	AvgW     *float64 `json:"avg_w,omitempty"`
	PeakW    *float64 `json:"peak_w,omitempty"`
	Method   string   `json:"method,omitempty"`
	Coverage float64  `json:"coverage"`
	WorkEnergy
	Note string `json:"note,omitempty"`
}

// workOf divides energy over the work (samples, tokens), withholding the
// figures below MinWorkCoverage; note says why figures are missing.
func workOf(s telemetry.Summary, samples uint64, tokens int64) (w WorkEnergy, note string) {
	w.Samples, w.OutputTokens = samples, tokens
	if s.EnergyJ == nil || *s.EnergyJ <= 0 {
		return w, ""
	}
	if s.Coverage < MinWorkCoverage {
		return w, fmt.Sprintf("readings cover %.1f %% of the phase (< %g %%): no energy per sample or token", s.Coverage*100, MinWorkCoverage*100)
	}
	e := *s.EnergyJ
	if samples > 0 {
		jps, spj := e/float64(samples), float64(samples)/e
		w.JPerSample, w.SamplesPerJ = &jps, &spj
	}
	if tokens > 0 {
		jpt, tpj := e/float64(tokens), float64(tokens)/e
		w.JPerToken, w.TokensPerJ = &jpt, &tpj
	}
	return w, ""
}

// phaseOf summarises l over w with the work done in it.
func phaseOf(l *telemetry.Log, name string, w telemetry.Window, samples uint64, tokens int64) PhaseEnergy {
	s := telemetry.Summarize(l, w)
	p := PhaseEnergy{Name: name, Window: w, EnergyJ: s.EnergyJ, AvgW: s.AvgW, PeakW: s.PeakW, Method: s.Method, Coverage: s.Coverage, Note: s.Note}
	var note string
	p.WorkEnergy, note = workOf(s, samples, tokens)
	p.Note = joinNotes(p.Note, note)
	return p
}

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// passWork counts the successful samples of pass i and their output
// tokens, and finds its last completion (ns from the pass's start).
func passWork(res *loadgen.Result, i int) (samples uint64, tokens int64, last int64) {
	for r := range res.PassRecords(i) {
		if r.CompletedNs != loadgen.NoTime && r.CompletedNs > last {
			last = r.CompletedNs
		}
		if r.Status == loadgen.StatusOK {
			samples++
			tokens += max(r.Tokens, 0)
		}
	}
	return samples, tokens, last
}

// powerPhases are the phases of b's run that its telemetry can cover: the
// warm-up, each pass (from its start to its end), the MLPerf power window
// of the reported pass and a GB/T test's T_I.
func powerPhases(b *bundle.Bundle) []PhaseEnergy {
	l, res := telemetry.LogOf(b), b.Result
	origin := res.StartTime.UnixNano()
	var out []PhaseEnergy
	if inv := invocation.Of(b); inv != nil && inv.Warmup != nil && inv.Warmup.StartUnixNs != 0 {
		wu := inv.Warmup
		from := wu.StartUnixNs - origin
		w := telemetry.Window{FromNs: from, ToNs: from + wu.DurationNs}
		out = append(out, phaseOf(l, PhaseWarmup, w, wu.Requests-min(wu.Failed, wu.Requests), 0))
	}
	for i, p := range res.Passes {
		samples, tokens, last := passWork(res, i)
		start := p.StartUnixNs - origin
		name := string(p.Kind)
		if p.Kind == loadgen.PassFindPeak {
			name = fmt.Sprintf("%s %d", p.Kind, i)
		}
		end := max(p.EndNs, last)
		out = append(out, phaseOf(l, name, telemetry.Window{FromNs: start, ToNs: start + end}, samples, tokens))
		if p.Reported {
			out = append(out, phaseOf(l, PhaseMLPerfWindow, telemetry.Window{FromNs: start, ToNs: start + last}, samples, tokens))
		}
	}
	out = append(out, steadyPhases(b)...)
	if g := gbt.TestOf(b); g != nil && g.EndNs > 0 {
		// The records' time zero is the test's (gbt.Test.Start).
		from := g.Start.UnixNano() - origin
		if g.Start.IsZero() {
			from = 0
		}
		var samples uint64
		var tokens int64
		for r := range res.Records() {
			if r.Status == loadgen.StatusOK {
				samples++
				tokens += max(r.Tokens, 0)
			}
		}
		out = append(out, phaseOf(l, PhaseGBTRun, telemetry.Window{FromNs: from, ToNs: from + g.EndNs}, samples, tokens))
	}
	return out
}

// gbtPowerGrid resamples b's telemetry onto common instants over a GB/T
// test's T_I, on the records' clock, for gbt.Evaluate's Table 17 and
// Annex E figures (IN-73); nil without telemetry or without a node.
func gbtPowerGrid(b *bundle.Bundle) *gbt.PowerGrid {
	g := gbt.TestOf(b)
	if telemetry.LogOf(b) == nil || g == nil || b.Result == nil {
		return nil
	}
	// The records count from the test's time zero (gbt.Test.Start), the
	// telemetry from the run's start.
	off := int64(0)
	if !g.Start.IsZero() {
		off = g.Start.UnixNano() - b.Result.StartTime.UnixNano()
	}
	end := g.EndNs
	if end <= 0 {
		for _, p := range b.Result.Passes {
			end = max(end, p.EndNs)
		}
	}
	ts, nodes := telemetry.Grid(telemetry.LogOf(b), telemetry.Window{FromNs: off, ToNs: off + end}, 0)
	if len(nodes) == 0 {
		return nil
	}
	// NaN marks an instant without a value: no bound on the spacing.
	pg := &gbt.PowerGrid{T: make([]int64, len(ts))}
	for i, t := range ts {
		pg.T[i] = t - off
	}
	for _, n := range nodes {
		pg.Servers = append(pg.Servers, gbt.ServerPower{Node: n.Node, W: n.W})
	}
	return pg
}

// ReportPower is b's telemetry as the report draws it: each device's
// power on the reported pass's clock (its power readings, or for a device
// with an energy counter alone the counter's mean power between two
// readings, at their midpoint) and result.json's phases. Nil without
// telemetry or without a reported pass.
func ReportPower(b *bundle.Bundle, f *PowerFigures) *report.Power {
	l, res := telemetry.LogOf(b), b.Result
	if l == nil || res == nil || f == nil {
		return nil
	}
	pass := res.ReportedPass()
	if pass < 0 {
		return nil
	}
	shift := res.Passes[pass].StartUnixNs - res.StartTime.UnixNano()
	type key struct{ source, node, device string }
	power := map[key]*report.PowerSeries{}
	counters := map[key][]telemetry.Reading{}
	var order []key
	rs := slices.Clone(l.Readings)
	slices.SortStableFunc(rs, func(a, b telemetry.Reading) int { return cmp.Compare(a.T, b.T) })
	for _, r := range rs {
		k := key{r.Source, r.Node, r.Device}
		switch r.Kind {
		case telemetry.Power:
			s := power[k]
			if s == nil {
				s = &report.PowerSeries{}
				power[k] = s
			}
			s.TimesNs = append(s.TimesNs, r.T-shift)
			s.Watts = append(s.Watts, r.Value)
		case telemetry.Energy:
			counters[k] = append(counters[k], r)
		default:
			continue
		}
		if !slices.Contains(order, k) {
			order = append(order, k)
		}
	}
	out := &report.Power{Gaps: len(l.Gaps), Note: f.Note}
	for _, k := range order {
		label := k.source + " " + k.device
		if k.node != "" {
			label = k.source + " " + k.node + "/" + k.device
		}
		if s := power[k]; s != nil {
			s.Label = label
			out.Series = append(out.Series, *s)
			continue
		}
		c := counters[k]
		s := report.PowerSeries{Label: label + " (from its energy counter)"}
		for i := 1; i < len(c); i++ {
			dt := c[i].T - c[i-1].T
			w := math.NaN()
			// A step left out (a gap of the series) is no power either.
			if dt > 0 && c[i].Value >= c[i-1].Value && !l.LeftOut(telemetry.SeriesKey{Source: k.source, Node: k.node, Device: k.device, Kind: telemetry.Energy}, c[i-1].T, c[i].T) {
				w = (c[i].Value - c[i-1].Value) / (float64(dt) / 1e9)
			}
			s.TimesNs = append(s.TimesNs, c[i-1].T+dt/2-shift)
			s.Watts = append(s.Watts, w)
		}
		if len(s.TimesNs) > 0 {
			out.Series = append(out.Series, s)
		}
	}
	for _, ph := range f.Phases {
		out.Phases = append(out.Phases, report.PowerPhase{Name: ph.Name, FromNs: ph.FromNs - shift, ToNs: ph.ToNs - shift,
			EnergyJ: ph.EnergyJ, AvgW: ph.AvgW, PeakW: ph.PeakW, Coverage: ph.Coverage, JPerSample: ph.JPerSample, JPerToken: ph.JPerToken, Note: ph.Note})
	}
	return out
}

// steadyPhases are the steady-state windows of b's reported pass that
// metrics.SteadyOf finds (a token-latency run; none below its minimum),
// each with the work done in it by metrics.WindowWork's rule: its energy
// per sample and per token divide by that work, unrounded; Samples and
// OutputTokens give it rounded to whole ones.
func steadyPhases(b *bundle.Bundle) []PhaseEnergy {
	res := b.Result
	st := metrics.SteadyOf(res)
	if st == nil {
		return nil
	}
	pass := res.ReportedPass()
	shift := res.Passes[pass].StartUnixNs - res.StartTime.UnixNano()
	var out []PhaseEnergy
	for _, w := range st.Windows {
		if !w.Found || w.EndNs <= w.StartNs {
			continue
		}
		name := PhaseSteadyInFlight
		if w.Label == metrics.SuperPassLabel {
			name = PhaseSteadySuperPass
		}
		win := telemetry.Window{FromNs: shift + w.StartNs, ToNs: shift + w.EndNs}
		s := telemetry.Summarize(telemetry.LogOf(b), win)
		p := PhaseEnergy{Name: name, Window: win, EnergyJ: s.EnergyJ, AvgW: s.AvgW, PeakW: s.PeakW, Method: s.Method, Coverage: s.Coverage, Note: s.Note}
		var note string
		p.WorkEnergy, note = workOf(s, uint64(math.Round(w.Work.Requests)), int64(math.Round(w.Work.Tokens)))
		if p.JPerSample != nil {
			jps, spj := *s.EnergyJ/w.Work.Requests, w.Work.Requests / *s.EnergyJ
			p.JPerSample, p.SamplesPerJ = &jps, &spj
		}
		if p.JPerToken != nil {
			jpt, tpj := *s.EnergyJ/w.Work.Tokens, w.Work.Tokens / *s.EnergyJ
			p.JPerToken, p.TokensPerJ = &jpt, &tpj
		}
		p.Note = joinNotes(p.Note, note)
		out = append(out, p)
	}
	return out
}
