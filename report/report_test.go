package report

import (
	"bytes"
	"encoding/json"
	"iter"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"aimeter/internal/golden"
	"aimeter/loadgen"
	"aimeter/sysinfo"
)

const goldenPath = "testdata/report.golden.html"

func render(t *testing.T, r *Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGolden(t *testing.T) {
	out := render(t, testReport(t))
	if !bytes.Contains(out, []byte(uplotJS)) {
		t.Fatal("the page does not embed uPlot verbatim")
	}
	golden.Check(t, goldenPath, elideAssets(out))
}

func TestWriteIsDeterministic(t *testing.T) {
	a := render(t, testReport(t))
	b := render(t, testReport(t))
	if !bytes.Equal(a, b) {
		t.Fatal("two reports of the same fake-clock runs differ")
	}
}

var dataRE = regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`)

// pageCharts extracts and decodes the chart JSON of a page.
func pageCharts(t *testing.T, page []byte) []map[string]any {
	t.Helper()
	m := dataRE.FindSubmatch(page)
	if m == nil {
		t.Fatal("no report-data block in the page")
	}
	var d struct {
		Charts []map[string]any `json:"charts"`
	}
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatalf("report-data is not JSON: %v", err)
	}
	return d.Charts
}

func TestPageContent(t *testing.T) {
	page := render(t, testReport(t))
	s := string(page)
	for _, want := range []string{
		`<body data-charts="24">`,
		"<title>aimeter test report</title>",
		"Generated 2026-01-02 03:04:05 UTC",
		"Example CPU @ 3.00GHz", "64 GiB", "2 × NVIDIA H200 (140 GiB, driver 580.159.04)",
		// verdicts
		`<span class="badge valid">VALID</span>`,
		`<span class="badge invalid">INVALID</span>`,
		// an accuracy-only run scored against its target has that verdict
		`<td>AccuracyOnly</td><td><span class="badge invalid">FAIL</span></td>`,
		// why the Server run is invalid
		"Performance constraints satisfied: NO",
		"Reduce target QPS to improve latency.",
		"2 samples were lost: the SUT never completed them.",
		"Early Stopping Result",
		// headline metrics and accuracy
		"Completed samples per second",
		"Samples per second",
		"90.0th percentile latency",
		"99.0th percentile latency",
		// numbers for people: percentages with their unit, rates with
		// theirs, no float expansion (86.57000000000001, 487.6543210987654)
		`<span class="label">top-1 accuracy</span> <span class="value">86.57 %</span> <span class="raw">(target 75.6954 %)</span>`,
		">PASS<", ">FAIL<",
		"Samples per second: 2,126 samples/s",
		"<tr><th>target_qps</th><td>487.6543</td></tr>",
		"<td>487.6543</td><td>931</td>",
		// settings
		"target_latency_ns", "samples_per_query",
		// escaping
		`&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; co.`,
		`synthetic Server &lt;b&gt;&#34;congested&#34;&lt;/b&gt;`,
		"uPlot 1.6.32 (MIT licence)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(s, `<script>alert`) || strings.Contains(s, "<b>") {
		t.Error("user text reached the page unescaped")
	}
	// The accuracy-only scenario (s7) has no chart elements.
	if strings.Contains(s, `id="s7-hist"`) {
		t.Error("accuracy-only scenario has charts")
	}
	charts := pageCharts(t, page)
	if len(charts) != chartedScenarios {
		t.Fatalf("%d chart sets, want %d", len(charts), chartedScenarios)
	}
	for _, c := range charts {
		id := c["id"].(string)
		if !strings.Contains(s, `id="`+id+`-throughput"`) {
			t.Errorf("no throughput chart element for %s", id)
		}
		for _, group := range []string{"hist", "cdf", "time"} {
			g := c[group].(map[string]any)
			n := -1
			for k, v := range g {
				arr, ok := v.([]any)
				if !ok {
					continue
				}
				if len(arr) == 0 || len(arr) > 2000 {
					t.Errorf("%s %s.%s has %d points", id, group, k, len(arr))
				}
				if n >= 0 && len(arr) != n {
					t.Errorf("%s %s: series of different lengths", id, group)
				}
				n = len(arr)
			}
		}
	}
	// The Server set has a bound; the others none.
	if charts[3]["bound"] != 10.0 || charts[0]["bound"] != nil {
		t.Errorf("bounds: server %v, single-stream %v", charts[3]["bound"], charts[0]["bound"])
	}
}

func TestChartsMatchSummary(t *testing.T) {
	res := serverResult(t)
	sum := res.Summary
	ps := collectPass(res.PassRecords(0), res.Passes[0], false)
	if ps.hist.n != sum.SampleCount || ps.lost != 2 {
		t.Fatalf("n=%d lost=%d, summary %d samples", ps.hist.n, ps.lost, sum.SampleCount)
	}
	if ps.hist.min != sum.SampleLatencyMin || ps.hist.max != sum.SampleLatencyMax {
		t.Errorf("min/max %d/%d, summary %d/%d", ps.hist.min, ps.hist.max, sum.SampleLatencyMin, sum.SampleLatencyMax)
	}
	// The exact CDF passes through the Summary's target percentile.
	p := sum.TargetPercentile.Percentile
	i := int(float64(len(ps.exact)) * p)
	if ps.exact[i] != sum.TargetPercentile.SampleLatency {
		t.Errorf("sorted latency at p%.0f = %d, summary %d", p*100, ps.exact[i], sum.TargetPercentile.SampleLatency)
	}
	var completed, issued uint64
	for i := range ps.tl.used {
		completed += ps.tl.completed[i]
		issued += ps.tl.issued[i]
	}
	if issued != sum.SampleCount || completed != sum.SampleCount-2 {
		t.Errorf("issued %d completed %d, samples %d", issued, completed, sum.SampleCount)
	}
}

func TestMultiStreamChartsUseQueryLatency(t *testing.T) {
	res := multiStreamResult(t)
	pass := slices.IndexFunc(res.Passes, func(p loadgen.PassInfo) bool { return p.Reported })
	ps := collectPass(res.PassRecords(pass), res.Passes[pass], true)
	if ps.hist.n != res.Summary.QueryCount {
		t.Fatalf("%d latencies, want one per query (%d)", ps.hist.n, res.Summary.QueryCount)
	}
	if ps.hist.max != res.Summary.QueryLatencyMax || ps.hist.min != res.Summary.QueryLatencyMin {
		t.Errorf("min/max %d/%d, summary query latency %d/%d", ps.hist.min, ps.hist.max, res.Summary.QueryLatencyMin, res.Summary.QueryLatencyMax)
	}
}

// synthRecords yields n Server-like records without storing them.
func synthRecords(n int) iter.Seq[loadgen.Record] {
	return func(yield func(loadgen.Record) bool) {
		for i := range n {
			sched := int64(i) * 10_000 // 100k QPS
			lat := int64(50_000 + (i*7919)%200_000)
			if i%1000 == 0 {
				lat *= 20
			}
			r := loadgen.Record{SeqID: uint64(i), QueryID: uint64(i), ScheduledNs: sched, IssuedNs: sched,
				CompletedNs: sched + lat, FirstTokenNs: loadgen.NoTime, Status: loadgen.StatusOK}
			if !yield(r) {
				return
			}
		}
	}
}

func TestCollectPassIsBoundedForLargePasses(t *testing.T) {
	n := exactCDFLimit + 50_000
	info := loadgen.PassInfo{EndNs: 1} // a wrong hint: the timeline must widen itself
	ps := collectPass(synthRecords(n), info, false)
	if ps.exact != nil || !ps.overflow {
		t.Fatal("exact latencies kept past the limit")
	}
	if ps.hist.n != uint64(n) || ps.samples != uint64(n) {
		t.Fatalf("histogram holds %d of %d", ps.hist.n, n)
	}
	if ps.tl.used > maxTimeBuckets || ps.tl.used < maxTimeBuckets/2 {
		t.Errorf("%d time buckets in use", ps.tl.used)
	}
	var total uint64
	for i := range ps.tl.used {
		total += ps.tl.latN[i]
	}
	if total != uint64(n) {
		t.Errorf("timeline holds %d latencies, want %d", total, n)
	}
	xs, ys := cdfFromHist(&ps.hist)
	if len(xs) > maxCDFPoints || ys[len(ys)-1] != 1 || !slices.IsSorted(xs) || !slices.IsSorted(ys) {
		t.Errorf("histogram CDF: %d points, last %v, sorted %v %v", len(xs), ys[len(ys)-1], slices.IsSorted(xs), slices.IsSorted(ys))
	}
	sum := &loadgen.Summary{Effective: loadgen.Effective{Scenario: loadgen.Server, TargetLatencyNs: 1_000_000}}
	sum.TargetPercentile = loadgen.PercentileEntry{Percentile: 0.99, SampleLatency: 240_000}
	c := buildCharts("x", sum, ps)
	if c.CDF.Exact || len(c.Time.X) > maxTimeBuckets || len(c.Hist.X) > 2000 {
		t.Errorf("exact=%v time=%d hist=%d", c.CDF.Exact, len(c.Time.X), len(c.Hist.X))
	}
	if _, err := json.Marshal(c); err != nil {
		t.Fatal(err)
	}
}

func TestCDFFromSorted(t *testing.T) {
	xs, ps := cdfFromSorted([]int64{1, 2, 2, 3})
	if !slices.Equal(xs, []int64{1, 2, 3}) || !slices.Equal(ps, []float64{0.25, 0.75, 1}) {
		t.Errorf("small CDF: %v %v", xs, ps)
	}
	big := make([]int64, 100_000)
	for i := range big {
		big[i] = int64(i)
	}
	xs, ps = cdfFromSorted(big)
	if len(xs) > maxCDFPoints+1 || xs[0] != 0 || xs[len(xs)-1] != 99_999 || ps[len(ps)-1] != 1 {
		t.Errorf("big CDF: %d points from %d to %d", len(xs), xs[0], xs[len(xs)-1])
	}
	// The tail is sampled finely: a point within the last 0.01%.
	if xs[len(xs)-2] < 99_990 {
		t.Errorf("no point in the far tail: next to last at %d", xs[len(xs)-2])
	}
	if !slices.IsSorted(xs) || !slices.IsSorted(ps) {
		t.Error("CDF not monotonic")
	}
}

func TestTimelineWidens(t *testing.T) {
	tl := newTimeline(0)
	for i := range int64(5000) {
		tl.addLatency(i*1_000_000, 7)
		tl.issued[tl.bucket(i*1_000_000)]++
	}
	var n, issued uint64
	for i := range tl.used {
		n += tl.latN[i]
		issued += tl.issued[i]
		if tl.latN[i] > 0 && (tl.latMin[i] != 7 || tl.latMax[i] != 7) {
			t.Fatalf("bucket %d min/max %d/%d", i, tl.latMin[i], tl.latMax[i])
		}
	}
	if n != 5000 || issued != 5000 || tl.used > maxTimeBuckets {
		t.Errorf("n=%d issued=%d used=%d", n, issued, tl.used)
	}
	if int64(tl.used)*tl.width < 4_999_000_000 {
		t.Errorf("buckets cover %d ns only", int64(tl.used)*tl.width)
	}
}

func TestHistIndex(t *testing.T) {
	for _, v := range []int64{-5, 0, 1, 2, 999, 1000, 1001, 123_456_789, 1 << 62} {
		i := histIndex(v)
		if i < 0 || i >= histPerDecade*histDecades {
			t.Fatalf("histIndex(%d) = %d", v, i)
		}
		if v > 1 && v < 1e13 && (histEdge(i) > float64(v)*1.0000001 || histEdge(i+1) < float64(v)*0.9999999) {
			t.Errorf("%d not in bucket %d [%g, %g)", v, i, histEdge(i), histEdge(i+1))
		}
	}
}

func TestWriteErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, nil); err == nil {
		t.Error("nil report accepted")
	}
	if err := Write(&buf, &Report{Runs: []RunSection{{Name: "x"}}}); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("scenario without Result: %v", err)
	}
}

func TestResultWithoutRecords(t *testing.T) {
	// A Result rebuilt from stored files without AttachRecords: the text is
	// there, the charts are not.
	full := serverResult(t)
	res := *full
	res.AttachRecords(nil)
	page := string(render(t, &Report{Runs: []RunSection{{Name: "no records", Result: &res}}}))
	if !strings.Contains(page, "not available") || !strings.Contains(page, `data-charts="0"`) {
		t.Error("missing note for a result without records")
	}
	if !strings.Contains(page, DefaultTitle) {
		t.Error("default title not used")
	}
}

func TestAcceleratorSummary(t *testing.T) {
	a10 := sysinfo.Accelerator{Vendor: "NVIDIA", Name: "NVIDIA A10", MemoryBytes: 24 << 30, Source: "nvidia-smi"}
	for _, c := range []struct {
		why  string
		accs []sysinfo.Accelerator
		want string
	}{
		{"one device with every fact", []sysinfo.Accelerator{h200}, "1 × NVIDIA H200 (140 GiB, driver 580.159.04)"},
		{"identical devices are counted together", []sysinfo.Accelerator{h200, h200, h200, h200}, "4 × NVIDIA H200 (140 GiB, driver 580.159.04)"},
		{"mixed devices keep the order first seen", []sysinfo.Accelerator{a10, h200, a10}, "2 × NVIDIA A10 (24 GiB); 1 × NVIDIA H200 (140 GiB, driver 580.159.04)"},
		{"nvidia-smi's [N/A] memory and driver leave only the name", []sysinfo.Accelerator{{Vendor: "NVIDIA", Name: "NVIDIA A10"}}, "1 × NVIDIA A10"},
		{"a device without a name is named by its vendor", []sysinfo.Accelerator{{Vendor: "Huawei"}}, "1 × Huawei accelerator"},
	} {
		if got := acceleratorSummary(c.accs); got != c.want {
			t.Errorf("%s: got %q, want %q", c.why, got, c.want)
		}
	}
	for _, r := range systemRows(sysinfo.System{}) {
		if r.Key == "Accelerators" {
			t.Error("a system without accelerators shows an Accelerators row")
		}
	}
}

func TestAssetsArePresent(t *testing.T) {
	for _, name := range []string{"uPlot.iife.min.js", "uPlot.min.css", "LICENSE.uPlot", "README"} {
		if _, err := os.Stat(filepath.Join("assets", name)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(uplotJS, "v1.6.32") {
		t.Error("embedded uPlot is not 1.6.32")
	}
}

// BenchmarkCollectPass measures the streaming pass over records: past
// exactCDFLimit latencies the memory it keeps stays fixed.
func BenchmarkCollectPass(b *testing.B) {
	for _, n := range []int{100_000, 2_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			info := loadgen.PassInfo{EndNs: int64(n) * 10_000}
			b.ReportAllocs()
			for b.Loop() {
				collectPass(synthRecords(n), info, false)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/record")
		})
	}
}

func TestLinearHist(t *testing.T) {
	edges, counts := linearHist([]int64{10, 10, 20, 30, 40, 50, 60, 70, 80, 90, 110})
	var n uint64
	for _, c := range counts {
		n += c
	}
	if n != 11 || len(edges) != len(counts) || counts[0] != 0 || counts[len(counts)-1] != 0 || counts[len(counts)-2] != 0 {
		t.Fatalf("edges %v counts %v", edges, counts)
	}
	if edges[1] != 10 || edges[len(edges)-2] != 110 {
		t.Errorf("bins do not span the data: %v", edges)
	}
	if !slices.IsSorted(edges) {
		t.Errorf("edges not sorted: %v", edges)
	}
	edges, counts = linearHist([]int64{300_000, 300_000})
	if len(counts) != 4 || counts[1] != 2 || !(edges[1] < 300_000 && edges[2] > 300_000) {
		t.Errorf("one value: edges %v counts %v", edges, counts)
	}
}

func TestInterruptedBeforeSummary(t *testing.T) {
	res := &loadgen.Result{Interrupted: "context canceled"}
	res.Effective.Mode = loadgen.PerformanceOnly
	page := string(render(t, &Report{Runs: []RunSection{{Result: res}}}))
	for _, want := range []string{`<span class="badge invalid">NO RESULT</span>`, "The run was interrupted: context canceled", "<h2>SingleStream "} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestLatencyBoundRow: the Server row of queries over the latency bound
// names the bound, and in a token-latency run says that LoadGen judges
// TTFT and TPOT instead.
func TestLatencyBoundRow(t *testing.T) {
	for _, tc := range []struct {
		why    string
		tokens bool
		want   string
	}{
		{"a plain Server run: the bound is the constraint", false, "Queries over the latency bound (100.0 ms)"},
		{"a token-latency run: the bound is not", true, "Queries over the latency bound (100.0 ms), not a constraint with token latencies"},
	} {
		s := &loadgen.Summary{}
		s.Effective.Scenario = loadgen.Server
		s.Effective.TargetLatencyNs = 100_000_000
		s.Effective.UseTokenLatencies = tc.tokens
		found := false
		for _, row := range statsTable(&loadgen.Result{}, s).Rows {
			found = found || row[0] == tc.want
		}
		if !found {
			t.Errorf("%s: no row %q", tc.why, tc.want)
		}
	}
}

func TestHistIndexMatchesDefinition(t *testing.T) {
	// The table lookup gives the bucket floor(log10(v) × histPerDecade) of
	// every value: at each edge, beside it, and spread over the range.
	check := func(v int64) {
		if got, want := histIndex(v), histIndexExact(v); got != want {
			t.Fatalf("histIndex(%d) = %d, want %d", v, got, want)
		}
	}
	for _, e := range histEdges() {
		for d := int64(-2); d <= 2; d++ {
			if e+d >= 0 && e+d <= math.MaxInt64-2 {
				check(e + d)
			}
		}
	}
	for _, v := range []int64{0, 1, 2, 3, 9, 10, 11, 99, 100, 101, 1e6, 1e14 - 1, 1e14, 1e15, math.MaxInt64} {
		check(v)
	}
	x := uint64(88172645463325252)
	for range 200000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		check(int64(x >> (1 + x%63)))
	}
}
