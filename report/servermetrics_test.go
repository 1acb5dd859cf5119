package report

import (
	"math"
	"strings"
	"testing"

	"aimeter/derived/metrics"
	"aimeter/steady"
)

func TestBuildServer(t *testing.T) {
	const s = int64(1e9)
	m := &ServerMetrics{IntervalNs: s,
		Endpoints: []ServerEndpoint{{Name: "a:8000", URL: "http://a:8000/metrics", Scrapes: 5, Failed: 1}, {Name: "b:8000", URL: "http://b:8000/metrics", Scrapes: 5}},
		Series: []ServerSeries{
			// A gap at 2 s breaks the line in two; the point at −1 s (before
			// the pass) and at 9 s (after it) are left out.
			{Quantity: "running requests", Endpoint: 0, Source: "vLLM: vllm:num_requests_running",
				TimesNs: []int64{-s, 0, s, 2 * s, 3 * s, 4 * s, 9 * s}, Values: []float64{9, 1, 2, math.NaN(), 3, 4, 9}},
			{Quantity: "running requests", Endpoint: 1, Source: "SGLang: sglang:num_running_reqs",
				TimesNs: []int64{0, s}, Values: []float64{5, 6}},
			{Quantity: "KV-cache usage", Fraction: true, Endpoint: 0, Source: "vLLM: vllm:kv_cache_usage_perc",
				TimesNs: []int64{0, s}, Values: []float64{0.25, 0.5}},
		},
		Gaps: []ServerGap{{Endpoint: 0, TimeNs: 2 * s, Error: "no answer within 1s"}},
	}
	v := buildServer(m, 5*s, []windowMark{{From: 1, To: 3, Label: "W"}})
	if len(v.Charts) != 2 {
		t.Fatalf("%d charts, want one per quantity: 2", len(v.Charts))
	}
	run := string(v.Charts[0].SVG)
	if n := strings.Count(run, `class="server-line"`); n != 3 {
		t.Errorf("running requests: %d polylines, want 3 (endpoint a in two pieces around its gap, b in one)", n)
	}
	if !strings.Contains(run, ">6</text>") {
		t.Error("the count chart's top is not its peak within the pass, 6 (the 9s outside it are left out)")
	}
	if n := strings.Count(run, `class="server-gap"`); n != 1 || !strings.Contains(run, "no answer within 1s") {
		t.Errorf("%d gap ticks; want the one failed scrape, with its reason", n)
	}
	if !strings.Contains(run, `class="steady-window"`) || !strings.Contains(v.Charts[0].Caption, "steady-state windows") {
		t.Error("the steady window is not shaded")
	}
	kv := string(v.Charts[1].SVG)
	if !strings.Contains(kv, ">100%</text>") || !strings.Contains(v.Charts[1].Caption, "0–100 %") {
		t.Error("a fraction is not drawn on a 0–100 % axis")
	}
	if got := v.Table.Rows[0]; got[0] != "http://a:8000/metrics" || got[1] != "5" || got[2] != "1" || !strings.Contains(got[3], "no answer") {
		t.Errorf("endpoint row %q", got)
	}
	if len(v.Sources.Rows) != 3 || v.Note != "" {
		t.Errorf("%d source rows, note %q", len(v.Sources.Rows), v.Note)
	}

	none := buildServer(&ServerMetrics{IntervalNs: s, Endpoints: []ServerEndpoint{{Name: "c", URL: "http://c/metrics", Scrapes: 2}}}, 5*s, nil)
	if none.Note == "" || len(none.Charts) != 0 {
		t.Errorf("an endpoint with no known series: note %q, %d charts", none.Note, len(none.Charts))
	}
	if buildServer(nil, s, nil) != nil {
		t.Error("nil metrics made a view")
	}
}

func TestBuildSteady(t *testing.T) {
	whole := steady.Metrics{Samples: 10, Completed: 9, Failed: 1, SpanNs: 2e9, CompletedPerSec: 4.5, HasTokens: true, TPOT: [3]int64{5e6, 6e6, 7e6}}
	s := &metrics.Steady{Whole: whole, Windows: []metrics.Window{
		{Label: "Super-pass", Found: false, Reason: "too small: 3 completed requests"},
		{Label: "In-flight", Found: true, Note: "≥ 3 in flight", StartNs: 5e8, EndNs: 15e8, Metrics: steady.Metrics{Samples: 4, Completed: 4, SpanNs: 1e9, CompletedPerSec: 4}},
	}}
	v, marks := buildSteady(s)
	head := strings.Join(v.Table.Head, " | ")
	if head != "Metric | Whole run (reported pass) | Super-pass: not found | In-flight" {
		t.Errorf("head %q", head)
	}
	if len(marks) != 1 || marks[0].From != 0.5 || marks[0].To != 1.5 || marks[0].Label != "In-flight" {
		t.Errorf("marks %+v, want the found window alone, 0.5–1.5 s", marks)
	}
	rows := map[string][]string{}
	for _, r := range v.Table.Rows {
		rows[r[0]] = r[1:]
	}
	// A window not found has a dash in every row: nothing is derived from
	// it (not the whole run's figures either).
	if got := rows["Samples (completed / failed / lost)"]; got[0] != "10 (9 / 1 / 0)" || got[1] != "—" || got[2] != "4 (4 / 0 / 0)" {
		t.Errorf("samples row %q", got)
	}
	if got := rows["TPOT p90"]; got[0] != "6.000 ms" || got[1] != "—" || got[2] != "n/a" {
		t.Errorf("TPOT p90 row %q", got)
	}
	for name, r := range rows {
		if r[1] != "—" {
			t.Errorf("row %q of the window not found: %q", name, r[1])
		}
	}
	if len(v.Notes) != 2 || v.Notes[0] != "Super-pass: not found: too small: 3 completed requests" || v.Notes[1] != "In-flight: ≥ 3 in flight" {
		t.Errorf("notes %q", v.Notes)
	}
	if !strings.Contains(v.Rule, "at least 30 completed requests and 10 mean request latencies") {
		t.Errorf("rule %q does not state the minimum", v.Rule)
	}
	noTokens, _ := buildSteady(&metrics.Steady{Whole: steady.Metrics{Samples: 1}})
	for _, r := range noTokens.Table.Rows {
		if strings.HasPrefix(r[0], "TTFT") || strings.HasPrefix(r[0], "TPOT") || strings.HasPrefix(r[0], "Output tokens") {
			t.Errorf("a run without tokens has row %q", r[0])
		}
	}
}
