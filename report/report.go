// Package report writes a self-contained HTML report of an aimeter benchmark:
// one page with, for each scenario run, the verdict and why, the headline
// metric, latency and throughput charts, the settings used and the system
// information. The chart library (uPlot) is embedded in the page, so it needs
// no network when viewed; the text parts read without JavaScript.
//
// Every number is formatted for people by one set of formatters: significant
// digits rather than a float's expansion (86.57 %, not 86.57000000000001),
// thousands grouped (97,862 samples/s), latencies in ns, µs, ms or s and sizes
// in KiB, MiB or GiB by magnitude; settings keep LoadGen's names and values,
// floats cut to seven significant digits. On the charts, the labels of the
// dashed marker lines (target percentile, latency bound) are placed so that
// none overlaps another or lies on a marker line, and each legend shows a
// summary of the pass until the mouse points at a value.
package report

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"aimeter/bandwidth"
	"aimeter/derived/metrics"
	"aimeter/loadgen"
	"aimeter/shard"
	"aimeter/sysinfo"
)

// RunSection is one benchmark run shown in the report.
type RunSection struct {
	// Name labels the run in the report (for example "resnet50 Server").
	Name string
	// Result is the outcome of loadgen.Run, or a Result rebuilt from stored
	// files with AttachRecords. Its Summary gives the verdict and the
	// records of the reported pass give the charts.
	Result *loadgen.Result
	// Accuracy, if set, is the outcome of checking the accuracy log.
	Accuracy *AccuracyInfo
	// Nodes, for a run dispatched over several servers, names its nodes;
	// the report then breaks the reported pass down by node (NodeTable).
	// Nil shows a node table only when the records name nodes.
	Nodes []Node
	// GBT, for a GB/T 45087 inference test, makes the section lead with
	// the GB/T verdict and metrics; LoadGen's checks are then secondary.
	GBT *GBTRun
	// ServerMetrics, if set, are the server's own metrics during the run,
	// drawn under the client's timeline; nil draws none.
	ServerMetrics *ServerMetrics
	// Steady, if set, is the run's steady state: its windows shaded on
	// the timeline and every metric over each window and the whole run;
	// nil shows none.
	Steady *metrics.Steady
	// Power, if set, is what the run's power meters read: drawn under
	// the client's timeline with the run's phases shaded, and the energy
	// of each phase; nil shows none.
	Power *Power
	// Serving, if set, are the run's LLM-serving figures (goodput, send
	// lateness, sessions), shown as a table; nil shows none.
	Serving *Serving
	// Bandwidth, if set, is the MLPerf datacenter bandwidth check of a
	// network run (bandwidth.json), shown in a "Bandwidth" section; nil
	// shows none.
	Bandwidth *bandwidth.Report
	// Verdict, if set, is the run's verdict as derived.VerdictOf decided
	// it: its word heads the section and each reason is listed, so that
	// the page says what the console, the exit code and result.json say.
	// nil (a Run built by hand) judges from the summary.
	Verdict *Verdict
	// Shards, for a test merged from the bundles of its shards (merge.json,
	// docs/sharding.md), shows one row per shard: its records, rate,
	// latencies, failures, clock offset and bundle digest. Nil shows none.
	Shards *shard.Merge
}

// Verdict is a run's verdict: its word (VALID, INVALID, PASS, FAIL, "-"),
// whether it passed, and one line for each rule it broke.
type Verdict struct {
	Word    string
	Pass    bool
	Reasons []string
}

// AccuracyInfo is the outcome of an accuracy check of a run's accuracy log.
type AccuracyInfo struct {
	Metric string  // what was measured, for example "top-1 accuracy (%)"
	Value  float64 // the measured value
	Target float64 // the value the run had to reach
	Pass   bool    // whether Value met Target
}

// Report is the content of one HTML report.
type Report struct {
	// Title heads the page ("aimeter benchmark report" when empty).
	Title string
	// Generated is when the report was made; the zero time is not shown.
	Generated time.Time
	// System describes the machine the benchmark ran on (see DetectSystem).
	System sysinfo.System
	// Runs are the runs, shown in this order.
	Runs []RunSection
	// Notes are free-form remarks shown under the overview.
	Notes []string
	// Network is the section "Network and system" beyond System's NICs:
	// the system description and the run's MLPerf division; nil for
	// none. The section shows when System has NICs or Network a
	// description.
	Network *Network
}

// DefaultTitle is the page title of a Report without one.
const DefaultTitle = "aimeter benchmark report"

// ChartLibrary names the embedded chart library, its version and licence.
const ChartLibrary = "uPlot 1.6.32 (MIT licence)"

var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed page.js
	pageJS string
	//go:embed page.css
	pageCSS string
	//go:embed page.html.tmpl
	pageTemplate string
)

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"join": strings.Join,
}).Parse(pageTemplate))

// chartsPerScenario is the number of charts drawn for a scenario with
// records: histogram, CDF, latency over time, throughput over time.
const chartsPerScenario = 4

// Write writes r as one self-contained HTML page to w. It reads the records
// of each scenario's reported pass once, keeping only fixed-size aggregates,
// so it runs in bounded memory whatever the number of samples (an exact CDF
// is kept for passes of at most about a million latencies).
func Write(w io.Writer, r *Report) error {
	if r == nil {
		return errors.New("report: nil Report")
	}
	v, err := buildPage(r)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, v); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// pageView is what the template renders.
type pageView struct {
	Title      string
	Generated  string
	System     []kv
	Network    *networkView
	Notes      []string
	Overview   []overviewRow
	Scenarios  []*scenarioView
	Library    string
	ChartCount int
	Data       pageData
	LibJS      template.JS
	LibCSS     template.CSS
	PageJS     template.JS
	PageCSS    template.CSS
}

// pageData is the JSON the page script draws the charts from.
type pageData struct {
	Charts []*chartSet `json:"charts"`
}

type kv struct{ Key, Value string }

type overviewRow struct {
	Anchor, Name, Scenario, Mode string
	Verdict, VerdictClass        string
	Metric                       string
}

type table struct {
	Head []string
	Rows [][]string
}

type check struct {
	Name string
	OK   bool
}

type textBlock struct {
	Title string
	Text  string
}

type accuracyView struct {
	Metric, Value, Target string
	Pass                  bool
	Entries               string
}

type scenarioView struct {
	Anchor       string
	Name         string
	Scenario     string
	Mode         string
	Verdict      string
	VerdictClass string
	Explanation  string

	MetricName  string
	MetricValue string
	MetricRaw   string

	Checks          []check
	Recommendations []string
	AimeterReasons  []string
	// Reasons are the run's verdict's (Run.Verdict): why it did not pass.
	Reasons       []string
	Interrupted   string
	EarlyStopping []textBlock
	Issues        []string
	IssuesMore    int
	// ErrorGroups lists the groups of failed samples (errors.json);
	// ErrorChart draws them per second over the reported pass.
	ErrorGroups table
	ErrorChart  template.HTML

	Accuracy    *accuracyView
	Run         table
	Stats       table
	Percentiles table
	Passes      table
	Settings    table
	Nodes       table

	Charts    *chartSet
	ChartNote string

	GBT *gbtView // the GB/T test, nil for an MLPerf run

	Server  *serverView  // the server's own metrics, nil when none was scraped
	Steady  *steadyView  // the steady state, nil when not detected
	Power   *powerView   // the power meters, nil for a run without
	Serving *servingView // goodput, send lateness, sessions; nil for none
	Shards  *shardsView  // the shards of a merged test, nil for any other
	// Bandwidth is the datacenter bandwidth check; nil for none.
	Bandwidth *bandwidthView
}

func buildPage(r *Report) (*pageView, error) {
	v := &pageView{
		Title:   r.Title,
		Notes:   r.Notes,
		Library: ChartLibrary,
		LibJS:   template.JS(uplotJS),
		LibCSS:  template.CSS(uplotCSS),
		PageJS:  template.JS(pageJS),
		PageCSS: template.CSS(pageCSS),
	}
	if v.Title == "" {
		v.Title = DefaultTitle
	}
	if !r.Generated.IsZero() {
		v.Generated = r.Generated.Format("2006-01-02 15:04:05 MST")
	}
	v.System = systemRows(r.System)
	v.Network = buildNetwork(r.System, r.Network)
	v.Data.Charts = []*chartSet{}
	for i, sc := range r.Runs {
		if sc.Result == nil {
			return nil, fmt.Errorf("report: scenario %d (%q) has no Result", i+1, sc.Name)
		}
		if sc.GBT != nil && sc.GBT.Test == nil {
			return nil, fmt.Errorf("report: scenario %d (%q) has a GB/T run without its test description", i+1, sc.Name)
		}
		sv := buildScenario(fmt.Sprintf("s%d", i+1), sc)
		v.Scenarios = append(v.Scenarios, sv)
		v.Overview = append(v.Overview, overviewRow{
			Anchor: sv.Anchor, Name: sv.Name, Scenario: sv.Scenario, Mode: sv.Mode,
			Verdict: sv.Verdict, VerdictClass: sv.VerdictClass,
			Metric: overviewMetric(sv),
		})
		if sv.Charts != nil {
			v.Data.Charts = append(v.Data.Charts, sv.Charts)
			v.ChartCount += chartsPerScenario
		}
	}
	return v, nil
}

func overviewMetric(sv *scenarioView) string {
	switch {
	case sv.GBT != nil:
		return sv.GBT.MetricName + ": " + sv.GBT.MetricValue
	case sv.MetricName != "":
		return sv.MetricName + ": " + sv.MetricValue
	case sv.Accuracy != nil:
		return sv.Accuracy.Metric + ": " + sv.Accuracy.Value
	}
	return "—"
}

func systemRows(s sysinfo.System) []kv {
	or := func(v string) string {
		if v == "" {
			return "unknown"
		}
		return v
	}
	cores, mem := "unknown", "unknown"
	if s.Cores > 0 {
		cores = fmt.Sprint(s.Cores)
	}
	if s.MemoryBytes > 0 {
		mem = fmtBytes(s.MemoryBytes)
	}
	rows := []kv{
		{"Host", or(s.Hostname)},
		{"OS / architecture", or(s.OS) + " / " + or(s.Arch)},
		{"CPU", or(s.CPU)},
		{"Logical CPUs", cores},
		{"Memory", mem},
	}
	if len(s.Accelerators) > 0 {
		rows = append(rows, kv{"Accelerators", acceleratorSummary(s.Accelerators)})
	}
	return append(rows, kv{"Go", or(s.GoVersion)}, kv{"aimeter", or(s.AimeterVersion)})
}

// acceleratorSummary describes the accelerators in one line, identical
// devices counted together in the order first seen: "8 × NVIDIA H200
// (140 GiB, driver 580.159.04)".
func acceleratorSummary(accs []sysinfo.Accelerator) string {
	type group struct {
		desc string
		n    int
	}
	var groups []group
	for _, a := range accs {
		desc := a.Name
		if desc == "" {
			desc = a.Vendor + " accelerator"
		}
		var facts []string
		if a.MemoryBytes > 0 {
			facts = append(facts, fmtBytes(a.MemoryBytes))
		}
		if a.DriverVersion != "" {
			facts = append(facts, "driver "+a.DriverVersion)
		}
		if len(facts) > 0 {
			desc += " (" + strings.Join(facts, ", ") + ")"
		}
		if i := slices.IndexFunc(groups, func(g group) bool { return g.desc == desc }); i >= 0 {
			groups[i].n++
			continue
		}
		groups = append(groups, group{desc, 1})
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = fmt.Sprintf("%d × %s", g.n, g.desc)
	}
	return strings.Join(parts, "; ")
}

func buildScenario(anchor string, sc RunSection) *scenarioView {
	res := sc.Result
	sum := res.Summary
	eff := res.Effective
	if sum != nil {
		eff = sum.Effective // a find-peak result reports its own target QPS
	}
	sv := &scenarioView{
		Anchor:      anchor,
		Name:        sc.Name,
		Scenario:    eff.Scenario.String(),
		Mode:        eff.Mode.String(),
		Interrupted: res.Interrupted,
	}
	if eff.Concurrency > 0 {
		// aimeter's own load mode on SingleStream's issuing: never
		// labelled as the MLPerf scenario.
		sv.Scenario = fmt.Sprintf("fixed concurrency %d (aimeter mode, not an MLPerf scenario)", eff.Concurrency)
	}
	if sv.Name == "" {
		sv.Name = sv.Scenario
	}
	// The verdict is the run's (derived.VerdictOf): LoadGen's validity,
	// and the accuracy target where the accuracy log was scored.
	accFailed := sc.Accuracy != nil && !sc.Accuracy.Pass
	switch {
	case sum != nil && sum.Valid && !accFailed:
		sv.Verdict, sv.VerdictClass = "VALID", "valid"
		sv.Explanation = "Every LoadGen check passed and no sample failed or was lost."
	case sum != nil && sum.Valid:
		sv.Verdict, sv.VerdictClass = "INVALID", "invalid"
		sv.Explanation = "Every LoadGen check passed, but the accuracy log missed its target (see Accuracy below)."
	case sum != nil:
		sv.Verdict, sv.VerdictClass = "INVALID", "invalid"
		sv.Explanation = "The result does not meet the run rules; see the failed checks and recommendations below."
	case eff.Mode == loadgen.AccuracyOnly && sc.Accuracy != nil && sc.Accuracy.Pass:
		sv.Verdict, sv.VerdictClass = "PASS", "valid"
		sv.Explanation = "The accuracy log, scored against the data set's labels, meets its target. An accuracy-only run has no performance verdict and no latency charts."
	case eff.Mode == loadgen.AccuracyOnly && sc.Accuracy != nil:
		sv.Verdict, sv.VerdictClass = "FAIL", "invalid"
		sv.Explanation = "The accuracy log, scored against the data set's labels, misses its target. An accuracy-only run has no performance verdict and no latency charts."
	case eff.Mode == loadgen.AccuracyOnly:
		sv.Verdict, sv.VerdictClass = "ACCURACY ONLY", "neutral"
		sv.Explanation = "An accuracy-only run has no performance verdict and no latency charts; the data set gave no labels to score it against."
	default:
		sv.Verdict, sv.VerdictClass = "NO RESULT", "invalid"
		sv.Explanation = "The test ended before a performance pass was summarised."
	}
	if sc.Accuracy != nil {
		a := sc.Accuracy
		metric := a.Metric
		if metric == "" {
			metric = "accuracy"
		}
		name, value := fmtAccuracy(metric, a.Value)
		_, target := fmtAccuracy(metric, a.Target)
		sv.Accuracy = &accuracyView{
			Metric: name, Value: value, Target: target,
			Pass: a.Pass, Entries: fmtCount(uint64(len(res.Accuracy))),
		}
	}
	sv.Issues, sv.IssuesMore = logIssues(res)
	sv.ErrorGroups = errorGroupTable(res)
	if i := res.ReportedPass(); i >= 0 {
		sv.ErrorChart = errorChart(res, i)
	}
	sv.Run = runTable(res)
	sv.Passes = passTable(res)
	steadyView, steadyMarks := buildSteady(sc.Steady)
	if sc.ServerMetrics != nil {
		end := int64(0)
		if i := res.ReportedPass(); i >= 0 {
			end = res.Passes[i].EndNs
		}
		if sv.Server = buildServer(sc.ServerMetrics, end, steadyMarks); sv.Server != nil {
			sv.Server.Anchor = anchor
		}
	}
	if sc.Power != nil {
		end := int64(0)
		if i := res.ReportedPass(); i >= 0 {
			end = res.Passes[i].EndNs
		}
		if sv.Power = buildPower(sc.Power, end); sv.Power != nil {
			sv.Power.Anchor = anchor
		}
	}
	sv.Settings = settingsTable(eff)
	sv.Serving = buildServing(sc.Serving)
	sv.Shards = buildShards(anchor, sc.Shards)
	if sv.Bandwidth = buildBandwidth(sc.Bandwidth); sv.Bandwidth != nil {
		sv.Bandwidth.Anchor = anchor
	}
	if sum != nil {
		fillVerdict(sv, sum)
		fillMetric(sv, sum)
	}
	if sc.GBT != nil {
		fillGBT(sv, res, sc.GBT)
	}
	if v := sc.Verdict; v != nil && v.Word != "-" {
		// The run's one verdict; its reasons hold LoadGen's advice and
		// aimeter's reasons, said once.
		sv.Verdict, sv.VerdictClass = v.Word, "invalid"
		if v.Pass {
			sv.VerdictClass = "valid"
		}
		sv.Reasons = v.Reasons
		if sc.GBT == nil {
			sv.Recommendations, sv.AimeterReasons = nil, nil
		} else if sc.GBT.Metrics.Passed() && !v.Pass {
			sv.Explanation = "The loss rate is within the permissible threshold, but the test did not run as asked: see why below."
		}
		if !v.Pass && sum != nil && sum.SampleCount == sum.Result.LostSamples {
			sv.MetricValue, sv.MetricRaw = "--", "no sample succeeded"
		}
	}
	if sum == nil {
		return sv
	}
	sv.Stats = statsTable(res, sum)
	sv.Percentiles = percentileTable(sum)
	sv.Nodes = nodeTable(NodeTable(res, sc.Nodes))

	pass := res.ReportedPass()
	if pass < 0 {
		sv.ChartNote = "No pass is marked as reported: there are no records to chart."
		return sv
	}
	ps := collectPassColumns(res.PassColumns(pass, 0), res.Passes[pass], eff.Scenario == loadgen.MultiStream)
	if ps.hist.n == 0 {
		sv.ChartNote = "The records of the reported pass are not available: there is nothing to chart."
		return sv
	}
	sv.Charts = buildCharts(anchor, sum, ps)
	sv.Steady, sv.Charts.Windows = steadyView, steadyMarks
	if !sv.Charts.CDF.Exact {
		sv.ChartNote = fmt.Sprintf("The pass has more than %d latencies: the CDF is read from the histogram (buckets 2.3%% wide).", exactCDFLimit)
	}
	return sv
}

func fillVerdict(sv *scenarioView, s *loadgen.Summary) {
	if s.HasPerfConstraints() {
		sv.Checks = append(sv.Checks, check{"Performance constraints satisfied", s.PerfConstraintsMet})
	}
	sv.Checks = append(sv.Checks,
		check{"Min duration satisfied", s.MinDurationMet},
		check{"Min queries satisfied", s.MinQueriesMet},
		check{"Early stopping satisfied", s.EarlyStoppingMet},
		check{"No lost or failed samples, run not interrupted (aimeter)", len(s.AimeterReasons) == 0},
	)
	if !s.Valid {
		if !s.PerfConstraintsMet {
			sv.Recommendations = append(sv.Recommendations, strings.Split(s.PerfConstraintsRecommendation, "\n * ")...)
		}
		if !s.MinDurationMet {
			sv.Recommendations = append(sv.Recommendations, s.MinDurationRecommendation)
		}
		if !s.MinQueriesMet {
			sv.Recommendations = append(sv.Recommendations, "The test exited early, before enough queries were issued. See the detailed log for why this may have occurred.")
		}
	}
	sv.AimeterReasons = s.AimeterReasons
	if s.Effective.Scenario == loadgen.Offline {
		return
	}
	if !s.Effective.UseTokenLatencies {
		sv.EarlyStopping = []textBlock{{"Early Stopping Result", strings.Join(s.EarlyStoppingLines, "\n")}}
	} else {
		sv.EarlyStopping = []textBlock{
			{"TTFT Early Stopping Result", strings.Join(s.EarlyStoppingTTFTLines, "\n")},
			{"TPOT Early Stopping Result", strings.Join(s.EarlyStoppingTPOTLines, "\n")},
		}
	}
}

func fillMetric(sv *scenarioView, s *loadgen.Summary) {
	name, value := s.Metric()
	switch s.Effective.Scenario {
	case loadgen.SingleStream, loadgen.MultiStream:
		sv.MetricName = strings.TrimSuffix(name, " (ns)")
		sv.MetricValue = fmtDur(int64(value))
		sv.MetricRaw = fmt.Sprintf("%d ns", int64(value))
	default:
		sv.MetricName = name
		sv.MetricValue = fmtRate(value, "samples/s")
	}
}

func runTable(res *loadgen.Result) table {
	t := table{Head: []string{"", ""}}
	add := func(k, v string) { t.Rows = append(t.Rows, []string{k, v}) }
	add("SUT", orUnknown(res.SUTName))
	add("QSL", fmt.Sprintf("%s (%s samples, %s in performance set)", orUnknown(res.QSLName), fmtCount(res.QSLTotalCount), fmtCount(res.QSLPerformanceCount)))
	if !res.StartTime.IsZero() {
		add("Started", res.StartTime.UTC().Format("2006-01-02 15:04:05.000 MST"))
	}
	add("Log warnings / errors", fmtCount(uint64(res.WarningCount()))+" / "+fmtCount(uint64(res.ErrorCount())))
	if res.FailedSamples+res.LostSamples > 0 {
		add("Failed / lost samples (whole test)", fmtCount(res.FailedSamples)+" / "+fmtCount(res.LostSamples))
	}
	if res.UnknownCompletions+res.DuplicateCompletions > 0 {
		add("Unknown / duplicate completions", fmtCount(res.UnknownCompletions)+" / "+fmtCount(res.DuplicateCompletions))
	}
	return t
}

func statsTable(res *loadgen.Result, s *loadgen.Summary) table {
	t := table{Head: []string{"Statistic", "Value", "ns"}}
	add := func(k, v, ns string) { t.Rows = append(t.Rows, []string{k, v, ns}) }
	dur := func(k string, ns int64) { add(k, fmtDur(ns), fmt.Sprint(ns)) }
	add("Samples", fmtCount(s.SampleCount), "")
	add("Queries", fmtCount(s.QueryCount), "")
	e := &s.Effective
	switch e.Scenario {
	case loadgen.SingleStream:
		add("QPS with loadgen overhead", fmtRate(s.QPSWithLoadgenOverhead(), "queries/s"), "")
		add("QPS without loadgen overhead", fmtRate(s.QPSWithoutLoadgenOverhead(), "queries/s"), "")
	case loadgen.Server:
		add("Scheduled samples per second", fmtRate(s.ScheduledSamplesPerSecond(), "samples/s"), "")
		label := "Queries over the latency bound (" + fmtDur(e.TargetLatencyNs) + ")"
		if e.UseTokenLatencies {
			// LoadGen then judges TTFT and TPOT, not this bound.
			label += ", not a constraint with token latencies"
		}
		add(label, fmtCount(s.OverLatencyQueryCount), "")
	}
	if e.Scenario == loadgen.MultiStream {
		dur("Min query latency", s.QueryLatencyMin)
		dur("Mean query latency", s.QueryLatencyMean)
		dur("Max query latency", s.QueryLatencyMax)
	}
	dur("Min sample latency", s.SampleLatencyMin)
	dur("Mean sample latency", s.SampleLatencyMean)
	dur("Max sample latency", s.SampleLatencyMax)
	if e.UseTokenLatencies {
		add("Tokens", fmtCount(uint64(max(s.TokenCount, 0))), "")
		if e.Scenario != loadgen.Offline {
			dur("Mean first-token latency", s.FirstTokenLatencyMean)
			dur("Mean time per output token", s.TimePerOutputTokenMean)
		}
	}
	if s.Result.LostSamples+s.Result.FailedSamples > 0 {
		add("Failed / lost samples", fmtCount(s.Result.FailedSamples)+" / "+fmtCount(s.Result.LostSamples), "")
	}
	if s.Result.StopReason != "" {
		add("Issuing stopped", s.Result.StopReason, "")
	}
	return t
}

func percentileTable(s *loadgen.Summary) table {
	e := &s.Effective
	ms := e.Scenario == loadgen.MultiStream
	tok := e.UseTokenLatencies && e.Scenario != loadgen.Offline
	t := table{Head: []string{"Percentile", "Sample latency"}}
	if ms {
		t.Head = append(t.Head, "Query latency")
	}
	if tok {
		t.Head = append(t.Head, "First-token latency", "Time per output token")
	}
	row := func(label string, p, tp, pp loadgen.PercentileEntry) {
		r := []string{label, fmtDur(p.SampleLatency)}
		if ms {
			r = append(r, fmtDur(p.QueryLatency))
		}
		if tok {
			r = append(r, fmtDur(tp.SampleLatency), fmtDur(pp.SampleLatency))
		}
		t.Rows = append(t.Rows, r)
	}
	if e.Scenario != loadgen.Offline { // Offline's fixed 0.99 is no target
		row(fmtPct(s.TargetPercentile.Percentile)+" (target)", s.TargetPercentile, s.TokenTargetPercentile, s.TPOTTargetPercentile)
	}
	for i := range s.Percentiles {
		row(fmtPct(s.Percentiles[i].Percentile), s.Percentiles[i], s.TokenPercentiles[i], s.TPOTPercentiles[i])
	}
	return t
}

func passTable(res *loadgen.Result) table {
	t := table{Head: []string{"#", "Kind", "Target QPS (queries/s)", "Queries issued", "Duration", "Reported", "Stop reason"}}
	for i, p := range res.Passes {
		rep := ""
		if p.Reported {
			rep = "yes"
		}
		t.Rows = append(t.Rows, []string{
			// Seven digits: find-peak probes differ in the first decimal.
			fmt.Sprint(i), string(p.Kind), fmtSig(p.TargetQPS, 7), fmtCount(p.QueriesIssued),
			fmtDur(p.EndNs), rep, p.StopReason,
		})
	}
	return t
}

func logIssues(res *loadgen.Result) ([]string, int) {
	const maxIssues = 20
	var out []string
	more := 0
	for _, e := range res.Events {
		if !e.Error && !e.Warning {
			continue
		}
		if len(res.Errors) > 0 && isSampleFailureNote(e) {
			// Listed by group (category, code, examples) instead.
			continue
		}
		if len(out) == maxIssues {
			more++
			continue
		}
		kind := "warning"
		if e.Error {
			kind = "error"
		}
		out = append(out, fmt.Sprintf("%s at %s: %s: %s", kind, fmtDur(e.TimeNs), e.Key, fmtValue(e.Value)))
	}
	return out, more
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// fmtValue formats a detail-log value for a reader: floats with six
// significant digits, everything else as the log holds it.
func fmtValue(v any) string {
	if f, ok := v.(float64); ok {
		return fmtSig(f, 6)
	}
	return fmt.Sprint(v)
}
