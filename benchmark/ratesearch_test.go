package benchmark_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/sweep"
)

// TestRateSearchAgainstSimulator searches request rates against the
// simulator over a real socket. Under a 30 s end-to-end bound every probe
// passes, so the search widens 5, 10, 20 and stops at the maximum; each
// probe is a Server run at its target_qps whose bundle records the SLO,
// and rate-search.json has every probe with its measures. Under a 1 ms
// TTFT bound (the server takes 5 ms) the first probe fails and the search
// ends there.
func TestRateSearchAgainstSimulator(t *testing.T) {
	url, _ := simulator(t, "5ms", "1ms", 0)
	base := openAIPlan(url, 16)
	base.Settings.Set = []string{"min_duration=300", "min_query_count=4"}
	dir := filepath.Join(t.TempDir(), "rates")
	var log bytes.Buffer
	sum, err := benchmark.RunRateSearch(context.Background(), benchmark.RateSearchPlan{
		Base: base, Dir: dir, SLO: sweep.SLO{E2E: 30 * time.Second}, Log: &log,
		Search: sweep.RateSearchOptions{Start: 5, Max: 20, Target: 0.9},
	})
	if err != nil {
		t.Fatal(err)
	}
	var qps []float64
	for _, p := range sum.Probes {
		qps = append(qps, p.TargetQPS)
	}
	if sum.Stop != sweep.StopLimit || sum.Best == nil || *sum.Best != 20 || !slices.Equal(qps, []float64{5, 10, 20}) || len(sum.Points) != 3 {
		t.Fatalf("search %+v: want probes 5, 10, 20, all passing", sum.RateSearchResult)
	}
	for i, pr := range sum.Probes {
		b, err := bundle.Read(filepath.Join(dir, pr.Dir))
		if err != nil {
			t.Fatal(err)
		}
		e := b.Result.Effective
		if e.Scenario.String() != "Server" || e.TargetQPS != pr.TargetQPS || e.Concurrency != 0 {
			t.Errorf("probe %s ran %v at %g requests/s (concurrency %d), want Server at %g", pr.Dir, e.Scenario, e.TargetQPS, e.Concurrency, pr.TargetQPS)
		}
		if s := invocation.Of(b).SLO; s == nil || s.E2ENs != int64(30*time.Second) {
			t.Errorf("probe %s recorded SLO %+v", pr.Dir, s)
		}
		if p := sum.Points[i]; p.Verdict == "" || p.Goodput == nil || p.Goodput.Fraction != pr.Fraction || pr.Fraction != 1 || p.Dir != pr.Dir {
			t.Errorf("probe %+v, its point %+v", pr, p)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, benchmark.RateSearchFile))
	if err != nil {
		t.Fatal(err)
	}
	var back benchmark.RateSearchSummary
	if err := json.Unmarshal(data, &back); err != nil || back.Schema != benchmark.RateSearchSchema || back.Best == nil || *back.Best != 20 || len(back.Probes) != 3 {
		t.Errorf("%s: %v, %+v", benchmark.RateSearchFile, err, back)
	}
	// The page was written with the summary, and is written again from
	// rate-search.json alone, byte for byte.
	pagePath := filepath.Join(dir, benchmark.RateSearchPageFile)
	page, err := os.ReadFile(pagePath)
	if err != nil || !bytes.Contains(page, []byte("is 20 requests/s, the maximum searched (it may go higher)")) {
		t.Fatalf("%s: %v", benchmark.RateSearchPageFile, err)
	}
	if err := os.Remove(pagePath); err != nil {
		t.Fatal(err)
	}
	if !benchmark.IsRateSearch(dir) || benchmark.IsRateSearch(filepath.Join(dir, sum.Probes[0].Dir)) {
		t.Error("IsRateSearch does not tell the search directory from a probe's bundle")
	}
	if _, err := benchmark.WriteRateSearchPage(dir); err != nil {
		t.Fatal(err)
	}
	if again, err := os.ReadFile(pagePath); err != nil || !bytes.Equal(again, page) {
		t.Errorf("the page written again from %s differs from the search's (%v)", benchmark.RateSearchFile, err)
	}
	if n := strings.Count(log.String(), "req/s target"); n != 3 {
		t.Errorf("%d log lines, want one a probe:\n%s", n, log.String())
	}

	// Under a TTFT bound of 1 ms (the server takes 5 ms), nothing meets
	// the target: best_qps is null, not 0, and the shortfall names TTFT
	// with its p90 over the bound, in rate-search.json, the page and the
	// exit message alike.
	noneDir := filepath.Join(t.TempDir(), "none")
	sum, err = benchmark.RunRateSearch(context.Background(), benchmark.RateSearchPlan{
		Base: base, Dir: noneDir, SLO: sweep.SLO{TTFT: time.Millisecond, E2E: 30 * time.Second},
		Search: sweep.RateSearchOptions{Start: 5, Max: 20, Target: 0.9},
	})
	if err != nil || sum.Stop != sweep.StopNone || sum.Best != nil || len(sum.Probes) != 1 || sum.Probes[0].Pass {
		t.Fatalf("an SLO no rate meets: %v, %+v", err, sum)
	}
	m := sum.RateSearchResult.Shortfall // (sum.Shortfall is the error)
	if m == nil || m.TargetQPS != 5 || len(m.Bounds) != 2 || m.Bounds[0].Bound != "TTFT" || !m.Bounds[0].Over || m.Bounds[0].ValueMs < 5 ||
		m.Bounds[1].Bound != "E2E" || m.Bounds[1].Over || m.Text != m.Describe() {
		t.Fatalf("shortfall %+v: want TTFT over its 1 ms bound (p90 ≥ 5 ms) and E2E within, at 5 requests/s", m)
	}
	data, err = os.ReadFile(filepath.Join(noneDir, benchmark.RateSearchFile))
	if err != nil || !bytes.Contains(data, []byte(`"best_qps": null`)) || !bytes.Contains(data, []byte(`"bound": "TTFT"`)) {
		t.Errorf("%s of a search that met nothing: %v\n%s", benchmark.RateSearchFile, err, data)
	}
	outcome := sum.Outcome()
	if !strings.HasPrefix(outcome, "no request rate from 5 to 20 requests/s met the goodput target 0.9: TTFT p90 ") ||
		!strings.Contains(outcome, " ms > 1 ms (") || !strings.Contains(outcome, "at 5 requests/s (goodput fraction") || sum.Shortfall().Error() != outcome {
		t.Errorf("outcome %q, shortfall %v", outcome, sum.Shortfall())
	}
	page, err = os.ReadFile(filepath.Join(noneDir, benchmark.RateSearchPageFile))
	if err != nil || !bytes.Contains(page, []byte(strings.NewReplacer(">", "&gt;", "<", "&lt;").Replace(outcome[1:]))) { // capitalised on the page
		t.Errorf("the page does not say %q: %v", outcome, err)
	}
	// A file written before best_qps could be null said none with 0: it
	// reads as none.
	old := bytes.Replace(data, []byte(`"best_qps": null`), []byte(`"best_qps": 0`), 1)
	if err := os.WriteFile(filepath.Join(noneDir, benchmark.RateSearchFile), old, 0o644); err != nil {
		t.Fatal(err)
	}
	if back, err := benchmark.ReadRateSearch(noneDir); err != nil || back.Best != nil || back.Shortfall() == nil {
		t.Errorf("an older file with best_qps 0: %v, %+v", err, back)
	}
}

// TestRateSearchRefused: a plan that cannot run is a usage error naming
// the field, before any probe.
func TestRateSearchRefused(t *testing.T) {
	ok := sweep.RateSearchOptions{Start: 1, Max: 2, Target: 0.9}
	for _, c := range []struct {
		plan  benchmark.RateSearchPlan
		field string
	}{
		{benchmark.RateSearchPlan{Dir: "x", Search: ok}, "RateSearchPlan.SLO"},
		{benchmark.RateSearchPlan{SLO: sweep.SLO{TTFT: time.Second}, Search: ok}, "RateSearchPlan.Dir"},
		{benchmark.RateSearchPlan{Dir: "x", SLO: sweep.SLO{TTFT: time.Second}, Search: sweep.RateSearchOptions{Start: 3, Max: 2, Target: 0.9}}, "RateSearchPlan.Search"},
		{benchmark.RateSearchPlan{Dir: "x", SLO: sweep.SLO{TTFT: time.Second}, Search: ok, Base: benchmark.Plan{Settings: benchmark.Settings{Concurrency: 4}}}, "RateSearchPlan.Base.Settings.Concurrency"},
		{benchmark.RateSearchPlan{Dir: "x", SLO: sweep.SLO{TTFT: time.Second}, Search: ok, Base: benchmark.Plan{Settings: benchmark.Settings{Scenario: "Offline"}}}, "RateSearchPlan.Base.Settings.Scenario"},
	} {
		_, err := benchmark.RunRateSearch(context.Background(), c.plan)
		var ue *benchmark.UsageError
		if !errors.As(err, &ue) || ue.Field != c.field {
			t.Errorf("%+v: %v, want a usage error naming %s", c.plan, err, c.field)
		}
	}
}
