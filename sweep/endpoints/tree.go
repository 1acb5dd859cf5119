package endpoints

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"aimeter/stats"
	"aimeter/sweep"
	"aimeter/sysinfo"
)

// Files of the tree, Endpoints' names: those of a point directory, and
// SystemPowerFile, one per system.
const (
	PointFile             = "point.yaml"
	ConfigFile            = "config.yaml"
	ResultFile            = "result_summary.json"
	AccuracyFile          = "accuracy_results.json"
	SystemDescFile        = "system_desc.json"
	SystemPowerFile       = "system_power.json"
	DefaultImplementation = "aimeter"
)

// Percentiles are the percentile keys of every block of
// result_summary.json, in percent. The values are LoadGen's (the element
// at index trunc(n·p) of the sorted values), as everywhere in aimeter.
var Percentiles = []float64{50, 90, 95, 99, 99.9}

// ModelDir is the tree's results/<system>/<model> directory, relative to
// the output directory.
func (s *Submission) ModelDir() string {
	return path.Join(s.Organization, s.SubmissionID, "results", s.System, s.Model)
}

// Build returns the files of the submission tree for sw, by path relative
// to the output directory (slash-separated), each file's bytes. It is a
// function of its arguments.
func Build(sw *Sweep, s *Submission) (map[string][]byte, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	if len(sw.Points) == 0 {
		return nil, errors.New("the sweep has no point")
	}
	if err := checkPointSeeds(sw, s); err != nil {
		return nil, err
	}
	impl := s.Implementation
	if impl == "" {
		impl = DefaultImplementation
	}
	cmax := s.MaxSupportedConcurrency
	if cmax == 0 {
		cmax = sw.CMax
	}
	root := path.Join(s.Organization, s.SubmissionID)
	files := map[string][]byte{
		path.Join(root, "src", impl, "README.md"): []byte(srcReadme),
		path.Join(root, "docs", "README.md"):      []byte(docsReadme),
	}
	maxTPS := 0.0
	for _, p := range sw.Points {
		maxTPS = max(maxTPS, p.SystemTPS)
	}
	accuracy, err := marshalJSON(s.Accuracy)
	if err != nil {
		return nil, fmt.Errorf("accuracy: %w", err)
	}
	power, err := marshalJSON(s.SystemPower)
	if err != nil {
		return nil, fmt.Errorf("system_power: %w", err)
	}
	files[path.Join(root, "results", s.System, SystemPowerFile)] = power
	withAccuracy, err := AccuracyPoints(sw, cmax)
	if err != nil {
		return nil, err
	}
	for _, p := range sw.Points {
		dir := path.Join(s.ModelDir(), fmt.Sprintf("r%d", p.Concurrency))
		util := 0.0
		if maxTPS > 0 {
			util = p.SystemTPS / maxTPS
		}
		pointYAML, err := yaml.MarshalWithOptions(pointConfig(p, s, cmax, impl), yaml.Indent(2))
		if err != nil {
			return nil, err
		}
		configYAML, err := yaml.MarshalWithOptions(p.Config, yaml.Indent(2))
		if err != nil {
			return nil, fmt.Errorf("config of point r%d: %w", p.Concurrency, err)
		}
		summary, err := marshalJSON(resultSummary(p))
		if err != nil {
			return nil, err
		}
		desc, err := marshalJSON(systemDesc(p.System, s, cmax, util))
		if err != nil {
			return nil, err
		}
		files[path.Join(dir, PointFile)] = pointYAML
		files[path.Join(dir, ConfigFile)] = configYAML
		files[path.Join(dir, ResultFile)] = summary
		if withAccuracy[p.Concurrency] {
			files[path.Join(dir, AccuracyFile)] = accuracy
		}
		files[path.Join(dir, SystemDescFile)] = desc
	}
	return files, nil
}

// checkPointSeeds refuses a sweep whose points did not run with the
// submission's seed set (Submission.Seeds): MLCommons' checker refuses
// each such point (seed-runtime-match), and Endpoints seeds the per-query
// salt with the set's model_seed. The error names every point and seed.
func checkPointSeeds(sw *Sweep, s *Submission) error {
	set, err := s.Seeds()
	if err != nil {
		return err
	}
	var bad []error
	salted := false
	for _, p := range sw.Points {
		salted = salted || p.SaltSeed != nil
		if m := set.Mismatch(RunSeeds{Schedule: p.SchedulerSeed, SampleIndex: p.SampleIndexSeed, Salt: p.SaltSeed}); len(m) > 0 {
			bad = append(bad, fmt.Errorf("point r%d: %s", p.Concurrency, strings.Join(m, "; ")))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%d of the sweep's %d points did not run with seed set %s's seeds, and MLCommons' checker refuses them (seed-runtime-match): run the sweep again with %s\n%w",
		len(bad), len(sw.Points), set.ID, strings.Join(set.SetFlags(salted), " "), errors.Join(bad...))
}

// Write builds the tree for the sweep in sweepDir and writes it under
// out, which must not already hold the submission's directory, then
// checks it (VerifyWith, knowing the submission's seed set). It returns
// the paths written, relative to out, sorted. A sweep whose points did not
// run with the submission's seed set is refused before anything is
// written; a tree that fails a rule Verify evaluates stays written, and
// the error names every violation.
func Write(out, sweepDir string, s *Submission) ([]string, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	sw, err := Collect(sweepDir)
	if err != nil {
		return nil, err
	}
	files, err := Build(sw, s)
	if err != nil {
		return nil, err
	}
	root := filepath.Join(out, s.Organization, s.SubmissionID)
	if _, err := os.Stat(root); err == nil {
		return nil, fmt.Errorf("%s already exists: choose another output directory or submission_id", root)
	}
	names := slices.Sorted(maps.Keys(files))
	for _, name := range names {
		p := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			return nil, err
		}
	}
	set, err := s.Seeds()
	if err != nil {
		return names, err
	}
	if err := VerifyWith(root, VerifyOptions{SeedSets: []SeedSet{set}}); err != nil {
		n := 1
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			n = len(j.Unwrap())
		}
		return names, fmt.Errorf("the tree written to %s breaks %d rule(s) of Endpoints' checker that aimeter evaluates:\n%w", root, n, err)
	}
	return names, nil
}

// AccuracyPoints are the points that carry accuracy_results.json, by
// concurrency: Endpoints section 4.3 wants exactly one accuracy run in each
// mandatory band (ultra-low, low, medium and high concurrency, from Cmin =
// min(lowest point, 32) and Cmax) and one at the Offline point, and none
// elsewhere. aimeter takes the lowest point of each band and the Offline
// point (dedicated, or the elected Cmax point).
func AccuracyPoints(sw *Sweep, cmax int) (map[uint64]bool, error) {
	lowest := math.MaxInt
	for _, p := range sw.Points {
		if p.OfflineMode != "dedicated" {
			lowest = min(lowest, int(p.Concurrency))
		}
	}
	if lowest == math.MaxInt {
		return nil, errors.New("the sweep has no fixed-concurrency point")
	}
	r, err := sweep.ComputeRegions(min(lowest, sweep.UltraLowMax), cmax)
	if err != nil {
		return nil, fmt.Errorf("regions of Cmin %d, Cmax %d: %w", min(lowest, sweep.UltraLowMax), cmax, err)
	}
	out := map[uint64]bool{}
	taken := map[string]bool{}
	pts := slices.Clone(sw.Points)
	slices.SortFunc(pts, func(a, b Point) int { return int(a.Concurrency) - int(b.Concurrency) })
	for _, p := range pts {
		if p.OfflineMode != "none" {
			out[p.Concurrency] = true
			continue
		}
		region := r.Classify(int(p.Concurrency))
		if region == sweep.RegionMargin || region == "" || taken[region] {
			continue
		}
		taken[region] = true
		out[p.Concurrency] = true
	}
	return out, nil
}

func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pointConfig is point.yaml (Endpoints section 8.3), in its keys' order.
func pointConfig(p Point, s *Submission, cmax int, impl string) yaml.MapSlice {
	runtime := yaml.MapSlice{
		{Key: "scheduler_rng_seed", Value: p.SchedulerSeed},
		{Key: "sample_index_rng_seed", Value: p.SampleIndexSeed},
		{Key: "model_seed", Value: *s.ModelSeed},
	}
	settings := yaml.MapSlice{
		{Key: "load_pattern", Value: "concurrency"},
		{Key: "min_duration_ms", Value: p.MinDurationMs},
		{Key: "min_sample_count", Value: p.MinQueryCount},
		{Key: "stream_all_chunks", Value: true},
		{Key: "runtime", Value: runtime},
	}
	warm := yaml.MapSlice{
		{Key: "duration_s", Value: 0.0},
		{Key: "requests_issued", Value: 0},
		{Key: "requests_completed", Value: 0},
		{Key: "data_source", Value: "none"},
		{Key: "concurrency", Value: 0},
	}
	if w := p.Warmup; w != nil && w.Requests > 0 {
		warm = yaml.MapSlice{
			{Key: "duration_s", Value: float64(w.DurationNs) / 1e9},
			{Key: "requests_issued", Value: w.Requests},
			{Key: "requests_completed", Value: w.Requests - min(w.Failed, w.Requests)},
			{Key: "data_source", Value: p.QSLName},
			{Key: "concurrency", Value: p.Concurrency},
			// aimeter keeps no warm-up records: its results are in no file.
			{Key: "logs_retained", Value: false},
		}
	}
	m := yaml.MapSlice{{Key: "concurrency", Value: p.Concurrency}}
	if p.Region != "" {
		m = append(m, yaml.MapItem{Key: "region", Value: p.Region})
	}
	m = append(m,
		yaml.MapItem{Key: "dataset", Value: s.DatasetName},
		yaml.MapItem{Key: "runtime_settings", Value: settings},
		yaml.MapItem{Key: "warmup", Value: warm},
	)
	if st := steadyState(p); st != nil {
		m = append(m, yaml.MapItem{Key: "steady_state", Value: st})
	}
	return append(m,
		yaml.MapItem{Key: "division", Value: s.Division},
		yaml.MapItem{Key: "max_supported_concurrency", Value: cmax},
		yaml.MapItem{Key: "model_name", Value: s.Model},
		yaml.MapItem{Key: "model_precision", Value: s.ModelPrecision},
		yaml.MapItem{Key: "link_to_model", Value: s.LinkToModel},
		yaml.MapItem{Key: "dataset_name", Value: s.DatasetName},
		yaml.MapItem{Key: "dataset_type", Value: s.DatasetType},
		yaml.MapItem{Key: "dataset_link", Value: s.DatasetLink},
		yaml.MapItem{Key: "offline", Value: p.OfflineMode},
		yaml.MapItem{Key: "shared_src", Value: path.Join("src", impl)},
		yaml.MapItem{Key: "shared_docs", Value: "docs"},
		yaml.MapItem{Key: "seed_set", Value: s.SeedSet},
		yaml.MapItem{Key: "target_cohort", Value: s.TargetCohort},
	)
}

// The vocabulary of point.yaml's steady_state block (Endpoints section
// 4.4), as MLCommons' checker reads it: the coverage statuses, of which
// only windowable makes the window's metrics the official result, the
// detector's verdicts and the gating metrics' states.
const (
	StatusWindowable           = "windowable"
	StatusInsufficientDuration = "insufficient_duration"
	StatusInsufficientPasses   = "insufficient_passes"
	StatusPartialDataset       = "partial_dataset"
	VerdictSteady              = "STEADY STATE"
	VerdictNotFound            = "not found"
	StatePlateau               = "Plateau"
	// BasisWindow and BasisTotal are aimeter's basis key: the metrics of
	// the block are the window's, or the whole run's (Endpoints' "total",
	// the fallback when no window qualifies).
	BasisWindow = "steady_state"
	BasisTotal  = "total"
	// minTrendN is the fewest super-passes a window spans (the checker's
	// MIN_TREND_N).
	minTrendN = 4
)

// steadyState is point.yaml's steady_state block, from the run's
// super-pass analysis (metrics.SuperPassOf, the one result.json reports);
// nil for a run without one (no token times, or no data set size).
//
// A window found is status windowable, verdict STEADY STATE, its extent
// in super-passes (counted from 0, warm-up included; end inclusive), its
// size, completed samples and issue-time span in seconds, and TPOT p50 and
// p90, the gating metrics, each a Plateau. With none, the block says why
// in the checker's terms (partial_dataset: less than one pass over the
// data set; insufficient_passes: fewer than 4 super-passes after the
// warm-up; insufficient_duration: enough super-passes, but no plateau, or
// none as long as its minimum duration), verdict "not found", and states
// no window extent, so that the checker measures the point's duration
// over the whole run; its metrics are then the whole run's (basis total).
// metrics are in ms (tokens per second for the rates), percentiles by
// LoadGen's rule over the successful samples, from the scheduled time.
func steadyState(p Point) yaml.MapSlice {
	sp := p.Steady
	if sp == nil || sp.Err != nil {
		return nil
	}
	r := sp.SuperPassResult
	var out yaml.MapSlice
	metrics := sp.Window
	if r.Found {
		out = yaml.MapSlice{
			{Key: "status", Value: StatusWindowable},
			{Key: "verdict", Value: VerdictSteady},
			{Key: "basis", Value: BasisWindow},
			{Key: "window", Value: yaml.MapSlice{
				{Key: "super_pass_start", Value: r.Lo},
				{Key: "super_pass_end", Value: r.Hi - 1},
				{Key: "super_pass_size", Value: r.Size},
				{Key: "n_samples", Value: metrics.Completed},
				{Key: "duration_s", Value: float64(r.EndNs-r.StartNs) / 1e9},
			}},
			{Key: "state", Value: yaml.MapSlice{
				{Key: "tpot_p50", Value: StatePlateau},
				{Key: "tpot_p90", Value: StatePlateau},
			}},
		}
	} else {
		metrics = sp.Whole
		issued := len(r.Samples)
		status := StatusInsufficientDuration
		switch {
		case issued < sp.DatasetSize:
			status = StatusPartialDataset
		case issued/r.Size-r.Warmup < minTrendN:
			status = StatusInsufficientPasses
		}
		out = yaml.MapSlice{
			{Key: "status", Value: status},
			{Key: "verdict", Value: VerdictNotFound},
			{Key: "basis", Value: BasisTotal},
			{Key: "reason", Value: r.Reason},
			{Key: "window", Value: yaml.MapSlice{
				{Key: "super_pass_size", Value: r.Size},
				{Key: "n_samples", Value: metrics.Completed},
			}},
		}
	}
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	m := yaml.MapSlice{
		{Key: "ttft_p50_ms", Value: ms(metrics.TTFT[0])},
		{Key: "ttft_p90_ms", Value: ms(metrics.TTFT[1])},
		{Key: "tpot_p50_ms", Value: ms(metrics.TPOT[0])},
		{Key: "tpot_p90_ms", Value: ms(metrics.TPOT[1])},
		{Key: "latency_p50_ms", Value: ms(metrics.Latency[0])},
		{Key: "latency_p90_ms", Value: ms(metrics.Latency[1])},
		{Key: "system_tps", Value: metrics.OutputTokensPerSec},
	}
	if metrics.TPOT[1] > 0 {
		m = append(m, yaml.MapItem{Key: "tps_per_user", Value: 1e3 / ms(metrics.TPOT[1])})
	}
	return append(out, yaml.MapItem{Key: "metrics", Value: m})
}

// Stats is a percentile block of result_summary.json: the sum, the
// extremes, the mean and the percentiles by key ("50", "90", "99.9").
type Stats struct {
	Total       float64            `json:"total"`
	Min         float64            `json:"min"`
	Max         float64            `json:"max"`
	Avg         float64            `json:"avg"`
	Percentiles map[string]float64 `json:"percentiles"`
}

func statsOf(v []int64) Stats {
	s := Stats{Percentiles: map[string]float64{}}
	if len(v) == 0 {
		return s
	}
	v = slices.Clone(v)
	slices.Sort(v)
	for _, x := range v {
		s.Total += float64(x)
	}
	s.Min, s.Max, s.Avg = float64(v[0]), float64(v[len(v)-1]), s.Total/float64(len(v))
	for _, p := range Percentiles {
		s.Percentiles[percentKey(p)] = float64(stats.Percentile(v, p/100))
	}
	return s
}

func percentKey(p float64) string {
	if p == math.Trunc(p) {
		return fmt.Sprintf("%d", int(p))
	}
	return fmt.Sprintf("%g", p)
}

// ResultSummary is result_summary.json: counts, the pass's length and the
// percentile blocks of the successful requests, times in ns (from the
// scheduled time), lengths in tokens. output_sequence_lengths.total over
// duration_ns is the point's system_tps exactly.
type ResultSummary struct {
	NSamplesIssued        uint64  `json:"n_samples_issued"`
	NSamplesCompleted     uint64  `json:"n_samples_completed"`
	NSamplesFailed        uint64  `json:"n_samples_failed"`
	DurationNs            float64 `json:"duration_ns"`
	TTFT                  Stats   `json:"ttft"`
	TPOT                  Stats   `json:"tpot"`
	Latency               Stats   `json:"latency"`
	OutputSequenceLengths Stats   `json:"output_sequence_lengths"`
	// The point's headline figures, as sweep.json has them.
	SystemTPS  float64 `json:"system_tps"`
	TPSPerUser float64 `json:"tps_per_user"`
	// Client names the client that measured the point.
	Client string `json:"client"`
}

func resultSummary(p Point) ResultSummary {
	var ttft, tpot, e2e, osl []int64
	for _, x := range p.Samples {
		if !x.OK {
			continue
		}
		ttft = append(ttft, x.TTFTNs)
		e2e = append(e2e, x.E2ENs)
		osl = append(osl, x.Tokens)
		if x.HasTPOT {
			tpot = append(tpot, x.TPOTNs)
		}
	}
	return ResultSummary{
		NSamplesIssued:        p.Issued,
		NSamplesCompleted:     p.Completed,
		NSamplesFailed:        p.Errors + p.Lost,
		DurationNs:            math.Round(p.ElapsedS * 1e9),
		TTFT:                  statsOf(ttft),
		TPOT:                  statsOf(tpot),
		Latency:               statsOf(e2e),
		OutputSequenceLengths: statsOf(osl),
		SystemTPS:             p.SystemTPS,
		TPSPerUser:            p.TPSPerUser,
		Client:                "aimeter " + p.System.AimeterVersion,
	}
}

// systemDesc is system_desc.json: the fields derived from the recorded
// host, then the submitter's, which win.
func systemDesc(sys sysinfo.System, s *Submission, cmax int, util float64) map[string]any {
	node := map[string]any{
		"system_node_ensemble_id": 0,
		"number_of_nodes":         1,
	}
	if sys.CPU != "" {
		node["host_processor_model_name"] = sys.CPU
	}
	if sys.Cores > 0 {
		node["host_processor_vcpu_count"] = sys.Cores
	}
	if sys.MemoryBytes > 0 {
		node["host_memory_capacity"] = fmt.Sprintf("%.0f GiB", float64(sys.MemoryBytes)/(1<<30))
	}
	if sys.OS != "" {
		node["operating_system"] = sys.OS + "/" + sys.Arch
	}
	// One accelerator_info entry per distinct model.
	var acc []map[string]any
	for _, a := range sys.Accelerators {
		i := slices.IndexFunc(acc, func(m map[string]any) bool { return m["accelerator_model_name"] == a.Name })
		if i >= 0 {
			acc[i]["accelerators_per_node"] = acc[i]["accelerators_per_node"].(int) + 1
			continue
		}
		m := map[string]any{"accelerator_model_name": a.Name, "accelerators_per_node": 1}
		if a.MemoryBytes > 0 {
			m["accelerator_memory_capacity"] = fmt.Sprintf("%.0f GiB", float64(a.MemoryBytes)/(1<<30))
		}
		acc = append(acc, m)
	}
	if len(acc) > 0 {
		node["accelerator_info"] = acc
	}
	maps.Copy(node, s.Node)
	short := s.System
	if len(short) > 40 {
		short = short[:40]
	}
	d := map[string]any{
		"submitter_org_names":       s.Organization,
		"submission_id":             s.SubmissionID,
		"system_name":               s.System,
		"shortened_system_name":     short,
		"max_supported_concurrency": cmax,
		"division":                  s.Division,
		"model_precision":           s.ModelPrecision,
		"link_to_model":             s.LinkToModel,
		"dataset_name":              s.DatasetName,
		"dataset_type":              s.DatasetType,
		"dataset_link":              s.DatasetLink,
		"node_types":                []map[string]any{node},
		"tps_utilization":           util,
	}
	maps.Copy(d, s.SystemDesc)
	return d
}

const srcReadme = `# aimeter

The points of this submission were measured by aimeter, a Go benchmark
client that follows MLPerf LoadGen's semantics: every latency is from the
query's scheduled time, percentiles are LoadGen's (the element at index
trunc(n·p) of the sorted values), and each point's raw records are kept in
an aimeter run bundle that 'aimeter report' recomputes every figure from.
This tree was written by 'aimeter export --endpoints' from such a sweep.
`

const docsReadme = `# Documentation

How the points were measured: each r<N> directory is one fixed-concurrency
run of an 'aimeter sweep' (config.yaml holds its settings and command
line); result_summary.json holds its counts and percentile blocks, times
in nanoseconds from the scheduled time, lengths in output tokens.
`
