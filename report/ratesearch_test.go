package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"aimeter/internal/golden"
	"aimeter/sweep"
)

// rateSearchFixture is a search from 2 to 64 requests/s under a TTFT
// bound, target 0.9: 2 passes, 4 and 8 pass while widening, 16 fails,
// then the bisection passes 12, fails 14 and passes 13 (bounds agreeing to
// whole requests/s), electing 13.
func rateSearchFixture() RateSearch {
	type probe struct {
		q     float64
		phase string
		f     float64
	}
	probes := []probe{{2, sweep.PhaseCheck, 1}, {4, sweep.PhaseWiden, 1}, {8, sweep.PhaseWiden, 0.985}, {16, sweep.PhaseWiden, 0.42},
		{12, sweep.PhaseBisect, 0.93}, {14, sweep.PhaseBisect, 0.71}, {13, sweep.PhaseBisect, 0.9}}
	rs := RateSearch{SLO: sweep.SLO{TTFT: 200 * time.Millisecond}, Result: sweep.RateSearchResult{
		Options: sweep.RateSearchOptions{Start: 2, Max: 64, Target: 0.9}, Best: ptrQPS(13), Stop: sweep.StopFound}}
	for i, p := range probes {
		dir := fmt.Sprintf("probe%02d-q%g", i+1, p.q)
		rs.Result.Probes = append(rs.Result.Probes, sweep.RateProbe{TargetQPS: p.q, Phase: p.phase, Fraction: p.f, Pass: p.f >= 0.9, Dir: dir})
		issued := uint64(60 * p.q)
		rs.Points = append(rs.Points, sweep.Point{Dir: dir, Verdict: "VALID", Issued: issued, Completed: issued - 1, Errors: 1,
			RequestRate: p.q * 0.99, TTFTP90Ms: 180 / p.f, TPOTP90Ms: 21.5, SystemTPS: p.q * 120,
			Goodput: &sweep.Goodput{Met: uint64(p.f * float64(issued)), Fraction: p.f, RequestsPerS: p.f * p.q, TokensPerS: p.f * p.q * 120}})
	}
	rs.Points[3].Verdict = "INVALID"
	return rs
}

// TestRateSearchGolden checks the page of the fixture against a golden
// file (go test ./report -run TestRateSearchGolden -update rewrites it),
// and what must be in it whatever the layout.
func TestRateSearchGolden(t *testing.T) {
	out := rateSearchPage(t)
	page := string(out)
	for _, want := range []string{
		"Goodput search over request rate (SLO ttft=200ms)",
		`<strong class="outcome found">The highest rate whose goodput fraction reached 0.9 is 13 requests/s</strong> (stop: found; the bracket closed to bounds agreeing in whole requests/s).`,
		`<line class="target"`, `<line class="elected"`, ">target 0.9<", ">elected 13 req/s<",
		`<a href="probe04-q16/report.html">probe04-q16</a>`, "<td>INVALID</td>",
		`<td class="fail">fail</td>`, "<td>bisect</td><td>13</td><td>0.9000</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, `<circle class="probe pass"`); n != 5 {
		t.Errorf("%d passing probes drawn, want 5", n)
	}
	if n := strings.Count(page, `<circle class="probe fail"`); n != 2 {
		t.Errorf("%d failing probes drawn, want 2", n)
	}
	if regexp.MustCompile(`<path|<polyline|<script`).MatchString(page) {
		t.Error("the page draws lines between probes or has a script")
	}
	golden.Check(t, "testdata/rate-search.golden.html", elideAssets(out))
}

// rateSearchPage is the page of the fixture.
func rateSearchPage(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteRateSearch(&buf, rateSearchFixture()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestRateSearchOutcomes: each way a search can end is said in words, and
// a probe measured but cut short gets a row of its own.
func TestRateSearchOutcomes(t *testing.T) {
	for _, c := range []struct {
		edit func(*RateSearch)
		want []string
		why  string
	}{
		{func(rs *RateSearch) {
			rs.Result.Options.Decimals, rs.Result.Options.Resolution = 1, 0.01
		}, []string{"bounds agreeing to 1 decimal place, or within 1 % of the lower one"}, "decimals and a resolution end the bisection"},
		{func(rs *RateSearch) {
			rs.Result.Stop, rs.Result.Best = sweep.StopLimit, ptrQPS(64)
			rs.Result.Probes, rs.Points = rs.Result.Probes[:3], rs.Points[:3]
		}, []string{"The highest rate whose goodput fraction reached 0.9 is 64 requests/s, the maximum searched (it may go higher)</strong> (stop: limit; the server may sustain more than --max-rate)."}, "every probe passed up to the maximum"},
		{func(rs *RateSearch) {
			rs.Result.Stop, rs.Result.Best = sweep.StopNone, nil
			rs.Result.Probes, rs.Points = rs.Result.Probes[3:4], rs.Points[3:4]
			rs.Result.Shortfall = &sweep.Miss{TargetQPS: 16, Fraction: 0.42, Target: 0.9, Issued: 960, Failed: 1,
				Bounds: []sweep.BoundCheck{{Bound: "TTFT", LimitMs: 200, Percentile: 90, ValueMs: 428.6, Within: 0.42, Over: true}}}
		}, []string{`<strong class="outcome none">No request rate from 2 to 64 requests/s met the goodput target 0.9: TTFT p90 428.6 ms &gt; 200 ms (42 % of requests within it) at 16 requests/s (goodput fraction 0.42 &lt; 0.9); 1 of 960 requests failed or were lost, and these never meet an SLO</strong> (stop: none).`,
			"no-elected", "no-zero"}, "the first probe failed: the bound that failed, by how much, never 0 requests/s"},
		{func(rs *RateSearch) {
			rs.Result.Stop = sweep.StopPartial
			rs.Result.Probes = rs.Result.Probes[:6]
		}, []string{"The search ended early: the highest rate whose goodput fraction reached 0.9 so far is 13 requests/s</strong> (stop: partial).",
			"<td>7</td><td>–</td><td>–</td><td>0.9000</td><td>not decided (the search stopped)</td>"}, "an interrupt after the 7th probe's run, before its verdict"},
		{func(rs *RateSearch) {
			rs.Result.Stop, rs.Result.Best = sweep.StopPartial, nil
			rs.Result.Probes, rs.Points = nil, rs.Points[:1]
		}, []string{"The search ended before its first probe finished: no request rate is known to meet the goodput target 0.9</strong> (stop: partial).", ">no probes</text>"}, "an interrupt during the first probe"},
	} {
		rs := rateSearchFixture()
		c.edit(&rs)
		var buf bytes.Buffer
		if err := WriteRateSearch(&buf, rs); err != nil {
			t.Fatal(err)
		}
		page := buf.String()
		for _, w := range c.want {
			if w == "no-zero" {
				if strings.Contains(page, ">0 requests/s") || strings.Contains(page, " 0 requests/s") {
					t.Errorf("%s: the page says 0 requests/s", c.why)
				}
				continue
			}
			if w == "no-elected" {
				if strings.Contains(page, `class="elected"`) {
					t.Errorf("%s: an elected rate is drawn", c.why)
				}
				continue
			}
			if !strings.Contains(page, w) {
				t.Errorf("%s: the page lacks %q", c.why, w)
			}
		}
	}
}

func ptrQPS(q float64) *float64 { return &q }
