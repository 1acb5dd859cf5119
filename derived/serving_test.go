package derived

import (
	"testing"
	"time"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
)

// TestServingFigures checks result.json's goodput, send lateness and
// steady state against the records of a streaming Server run.
func TestServingFigures(t *testing.T) {
	st := loadgentest.SmallSettings(loadgen.Server, loadgen.PerformanceOnly)
	st.UseTokenLatencies = true
	st.ServerTTFTLatencyNs, st.ServerTPOTLatencyNs = 1_000_000, 1_000_000
	b := runBundle(t, &loadgentest.WireSUT{}, st)
	pass := b.Result.ReportedPass()

	// An end-to-end bound at the median latency: the successful samples
	// at or under it meet it, the failed and lost ones never do.
	var lats []int64
	var issued uint64
	for r := range b.Result.PassRecords(pass) {
		issued++
		if r.Status == loadgen.StatusOK {
			lats = append(lats, r.CompletedNs-r.ScheduledNs)
		}
	}
	bound := b.Result.Summary.Percentiles[0].SampleLatency
	var met uint64
	for _, l := range lats {
		if l <= bound {
			met++
		}
	}
	invocation.Set(b, &invocation.Invocation{SLO: &bundle.SLO{E2ENs: bound}})
	r, err := Of(b).Result()
	if err != nil {
		t.Fatal(err)
	}
	g := r.Goodput
	if g == nil || g.SLOSource != SLOFromInvocation || g.Met != met || g.Fraction != float64(met)/float64(issued) || g.SLO.E2ENs != bound {
		t.Errorf("goodput %+v, want %d of %d met under %v from the invocation", g, met, issued, time.Duration(bound))
	}

	// Without an SLO given, the token-latency bounds stand for one.
	invocation.Set(b, nil)
	set := Of(b)
	r, err = set.Result()
	if err != nil {
		t.Fatal(err)
	}
	// One summary for result.json, the report and the console, and the
	// records' own figures.
	if l := set.SendLateness(); l != r.SendLateness || l == nil || *l != *sendLatenessOf(b.Result) {
		t.Errorf("Set.SendLateness %+v is not result.json's %+v nor the records' %+v", l, r.SendLateness, sendLatenessOf(b.Result))
	}
	if g := r.Goodput; g == nil || g.SLOSource != SLOFromSettings || g.SLO != (bundle.SLO{TTFTNs: 1_000_000, TPOTNs: 1_000_000}) {
		t.Errorf("goodput from the settings: %+v", g)
	}

	if l := r.SendLateness; l == nil || l.Count != issued || l.P50 > l.P99 || l.P99 > l.Max {
		t.Errorf("send lateness %+v, want %d samples in order", l, issued)
	}
	if s := r.Steady; s == nil || len(s.Windows) != 2 || s.Windows[0].Label != SuperPassLabel || s.Windows[1].Label != InFlightLabel ||
		s.Whole.Samples != int(issued) || s.Whole.TTFTNs == nil {
		t.Errorf("steady state %+v", s)
	}
	if r.Sessions != nil {
		t.Errorf("sessions %+v in a run without sessions", r.Sessions)
	}
	// WireSUT streams three tokens 1 ns apart for each successful sample:
	// two gaps of 1 ns each, and the E2E latencies are the records'.
	if sm := r.Streaming; sm == nil || sm != set.Streaming() || sm.StreamedSamples != len(lats) || sm.ITLNs.Count != 2*uint64(len(lats)) ||
		sm.ITLNs.Min != 1 || sm.ITLNs.Max != 1 || sm.E2ENs.Count != uint64(len(lats)) || sm.OutputTokens != 3*int64(len(lats)) {
		t.Errorf("streaming %+v, want %d samples of 2 gaps of 1 ns and 3 tokens", sm, len(lats))
	}
	groups := map[string]int{}
	for _, row := range ReportServing(b).Rows {
		groups[row.Group]++
	}
	if groups["Goodput"] != 4 || groups["Send lateness"] != 2 || groups["Streaming"] != 3 || groups["Sessions"] != 0 {
		t.Errorf("the report's serving rows by group: %v", groups)
	}

	// An Offline run without token latencies has none of them but its
	// streaming figures (WireSUT streams).
	off := runBundle(t, &loadgentest.WireSUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
	r, err = Of(off).Result()
	if err != nil {
		t.Fatal(err)
	}
	if r.Goodput != nil || r.SendLateness != nil || r.Steady != nil || r.Sessions != nil || r.Streaming == nil {
		t.Errorf("an Offline run: goodput %v, lateness %v, steady %v, sessions %v, streaming %v", r.Goodput, r.SendLateness, r.Steady, r.Sessions, r.Streaming)
	}
	groups = map[string]int{}
	for _, row := range ReportServing(off).Rows {
		groups[row.Group]++
	}
	if len(groups) != 1 || groups["Streaming"] != 3 {
		t.Errorf("an Offline run's serving rows by group: %v, want the 3 streaming rows only", groups)
	}
}
