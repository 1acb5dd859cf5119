package derived

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/telemetry"
)

// constantLog is a 250 W "cpu" and a 150 W "gpu0" read every 100 ms from
// fromNs to toNs: 400 W in all.
func constantLog(origin time.Time, fromNs, toNs int64) *telemetry.Log {
	l := &telemetry.Log{StartUnixNs: origin.UnixNano(), PeriodNs: 1e8, Sources: []telemetry.SourceInfo{{Name: "replay", Spec: "replay:x.csv"}}}
	for t := fromNs; t <= toNs; t += 1e8 {
		l.Readings = append(l.Readings,
			telemetry.Reading{T: t, Source: "replay", Device: "cpu", Kind: telemetry.Power, Value: 250},
			telemetry.Reading{T: t, Source: "replay", Device: "gpu0", Kind: telemetry.Power, Value: 150})
	}
	return l
}

// The energy of each phase is 400 W × its window, and the energy per
// sample and per token divide that by the successful samples and their
// output tokens, counted here from the records without the code under
// test.
func TestPowerPhases(t *testing.T) {
	b := runBundle(t, &loadgentest.WireSUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
	res := b.Result
	// A warm-up of 2 s that ended 1 s before the run.
	invocation.Set(b, &invocation.Invocation{Warmup: &bundle.Warmup{Requests: 10, Failed: 2, DurationNs: 2e9, StartUnixNs: res.StartTime.UnixNano() - 3e9}})
	telemetry.SetLog(b, constantLog(res.StartTime, -4e9, 60e9))
	r, err := Of(b).Result()
	if err != nil {
		t.Fatal(err)
	}
	p := r.Power
	if p == nil {
		t.Fatal("no power figures")
	}
	var ok uint64
	var tokens int64
	for rec := range res.PassRecords(res.ReportedPass()) {
		if rec.Status == loadgen.StatusOK {
			ok++
			tokens += rec.Tokens
		}
	}
	if ok == 0 || tokens == 0 || ok == uint64(res.RecordCount()) {
		t.Fatalf("the run should have successes with tokens and failures: %d ok, %d tokens, %d records", ok, tokens, res.RecordCount())
	}
	byName := map[string]PhaseEnergy{}
	for _, ph := range p.Phases {
		byName[ph.Name] = ph
	}
	for _, name := range []string{PhaseWarmup, "performance", PhaseMLPerfWindow} {
		ph, found := byName[name]
		if !found {
			t.Fatalf("no phase %q in %+v", name, p.Phases)
		}
		if ph.EnergyJ == nil || !near(*ph.EnergyJ, 400*ph.Seconds()) || !near(*ph.AvgW, 400) || ph.Coverage != 1 {
			t.Errorf("%s: energy %v avg %v coverage %v: want 400 W × %v s, fully covered", name, ph.EnergyJ, ph.AvgW, ph.Coverage, ph.Seconds())
		}
	}
	wu := byName[PhaseWarmup]
	if wu.FromNs != -3e9 || wu.ToNs != -1e9 || wu.Samples != 8 || !near(*wu.JPerSample, 800.0/8) || wu.JPerToken != nil {
		t.Errorf("warm-up %+v: want -3 s to -1 s, 8 successful requests at 100 J each, no tokens", wu)
	}
	mw := byName[PhaseMLPerfWindow]
	if mw.Samples != ok || mw.OutputTokens != tokens || !near(*mw.JPerToken, *mw.EnergyJ/float64(tokens)) ||
		!near(*mw.SamplesPerJ, float64(ok) / *mw.EnergyJ) || !near(*mw.JPerSample, *mw.EnergyJ/float64(ok)) {
		t.Errorf("MLPerf window %+v: want %d samples, %d tokens", mw, ok, tokens)
	}
	if len(p.Clocks) != 1 || !p.Clocks[0].Pass || p.Clocks[0].Source != "replay" {
		t.Errorf("clock checks %+v: want the replay's, passed (its readings hold the window)", p.Clocks)
	}
	// A trace that ends before power_end fails MLPerf Power's check.
	short := b.Copy()
	telemetry.SetLog(short, constantLog(res.StartTime, -4e9, mw.ToNs/2))
	if rs, err := Of(short).Result(); err != nil || len(rs.Power.Clocks) != 1 || rs.Power.Clocks[0].Pass {
		t.Errorf("a short trace: %+v, %v: want a failed clock check", rs.Power.Clocks, err)
	}
	if p.JPerToken == nil || *p.JPerToken != *mw.JPerToken || p.Samples != ok {
		t.Errorf("top-level work figures %+v: want the MLPerf window's", p.WorkEnergy)
	}
}

// Per-work figures are withheld, with a note, where readings cover too
// little of the phase, and missing where there is no work.
func TestWorkOf(t *testing.T) {
	e := func(v float64) *float64 { return &v }
	cases := []struct {
		why             string
		s               telemetry.Summary
		samples         uint64
		tokens          int64
		wantSample, tok bool
		wantNote        bool
	}{
		{"covered, samples and tokens", telemetry.Summary{EnergyJ: e(100), Coverage: 1}, 10, 50, true, true, false},
		{"at the coverage bound", telemetry.Summary{EnergyJ: e(100), Coverage: MinWorkCoverage}, 10, 0, true, false, false},
		{"below the coverage bound: energy of part of the phase", telemetry.Summary{EnergyJ: e(100), Coverage: 0.5}, 10, 50, false, false, true},
		{"no energy figure", telemetry.Summary{Coverage: 0}, 10, 50, false, false, false},
		{"zero energy: no division by it", telemetry.Summary{EnergyJ: e(0), Coverage: 1}, 10, 50, false, false, false},
		{"no successful sample", telemetry.Summary{EnergyJ: e(100), Coverage: 1}, 0, 0, false, false, false},
	}
	for _, c := range cases {
		w, note := workOf(c.s, c.samples, c.tokens)
		if (w.JPerSample != nil) != c.wantSample || (w.JPerToken != nil) != c.tok || (note != "") != c.wantNote {
			t.Errorf("%s: got %+v, note %q", c.why, w, note)
		}
		if c.wantSample && (*w.JPerSample != 100/float64(c.samples) || *w.SamplesPerJ != float64(c.samples)/100) {
			t.Errorf("%s: J/sample %v samples/J %v", c.why, *w.JPerSample, *w.SamplesPerJ)
		}
		if c.tok && (*w.JPerToken != 2 || *w.TokensPerJ != 0.5) {
			t.Errorf("%s: J/token %v tokens/J %v: want 2 and 0.5", c.why, *w.JPerToken, *w.TokensPerJ)
		}
	}
}

// The report's power: a power series as read, a counter-only device as
// its mean power between readings at their midpoints, on the reported
// pass's clock, with result.json's phases; report.html has the section.
func TestReportPower(t *testing.T) {
	b := runBundle(t, &loadgentest.WireSUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
	res := b.Result
	shift := res.Passes[res.ReportedPass()].StartUnixNs - res.StartTime.UnixNano()
	telemetry.SetLog(b, constantLog(res.StartTime, -1e9, 5e9))
	telemetry.LogOf(b).Readings = append(telemetry.LogOf(b).Readings,
		telemetry.Reading{T: 0, Source: "nvml", Device: "gpu1", Kind: telemetry.Energy, Value: 10},
		telemetry.Reading{T: 2e9, Source: "nvml", Device: "gpu1", Kind: telemetry.Energy, Value: 110},
		telemetry.Reading{T: 3e9, Source: "nvml", Device: "gpu1", Kind: telemetry.Energy, Value: 100}) // went down
	r, err := Of(b).Result()
	if err != nil {
		t.Fatal(err)
	}
	p := ReportPower(b, r.Power)
	if p == nil || len(p.Series) != 3 || len(p.Phases) != len(r.Power.Phases) {
		t.Fatalf("report power %+v", p)
	}
	var gpu1 *struct{}
	for _, s := range p.Series {
		if strings.HasPrefix(s.Label, "nvml gpu1") {
			gpu1 = &struct{}{}
			if len(s.Watts) != 2 || s.Watts[0] != 50 || !math.IsNaN(s.Watts[1]) || s.TimesNs[0] != 1e9-shift || s.TimesNs[1] != 25e8-shift {
				t.Errorf("gpu1 %+v: want 50 W at 1 s, none at 2.5 s (the counter went down), on the pass's clock", s)
			}
		}
	}
	if gpu1 == nil {
		t.Error("no series for the counter-only device")
	}
	if p.Phases[0].FromNs != r.Power.Phases[0].FromNs-shift {
		t.Errorf("phase %+v not on the pass's clock", p.Phases[0])
	}
	dir := t.TempDir()
	if err := Write(dir, b); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, bundle.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "Power and energy") || !strings.Contains(string(page), `class="power-chart"`) {
		t.Error("report.html has no power section with its chart")
	}
}

// steadyBundle is a hand-made token-latency run: n requests sent every
// 10 ms, each lasting 110 ms (its first token 20 ms after the send, then 9
// more evenly), its pass starting 1 s into the run, at concurrency c.
func steadyBundle(c, n int) *bundle.Bundle {
	const ms = int64(time.Millisecond)
	var recs []loadgen.Record
	for i := range n {
		at := int64(i) * 10 * ms
		recs = append(recs, loadgen.Record{SeqID: uint64(i), QueryID: uint64(i), ScheduledNs: at, IssuedNs: at, FirstTokenNs: at + 20*ms,
			CompletedNs: at + 110*ms, Tokens: 10, Status: loadgen.StatusOK})
	}
	if c < 11 {
		// c slots one after another: a request every 110/c ms.
		for i := range recs {
			at := int64(i) * 110 * ms / int64(c)
			recs[i].ScheduledNs, recs[i].IssuedNs, recs[i].FirstTokenNs, recs[i].CompletedNs = at, at, at+20*ms, at+110*ms
		}
	}
	start := time.Unix(1_700_000_000, 0)
	res := &loadgen.Result{
		StartTime:           start,
		Effective:           loadgen.Effective{Scenario: loadgen.Server, Concurrency: uint64(c), UseTokenLatencies: true},
		QSLPerformanceCount: uint64(n),
		Passes: []loadgen.PassInfo{{Kind: loadgen.PassPerformance, FirstSeq: 0, EndSeq: uint64(n), StartUnixNs: start.UnixNano() + 1e9,
			EndNs: recs[n-1].CompletedNs, Reported: true}},
	}
	res.AttachRecords(recs)
	// result.json's serving figures need a summary; its own figures are
	// not under test here.
	res.Summary = &loadgen.Summary{SampleCount: uint64(n)}
	return &bundle.Bundle{Result: res, Version: "test", Name: "steady"}
}

// A steady window is a phase, its energy divided by the work done in it
// by metrics.WindowWork's rule, worked by hand; a window below the
// minimum is none.
func TestSteadyPowerPhases(t *testing.T) {
	b := steadyBundle(11, 200)
	telemetry.SetLog(b, constantLog(b.Result.StartTime, 0, 5e9))
	r, err := Of(b).Result()
	if err != nil {
		t.Fatal(err)
	}
	var ph *PhaseEnergy
	for i := range r.Power.Phases {
		switch r.Power.Phases[i].Name {
		case PhaseSteadyInFlight:
			ph = &r.Power.Phases[i]
		case PhaseSteadySuperPass:
			t.Errorf("a super-pass phase %+v, with no super-pass window", r.Power.Phases[i])
		}
	}
	// The in-flight window is [80 ms, 2020 ms) of the pass, 1 s into the
	// run: 400 W × 1.94 s = 776 J. Its work (derived/metrics'
	// TestSteadyInFlightFound): 1937 tokens, 193.7 requests, where counting
	// the samples sent in it gives 1920 and 192.
	if ph == nil {
		t.Fatalf("no %s phase: %+v", PhaseSteadyInFlight, r.Power.Phases)
	}
	if ph.FromNs != 1080e6 || ph.ToNs != 3020e6 || ph.EnergyJ == nil || !near(*ph.EnergyJ, 776) {
		t.Errorf("phase %+v, want 776 J over [1.08 s, 3.02 s) of the run", ph)
	}
	if ph.JPerToken == nil || !near(*ph.JPerToken, 776.0/1937) || ph.JPerSample == nil || !near(*ph.JPerSample, 776/193.7) ||
		ph.OutputTokens != 1937 || ph.Samples != 194 {
		t.Errorf("phase work %+v, want 776/1937 J per token, 776/193.7 J per sample", ph.WorkEnergy)
	}
	w := r.Steady.Windows[1]
	if !w.Found || w.Work == nil || !near(w.Work.OutputTokens, 1937) || w.Metrics == nil || !near(w.Metrics.OutputTokensPerSec, 1937/1.94) {
		t.Errorf("result.json's in-flight window %+v", w)
	}
	// Energy per token × tokens per second is the window's power.
	if got := *ph.JPerToken * w.Metrics.OutputTokensPerSec; !near(got, 400) {
		t.Errorf("J/token × tokens/s = %v W, want 400 W", got)
	}

	// At concurrency 4 the in-flight window ends at every completion:
	// not found, no phase, no figures in result.json.
	b = steadyBundle(4, 8)
	telemetry.SetLog(b, constantLog(b.Result.StartTime, 0, 5e9))
	if r, err = Of(b).Result(); err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Power.Phases {
		if p.Name == PhaseSteadyInFlight || p.Name == PhaseSteadySuperPass {
			t.Errorf("c=4: phase %+v of a window below the minimum", p)
		}
	}
	for _, w := range r.Steady.Windows {
		if w.Found || w.Reason == "" || w.Metrics != nil || w.Work != nil || w.StartNs != 0 || w.EndNs != 0 {
			t.Errorf("c=4: window %+v, want not found with a reason and nothing else", w)
		}
	}
	if w := r.Steady.Windows[1]; !strings.Contains(w.Reason, "too small to be a steady state") {
		t.Errorf("c=4: in-flight reason %q", w.Reason)
	}
}
