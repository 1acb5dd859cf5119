package sweep

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"aimeter/derived/metrics/metricstest"
	"aimeter/loadgen"
)

// handResult is ten requests at concurrency 4, times in ms from the start
// of the pass (the hand-worked set of package metrics' tests).
func handResult() *loadgen.Result { return metricstest.HandResult() }

func TestCheckBoundsHandWorked(t *testing.T) {
	slo := SLO{TTFT: 150 * time.Millisecond, TPOT: 60 * time.Millisecond, E2E: 2 * time.Second}
	got := CheckBounds(handResult(), slo, 0.8)
	// 8 successes of 10 issued. TTFT sorted 50 50 100 100 100 200 300 800:
	// p80 at index trunc(8·0.8) = 6, 300 ms > 150; within 150: 100, 50,
	// 100, 50, 100 = 5 of 10. TPOT (7 responses of ≥ 2 tokens) sorted 0 50
	// 50 50 100 100 100: index trunc(7·0.8) = 5, 100 ms > 60; within 60:
	// 50, 50, 50, 0 and the one-token response = 5 of 10. E2E sorted 200
	// 500 600 800 900 1000 1000 1200: index 6, 1000 ms ≤ 2000; all 8
	// successes within.
	want := []BoundCheck{
		{Bound: "TTFT", LimitMs: 150, Percentile: 80, ValueMs: 300, Within: 0.5, Over: true},
		{Bound: "TPOT", LimitMs: 60, Percentile: 80, ValueMs: 100, Within: 0.5, Over: true},
		{Bound: "E2E", LimitMs: 2000, Percentile: 80, ValueMs: 1000, Within: 0.8, Over: false},
	}
	if len(got) != len(want) {
		t.Fatalf("%+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bound %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// A target of 1 is the largest value: TTFT 800 ms.
	if all := CheckBounds(handResult(), SLO{TTFT: time.Second}, 1); len(all) != 1 || all[0].ValueMs != 800 || all[0].Over {
		t.Errorf("target 1: %+v, want TTFT 800 ms, within 1000", all)
	}
	if CheckBounds(handResult(), SLO{}, 0.9) != nil || CheckBounds(&loadgen.Result{}, slo, 0.9) != nil {
		t.Error("no SLO, or no measured pass: want nil")
	}
}

func TestMissDescribe(t *testing.T) {
	over := CheckBounds(handResult(), SLO{TTFT: 150 * time.Millisecond, TPOT: 60 * time.Millisecond, E2E: 2 * time.Second}, 0.8)
	for _, c := range []struct {
		m      Miss
		want   string
		reason string
	}{
		{Miss{Concurrency: 4, Fraction: 0.3, Target: 0.8, Issued: 10, Failed: 2, Bounds: over},
			"TTFT p80 300 ms > 150 ms (50 % of requests within it), TPOT p80 100 ms > 60 ms (50 % of requests within it) at concurrency 4 (goodput fraction 0.3 < 0.8); 2 of 10 requests failed or were lost, and these never meet an SLO",
			"the bounds over their percentile are named with value, limit and share within; E2E, within, is not"},
		{Miss{Concurrency: 4, Fraction: 0.5, Target: 0.6, Issued: 10, Failed: 2, Bounds: CheckBounds(handResult(), SLO{TTFT: 150 * time.Millisecond}, 0.6)},
			"each bound alone is met at its percentile (TTFT p60 100 ms ≤ 150 ms), but 2 of 10 requests failed or were lost, and these never meet an SLO, at concurrency 4 (goodput fraction 0.5 < 0.6)",
			"no bound over (p60 at index 4: 100 ms): the failed requests are the cause"},
		{Miss{Concurrency: 2, Fraction: 0.85, Target: 0.9, Issued: 20, Bounds: []BoundCheck{
			{Bound: "TTFT", LimitMs: 100, Percentile: 90, ValueMs: 90, Within: 0.9},
			{Bound: "TPOT", LimitMs: 1, Percentile: 90, ValueMs: 0.95, Within: 0.9}}},
			"each bound alone is met at its percentile (TTFT p90 90 ms ≤ 100 ms, TPOT p90 0.95 ms ≤ 1 ms), but fewer requests met all of them together at concurrency 2 (goodput fraction 0.85 < 0.9)",
			"each bound met alone, not together"},
		{Miss{Concurrency: 8, Target: 0.9, Issued: 5, Failed: 5, Bounds: []BoundCheck{{Bound: "TTFT", LimitMs: 100, Percentile: 90}}},
			"all 5 requests failed or were lost at concurrency 8 (goodput fraction 0 < 0.9)", "nothing completed"},
		{Miss{Concurrency: 1, Target: 0.9}, "no request was measured at concurrency 1 (goodput fraction 0 < 0.9)", "a probe interrupted before issuing"},
	} {
		if got := c.m.Describe(); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.reason, got, c.want)
		}
	}
}

func TestSearchResultBestJSON(t *testing.T) {
	three := uint64(3)
	for _, c := range []struct {
		in     string
		best   string // "none" for nil
		reason string
	}{
		{`{"best":null,"stop":"none"}`, "none", "none found is null"},
		{`{"best":0,"stop":"none"}`, "none", "a summary written before null said none with 0: read as none"},
		{`{"best":0,"stop":"partial"}`, "none", "an interrupted search before any pass, older file: none"},
		{`{"best":3,"stop":"found"}`, "3", "a concurrency found"},
	} {
		var r SearchResult
		if err := json.Unmarshal([]byte(c.in), &r); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if bestText(r.Best) != c.best {
			t.Errorf("%s: best %s, want %s: %s", c.in, bestText(r.Best), c.best, c.reason)
		}
	}
	for _, c := range []struct {
		r    SearchResult
		want string
	}{
		{SearchResult{Stop: StopNone}, `"best":null`},
		{SearchResult{Stop: StopFound, Best: &three}, `"best":3`},
	} {
		data, err := json.Marshal(c.r)
		if err != nil || !strings.Contains(string(data), c.want) {
			t.Errorf("%+v: %s, %v; want %s", c.r, data, err, c.want)
		}
	}
}

func TestSearchOutcome(t *testing.T) {
	opts := SearchOptions{Start: 4, Max: 64, Target: 0.9}
	eight := uint64(8)
	miss := &Miss{Concurrency: 4, Fraction: 0.12, Target: 0.9, Issued: 50,
		Bounds: []BoundCheck{{Bound: "TPOT", LimitMs: 1, Percentile: 90, ValueMs: 3.2, Within: 0.12, Over: true}}}
	for _, c := range []struct {
		r      SearchResult
		want   string
		reason string
	}{
		{SearchResult{Options: opts, Best: &eight, Stop: StopFound}, "the highest concurrency whose goodput fraction reached 0.9 is 8", "found"},
		{SearchResult{Options: opts, Best: &eight, Stop: StopLimit}, "the highest concurrency whose goodput fraction reached 0.9 is 8, the maximum searched (it may go higher)", "every probe passed"},
		{SearchResult{Options: opts, Best: &eight, Stop: StopPartial}, "the search ended early: the highest concurrency whose goodput fraction reached 0.9 so far is 8", "interrupted after a pass"},
		{SearchResult{Options: opts, Stop: StopNone, Probes: []Probe{{Concurrency: 4, Fraction: 0.12}}, Shortfall: miss},
			"no concurrency from 4 to 64 met the goodput target 0.9: TPOT p90 3.2 ms > 1 ms (12 % of requests within it) at concurrency 4 (goodput fraction 0.12 < 0.9)",
			"none: never the number 0; the bound that failed and by how much"},
		{SearchResult{Options: opts, Stop: StopNone, Probes: []Probe{{Concurrency: 4, Fraction: 0.12}}},
			"no concurrency from 4 to 64 met the goodput target 0.9: at concurrency 4 (goodput fraction 0.12 < 0.9)", "none, without the probe's records (an older summary)"},
		{SearchResult{Options: opts, Stop: StopPartial}, "the search ended before its first probe finished: no concurrency is known to meet the goodput target 0.9", "nothing ran"},
	} {
		if got := c.r.Outcome(); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.reason, got, c.want)
		}
	}
}

// TestSummarizeSearchNone: a search whose first probe missed the target
// records best null and the miss over that probe, with its bounds.
func TestSummarizeSearchNone(t *testing.T) {
	p := &Journal{Schema: PlanSchema, Kind: KindSearch, SLO: SLO{TPOT: time.Millisecond},
		Search: &SearchOptions{Start: 4, Max: 64, Target: 0.9}, Runs: []Step{{Concurrency: 4, Phase: PhaseCheck, Dir: "probe01-c00004"}}}
	points := map[string]Point{"probe01-c00004": {Concurrency: 4, Issued: 50, Errors: 1, Goodput: &Goodput{Fraction: 0.12}}}
	first := []BoundCheck{{Bound: "TPOT", LimitMs: 1, Percentile: 90, ValueMs: 3.2, Within: 0.12, Over: true}}
	s, err := summarize(p, points, first)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Search
	if r.Best != nil || r.Stop != StopNone || r.Shortfall == nil {
		t.Fatalf("search %+v: want best nil, stop none, a shortfall", r)
	}
	m := r.Shortfall
	if m.Concurrency != 4 || m.Fraction != 0.12 || m.Target != 0.9 || m.Issued != 50 || m.Failed != 1 || len(m.Bounds) != 1 || m.Text != m.Describe() ||
		!strings.HasPrefix(m.Text, "TPOT p90 3.2 ms > 1 ms") {
		t.Errorf("shortfall %+v", m)
	}
	data, _ := json.Marshal(s)
	for _, want := range []string{`"best":null`, `"shortfall":{"concurrency":4`, `"bound":"TPOT"`, `"over":true`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("sweep.json lacks %s: %s", want, data)
		}
	}
}

// TestRateSearchOutcome: a rate search's outcome in words, the one text
// of the console, the page and the exit message: the best rate, or that
// none met the target, the bound that failed and by how much at the
// starting rate, never "0 requests/s".
func TestRateSearchOutcome(t *testing.T) {
	opts := RateSearchOptions{Start: 5, Max: 20, Target: 0.9}
	miss := &Miss{TargetQPS: 5, Fraction: 0.1, Target: 0.9, Issued: 10,
		Bounds: []BoundCheck{{Bound: "TTFT", LimitMs: 1, Percentile: 90, ValueMs: 5.125, Within: 0.1, Over: true}, {Bound: "TPOT", LimitMs: 10, Percentile: 90, ValueMs: 1}}}
	for _, c := range []struct {
		r      RateSearchResult
		want   string
		reason string
	}{
		{RateSearchResult{Options: opts, Best: qps(13.625), Stop: StopFound}, "the highest rate whose goodput fraction reached 0.9 is 13.625 requests/s", "a rate found"},
		{RateSearchResult{Options: opts, Best: qps(20), Stop: StopLimit}, "the highest rate whose goodput fraction reached 0.9 is 20 requests/s, the maximum searched (it may go higher)", "every probe passed"},
		{RateSearchResult{Options: opts, Best: qps(10), Stop: StopPartial}, "the search ended early: the highest rate whose goodput fraction reached 0.9 so far is 10 requests/s", "interrupted after a pass"},
		{RateSearchResult{Options: opts, Stop: StopNone, Shortfall: miss, Probes: []RateProbe{{TargetQPS: 5, Fraction: 0.1}}},
			"no request rate from 5 to 20 requests/s met the goodput target 0.9: TTFT p90 5.125 ms > 1 ms (10 % of requests within it) at 5 requests/s (goodput fraction 0.1 < 0.9)",
			"none met: the failed bound named, with its value, limit and share, at the starting rate"},
		{RateSearchResult{Options: opts, Stop: StopNone, Probes: []RateProbe{{TargetQPS: 5, Fraction: 0.25}}},
			"no request rate from 5 to 20 requests/s met the goodput target 0.9: at 5 requests/s (goodput fraction 0.25 < 0.9)", "an older file without a shortfall"},
		{RateSearchResult{Options: opts, Stop: StopPartial}, "the search ended before its first probe finished: no request rate is known to meet the goodput target 0.9", "interrupted in the first probe"},
	} {
		if got := c.r.Outcome(); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.reason, got, c.want)
		}
	}
	// best_qps is null when none met the target; a 0 in an older file
	// reads as none.
	data, err := json.Marshal(RateSearchResult{Options: opts, Stop: StopNone, Shortfall: miss})
	if err != nil || !strings.Contains(string(data), `"best_qps":null`) || !strings.Contains(string(data), `"target_qps":5`) || strings.Contains(string(data), `"concurrency"`) {
		t.Errorf("JSON of a search that met nothing: %s (%v)", data, err)
	}
	for _, c := range []struct {
		in   string
		want string
	}{{`{"best_qps":0}`, "none"}, {`{"best_qps":null}`, "none"}, {`{}`, "none"}, {`{"best_qps":2.5}`, "2.5"}} {
		var r RateSearchResult
		if err := json.Unmarshal([]byte(c.in), &r); err != nil {
			t.Fatal(err)
		}
		if got := rateText(ReadBestQPS(r.Best)); got != c.want {
			t.Errorf("%s: best %s, want %s", c.in, got, c.want)
		}
	}
}
