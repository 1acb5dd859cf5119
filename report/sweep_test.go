package report

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"aimeter/internal/golden"
	"aimeter/sweep"
)

func TestFrontier(t *testing.T) {
	for _, c := range []struct {
		ys, want []float64
		reason   string
	}{
		{[]float64{100, 300, 200}, []float64{300, 300, 200},
			"a less interactive point (x first) below a more interactive one is dominated: the step holds at 300 until the 300 point"},
		{[]float64{300, 200, 100}, []float64{300, 200, 100}, "a falling curve is its own frontier"},
		{[]float64{5}, []float64{5}, "one point"},
		{nil, []float64{}, "no points"},
	} {
		if got := frontier(c.ys); !slices.Equal(got, c.want) {
			t.Errorf("frontier(%v) = %v, want %v: %s", c.ys, got, c.want, c.reason)
		}
	}
}

func probe(c uint64, phase string, f float64) sweep.Probe {
	return sweep.Probe{Concurrency: c, Phase: phase, Fraction: f, Pass: f >= 0.8, Dir: "probe-" + sweep.PointDir(c, false)}
}

// sweepFixture is two sweeps, the second with goodput, an Offline point
// and a search.
func sweepFixture() []*sweep.Summary {
	r, _ := sweep.ComputeRegions(1, 64)
	pt := func(c uint64, tps, tpu, ttft float64) sweep.Point {
		return sweep.Point{Concurrency: c, Dir: sweep.PointDir(c, false), Verdict: "VALID", Issued: 100, Completed: 99, Errors: 1,
			SystemTPS: tps, TPSPerUser: tpu, TPOTP90Ms: 1000 / tpu, TTFTP90Ms: ttft, RequestRate: tps / 100, Region: r.Classify(int(c))}
	}
	a := &sweep.Summary{Schema: sweep.SummarySchema, Name: "vllm", Kind: sweep.KindSweep, Regions: &r,
		Points: []sweep.Point{pt(1, 95.5, 95.5, 12), pt(4, 360, 90, 14), pt(16, 1200, 75, 30), pt(64, 3100.25, 48.4, 120)}}
	withGoodput := func(p sweep.Point, f float64) sweep.Point {
		p.Goodput = &sweep.Goodput{Met: uint64(f * 100), Fraction: f, RequestsPerS: f * p.RequestRate, TokensPerS: f * p.SystemTPS}
		return p
	}
	three := uint64(3)
	b := &sweep.Summary{Schema: sweep.SummarySchema, Name: "sglang", Kind: sweep.KindSearch, SLO: "ttft=50ms",
		Points: []sweep.Point{withGoodput(pt(1, 90, 90, 10), 1), withGoodput(pt(2, 170, 85, 20), 0.95), withGoodput(pt(4, 300, 75, 60), 0.4), withGoodput(pt(3, 240, 80, 45), 0.85)},
		Search: &sweep.SearchResult{Options: sweep.SearchOptions{Start: 1, Max: 8, Target: 0.8}, Best: &three, Stop: sweep.StopFound,
			Probes: []sweep.Probe{probe(1, sweep.PhaseCheck, 1), probe(2, sweep.PhaseWiden, 0.95), probe(4, sweep.PhaseWiden, 0.4), probe(3, sweep.PhaseBisect, 0.85)}}}
	slices.SortFunc(b.Points, func(x, y sweep.Point) int { return int(x.Concurrency) - int(y.Concurrency) })
	off := pt(128, 3000, 40, 400)
	off.Offline, off.Dir = true, "offline"
	a.Offline = &sweep.Offline{Point: off, CMax: 64, CMaxSystemTPS: 3100.25, Ratio: 3000 / 3100.25, Meets: false, Elected: true}
	return []*sweep.Summary{a, b}
}

func TestWriteSweeps(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSweeps(&buf, sweepFixture()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		`class="pareto"`, `class="tps-concurrency"`, `class="ttft-concurrency"`, `class="goodput-concurrency"`,
		"1. vllm", "2. sglang", "Nothing is interpolated",
		"low 2–5, medium 6–17, high 18–64",                                           // Cmin 1, Cmax 64: 1 + 63^(1/3) = 4.98 → 5; 1 + 63^(2/3) = 16.83 → 17
		"the Cmax point is elected as the Offline point", "96.8 % of the Cmax point", // 3000 / 3100.25
		"<strong>the highest concurrency whose goodput fraction reached 0.8 is 3</strong>", "probe-c00004", "3,100", // system_tps grouped
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Every curve is made of horizontal and vertical moves only.
	paths := regexp.MustCompile(`<path class="step" d="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(paths) != 3*2+1 { // three charts of both sweeps, goodput of one
		t.Errorf("%d step paths, want 7", len(paths))
	}
	for _, p := range paths {
		if bad := regexp.MustCompile(`[^MHV0-9. -]`).FindString(p[1]); bad != "" || strings.Count(p[1], "M") != 1 {
			t.Errorf("path %q: want one M and only H and V moves (no interpolated segment)", p[1])
		}
	}
	if err := WriteSweeps(&buf, nil); err == nil {
		t.Error("no sweep: want an error")
	}
}

// paretoFixture is the sweep of listed points 1, 2, 4 and 8, whose
// tokens/s per user lie between 157 and 199, with an Offline point that
// reaches 98 % of the Cmax point.
func paretoFixture() []*sweep.Summary {
	pt := func(c uint64, tps, tpu float64) sweep.Point {
		return sweep.Point{Concurrency: c, Dir: sweep.PointDir(c, false), Verdict: "VALID", Issued: 100, Completed: 100,
			SystemTPS: tps, TPSPerUser: tpu, TPOTP90Ms: 1000 / tpu, TTFTP90Ms: 20 + float64(c), RequestRate: tps / 100}
	}
	off := pt(64, 1300, 150)
	off.Offline, off.Dir = true, "offline"
	return []*sweep.Summary{{Schema: sweep.SummarySchema, Name: "openai", Kind: sweep.KindSweep,
		Points:  []sweep.Point{pt(1, 199, 199), pt(2, 380, 190), pt(4, 712, 178), pt(8, 1256, 157)},
		Offline: &sweep.Offline{Point: off, CMax: 8, CMaxSystemTPS: 1256, Ratio: 1300.0 / 1256, Meets: true}}}
}

// TestSweepParetoReadable checks the Pareto chart of the sweep:
// axes fitted to the points (150–200 tokens/s per user, not pinned at 0),
// at least 4 ticks on each, every point labelled with its concurrency,
// the Offline point drawn (a square) and a row of the table. The chart is
// compared with a golden file: run with -update after a deliberate change.
func TestSweepParetoReadable(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSweeps(&buf, paretoFixture()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	svg := regexp.MustCompile(`(?s)<svg class="pareto".*?</svg>`).FindString(page)
	if svg == "" {
		t.Fatal("no Pareto chart")
	}
	texts := func(class string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`<text class="`+class+`"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
			out = append(out, m[1])
		}
		return out
	}
	if got := strings.Join(texts("x-tick"), " "); got != "150 160 170 180 190 200" {
		t.Errorf("x ticks %q, want 150 to 200 by 10: the axis fitted to 150–199", got)
	}
	if got := strings.Join(texts("y-tick"), " "); got != "0 250 500 750 1,000 1,250 1,500" {
		t.Errorf("y ticks %q, want 0 to 1,500 by 250 (199–1,300 spans under 10×: linear)", got)
	}
	labels := texts("point-label")
	slices.Sort(labels)
	if want := []string{"Offline", "c=1", "c=2", "c=4", "c=8"}; !slices.Equal(labels, want) {
		t.Errorf("point labels %v, want %v", labels, want)
	}
	if n := strings.Count(svg, `<rect class="point offline"`); n != 1 || !strings.Contains(svg, "the Offline point (64 in flight)") {
		t.Errorf("%d Offline markers, want 1, filled (it reaches 98 %%)", n)
	}
	if !strings.Contains(page, "<td>Offline (64 in flight)</td>") {
		t.Error("the table has no row for the Offline point")
	}
	// One element a line, so that a difference names its element.
	golden.Check(t, "testdata/sweep-pareto.golden.svg", []byte(strings.ReplaceAll(svg, "><", ">\n<")+"\n"))
}
