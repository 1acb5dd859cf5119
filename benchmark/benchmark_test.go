package benchmark

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/gbt/testinfo"
	"aimeter/loadgen"
	"aimeter/sut"
	"aimeter/sut/reference/mlp"
	"aimeter/sysinfo"
)

// countingQSL counts the loads of each sample, as a real data set does
// (dataset.QSL), and refuses to unload what is not loaded.
type countingQSL struct {
	mu     sync.Mutex
	total  uint64
	loaded []int
}

func newCountingQSL(total uint64) *countingQSL {
	return &countingQSL{total: total, loaded: make([]int, total)}
}

func (q *countingQSL) Name() string                   { return "CountingQSL" }
func (q *countingQSL) TotalSampleCount() uint64       { return q.total }
func (q *countingQSL) PerformanceSampleCount() uint64 { return min(q.total, 64) }
func (q *countingQSL) LoadSamples(idx []uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, i := range idx {
		q.loaded[i]++
	}
	return nil
}
func (q *countingQSL) UnloadSamples(idx []uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, i := range idx {
		if q.loaded[i] == 0 {
			return fmt.Errorf("unloading sample %d, which is not loaded", i)
		}
		q.loaded[i]--
	}
	return nil
}
func (q *countingQSL) isLoaded(i uint64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.loaded[i] > 0
}

// loadedSUT answers a sample with its label (index mod 10) when the sample
// is loaded in its QSL, and fails it "not loaded" otherwise, as the
// reference SUT does.
type loadedSUT struct{ qsl *countingQSL }

func (*loadedSUT) Name() string { return "LoadedSUT" }
func (s *loadedSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, q := range samples {
		if !s.qsl.isLoaded(q.Index) {
			r.Fail(q.ID, fmt.Errorf("sample %d is not loaded in the QSL", q.Index))
			continue
		}
		r.Complete(q.ID, []byte{byte(q.Index % 10)}, 1)
	}
}
func (*loadedSUT) FlushQueries() {}

// TestMixedModeForeignJobsDrawLoadedSamples: the foreign jobs of a mixed
// test (mode 5) draw from samples loaded for as long as they run, so none
// fails "not loaded" (on the old code 81 of 100 did), and their figures
// are in the outcome and the bundle.
func TestMixedModeForeignJobsDrawLoadedSamples(t *testing.T) {
	qsl := newCountingQSL(1000)
	out, err := Run(context.Background(), Plan{
		Custom: &Custom{SUT: &loadedSUT{qsl}, QSL: qsl},
		GBT: &GBT{Input: gbt.PlanInput{
			Arrival:        gbt.Arrival{Mode: gbt.ModeMixed, Lambda: 2000, Duration: 300 * time.Millisecond},
			UnderlyingMode: gbt.ModePoisson,
			Mixed:          gbt.Mixed{Lambda: 300, QSLSize: 256, Seed: 1},
			LossThreshold:  0.01,
		}},
		OutputDir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Foreign == nil || out.GBT.Foreign == nil {
		t.Fatal("no foreign jobs in the outcome")
	}
	if n := out.Foreign.FailedSamples; n != 0 {
		t.Errorf("%d foreign samples failed (not loaded?); want 0", n)
	}
	if n := out.Result.FailedSamples; n != 0 {
		t.Errorf("%d main samples failed; want 0", n)
	}
	if out.GBT.Foreign.Loss.Sent < 30 {
		t.Errorf("only %d foreign jobs sent at 300/s for 300 ms", out.GBT.Foreign.Loss.Sent)
	}
	if !out.Verdict.Pass || out.Verdict.Kind != VerdictGBT {
		t.Errorf("verdict %+v, want a GB/T pass", out.Verdict)
	}
	// The foreign run ends with the main jobs' duration, not LoadGen's
	// min_query_count at the foreign rate.
	for _, p := range out.Foreign.Passes {
		if p.EndNs > int64(3*time.Second) {
			t.Errorf("the foreign jobs ran %v, long past the 300 ms test", time.Duration(p.EndNs))
		}
	}
	if _, err := os.Stat(filepath.Join(out.Dir, bundle.ForeignDir, bundle.RecordsFile)); err != nil {
		t.Errorf("no foreign records in the bundle: %v", err)
	}
}

// TestVerdictCountsForeignLoss: a mixed test whose foreign jobs lose more
// than the threshold fails, however its main jobs did (IN-50).
func TestVerdictCountsForeignLoss(t *testing.T) {
	pass := gbt.LossCheck{Rate: 0, Threshold: 0.01, Valid: true}
	fail := gbt.LossCheck{Rate: 0.5, Threshold: 0.01, Valid: false}
	for _, c := range []struct {
		why           string
		main, foreign *gbt.LossCheck
		want          bool
	}{
		{"no foreign jobs, main within the threshold", &pass, nil, true},
		{"both within the threshold", &pass, &pass, true},
		{"foreign jobs over the threshold fail the test", &pass, &fail, false},
		{"main jobs over the threshold fail the test", &fail, &pass, false},
	} {
		m := gbt.Metrics{Loss: gbt.Loss{LossCheck: *c.main}}
		if c.foreign != nil {
			m.Foreign = &gbt.PartMetrics{Loss: gbt.Loss{LossCheck: *c.foreign}}
		}
		o := &Outcome{GBT: &m, Bundle: &bundle.Bundle{Result: &loadgen.Result{}}}
		gbt.SetTest(o.Bundle, &gbt.Test{})
		if got := verdictOf(o); got.Pass != c.want || got.Kind != VerdictGBT {
			t.Errorf("%s: verdict %+v, want pass %v", c.why, got, c.want)
		}
	}
}

// labelSUT answers each sample with its label (index mod 10) for even
// indices and a wrong class for odd ones: top-1 is 50 %.
type labelSUT struct{}

func (labelSUT) Name() string { return "LabelSUT" }
func (labelSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, q := range samples {
		c := byte(q.Index % 10)
		if q.Index%2 == 1 {
			c = (c + 1) % 10
		}
		r.Complete(q.ID, []byte{c}, 1)
	}
}
func (labelSUT) FlushQueries() {}

// TestAccuracyScoredWhereLabelsExist: an accuracy run over a labelled QSL
// is scored, the score is in the outcome, the verdict and run.json.
func TestAccuracyScoredWhereLabelsExist(t *testing.T) {
	for _, c := range []struct {
		why    string
		target float64
		pass   bool
	}{
		{"50 % meets a 40 % target", 0.40, true},
		{"50 % misses a 60 % target", 0.60, false},
	} {
		qsl := newCountingQSL(200)
		s := loadgen.DefaultSettings()
		s.Scenario, s.Mode = loadgen.Offline, loadgen.AccuracyOnly
		dir := t.TempDir()
		out, err := Run(context.Background(), Plan{
			Custom:    &Custom{SUT: labelSUT{}, QSL: qsl, Labels: func(i uint64) uint8 { return uint8(i % 10) }, Target: c.target},
			Settings:  Settings{Explicit: &s},
			OutputDir: dir,
		})
		if err != nil {
			t.Fatalf("%s: %v", c.why, err)
		}
		a := out.Accuracy
		if a == nil || a.Value != 50 || a.Pass != c.pass {
			t.Fatalf("%s: accuracy %+v", c.why, a)
		}
		if out.Verdict.Kind != VerdictAccuracy || out.Verdict.Pass != c.pass {
			t.Errorf("%s: verdict %+v", c.why, out.Verdict)
		}
		back, err := bundle.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if back.AccuracyCheck == nil || *back.AccuracyCheck != *a {
			t.Errorf("%s: run.json keeps %+v, want %+v", c.why, back.AccuracyCheck, a)
		}
	}
}

// TestUsageErrorsNameTheFieldAndWriteNothing: a plan that cannot run is
// refused before anything runs, naming the field, and leaves no directory.
func TestUsageErrorsNameTheFieldAndWriteNothing(t *testing.T) {
	for _, c := range []struct {
		why   string
		plan  Plan
		field string
		text  string
	}{
		{"no output directory", Plan{}, "OutputDir", "OutputDir: empty"},
		{"an unknown scenario", Plan{Settings: Settings{Scenario: "Batch"}}, "Settings.Scenario", "Batch"},
		{"a Settings.Set that is no NAME=VALUE", Plan{Settings: Settings{Set: []string{"min_duration"}}}, "Settings.Set", "NAME=VALUE"},
		{"a Settings.Set of a key LoadGen does not read", Plan{Settings: Settings{Set: []string{"no_such_key=1"}}}, "Settings.Set", "no_such_key"},
		{"an unknown SUT kind", Plan{SUT: sut.Config{Kind: "tensorrt"}}, "SUT.Kind", "tensorrt"},
		{"an OpenAI SUT without its URL", Plan{SUT: sut.Config{Kind: sut.OpenAI}}, "SUT.Net.URLs", "needs --url"},
		{"a negative GB/T rate", Plan{GBT: &GBT{Input: gbt.PlanInput{Arrival: gbt.Arrival{Mode: gbt.ModePoisson, Lambda: -1, Duration: time.Second}}}}, "GBT.Input.Arrival.Lambda", "Poisson rate"},
		{"a GB/T mode and a scenario", Plan{Settings: Settings{Scenario: "Offline"}, GBT: &GBT{Input: gbt.PlanInput{Arrival: gbt.Arrival{Mode: gbt.ModeOffline}}}}, "Settings.Scenario", "chooses the LoadGen scenario"},
		{"a fixed concurrency on Server", Plan{Settings: Settings{Scenario: "Server", Concurrency: 4}}, "Settings.Concurrency", "SingleStream"},
	} {
		dir := filepath.Join(t.TempDir(), "out")
		if c.why != "no output directory" {
			c.plan.OutputDir = dir
		}
		out, err := Run(context.Background(), c.plan)
		var ue *UsageError
		if out != nil || !errors.As(err, &ue) {
			t.Errorf("%s: got %v, %v; want a usage error", c.why, out, err)
			continue
		}
		if c.field != "" && ue.Field != c.field {
			t.Errorf("%s: field %q, want %q (%v)", c.why, ue.Field, c.field, err)
		}
		if !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %q does not say %q", c.why, err, c.text)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the output directory was created", c.why)
		}
	}
}

// TestPlanFromBundleRepeatsTheRun: a run repeated from its bundle has the
// same SUT, the same requested settings and so the same schedule.
func TestPlanFromBundleRepeatsTheRun(t *testing.T) {
	first := filepath.Join(t.TempDir(), "first")
	out, err := Run(context.Background(), Plan{
		SUT:       sut.Config{Kind: sut.NullAsync, QSLSize: 77},
		Settings:  Settings{Scenario: "Server", Set: []string{"target_qps=5000", "min_duration=100", "min_query_count=1"}},
		OutputDir: first, CommandLine: []string{"aimeter", "run", "--api-key", "sk-secret", "--url=http://u:p@h/"},
		SLO: &bundle.SLO{E2ENs: 5e6},
	})
	if err != nil {
		t.Fatal(err)
	}
	inv := invocation.Of(out.Bundle)
	if inv == nil || inv.SUT.Kind != sut.NullAsync || inv.SUT.QSLSize != 77 || inv.SLO == nil || inv.SLO.E2ENs != 5e6 {
		t.Fatalf("invocation %+v", inv)
	}
	if got := strings.Join(inv.CommandLine, " "); strings.Contains(got, "sk-secret") || strings.Contains(got, "u:p@") {
		t.Errorf("a secret reached the bundle: %s", got)
	}
	p, err := PlanFromBundle(first)
	if err != nil {
		t.Fatal(err)
	}
	p.OutputDir = filepath.Join(t.TempDir(), "again")
	again, err := Run(context.Background(), *p)
	if err != nil {
		t.Fatal(err)
	}
	if again.Result.Requested != out.Result.Requested {
		t.Errorf("requested settings differ:\n%+v\n%+v", again.Result.Requested, out.Result.Requested)
	}
	if invocation.Of(again.Bundle).SLO == nil || *invocation.Of(again.Bundle).SLO != *inv.SLO {
		t.Errorf("the repeated run's SLO %+v, want %+v", invocation.Of(again.Bundle).SLO, inv.SLO)
	}
	if again.Result.QSLTotalCount != 77 {
		t.Errorf("QSL of %d samples, want 77", again.Result.QSLTotalCount)
	}
	sched := func(r *loadgen.Result) []int64 {
		var s []int64
		for rec := range r.Records() {
			if len(s) == 200 {
				break
			}
			s = append(s, rec.ScheduledNs)
		}
		return s
	}
	if a, b := sched(out.Result), sched(again.Result); !slices.Equal(a, b) {
		t.Errorf("the repeated run's schedule differs: %v… vs %v…", a[:5], b[:5])
	}
	if err := SameDir(first, first); err == nil {
		t.Error("repeating a run into its own bundle is not refused")
	}
}

// TestPlanFromBundleBadInput: --from on what cannot be repeated says why,
// naming the file.
func TestPlanFromBundleBadInput(t *testing.T) {
	notBundle := t.TempDir()
	if _, err := PlanFromBundle(notBundle); err == nil || !strings.Contains(err.Error(), "not a run bundle") {
		t.Errorf("a plain directory: %v", err)
	}
	// A bundle written without invocation.json, as by an older aimeter.
	old := t.TempDir()
	s := loadgen.DefaultSettings()
	s.Scenario, s.MinDurationMs, s.OfflineExpectedQPS = loadgen.Offline, 10, 1000
	res, err := loadgen.Run(context.Background(), labelSUT{}, newCountingQSL(10), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bundle.Write(old, &bundle.Bundle{Result: res, Version: "0.0.1-old"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanFromBundle(old); err == nil || !strings.Contains(err.Error(), bundle.InvocationFile) || !strings.Contains(err.Error(), "0.0.1-old") {
		t.Errorf("a bundle without invocation.json: %v", err)
	}
	// A bundle whose prompts file is gone.
	gone := t.TempDir()
	inv := &invocation.Invocation{SUT: sut.Config{Kind: sut.OpenAI, Net: sut.Net{URLs: []string{"http://127.0.0.1:1"}},
		OpenAI: &sut.OpenAIConfig{Prompts: filepath.Join(gone, "prompts.jsonl"), PromptsSHA256: "00"}}}
	gb := &bundle.Bundle{Result: res, Version: "test"}
	invocation.Set(gb, inv)
	if err := bundle.Write(gone, gb, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanFromBundle(gone); err == nil || !strings.Contains(err.Error(), "prompts.jsonl") {
		t.Errorf("a prompts file that is gone: %v", err)
	}
	// A custom SUT cannot be rebuilt.
	custom := t.TempDir()
	inv = &invocation.Invocation{SUT: sut.Config{Kind: sut.Custom, Name: "MySUT"}}
	cb := &bundle.Bundle{Result: res, Version: "test"}
	invocation.Set(cb, inv)
	if err := bundle.Write(custom, cb, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanFromBundle(custom); err == nil || !strings.Contains(err.Error(), "MySUT") {
		t.Errorf("a custom SUT: %v", err)
	}
}

func TestRedactArgs(t *testing.T) {
	for _, c := range []struct {
		why      string
		in, want []string
	}{
		{"a secret option's value", []string{"--api-key", "sk-1", "--url", "http://h"}, []string{"--api-key", "REDACTED", "--url", "http://h"}},
		{"the = form", []string{"--token=abc"}, []string{"--token=REDACTED"}},
		{"a variable's name is not secret", []string{"--api-key-env", "OPENAI_API_KEY"}, []string{"--api-key-env", "OPENAI_API_KEY"}},
		{"user information of a URL", []string{"--url", "https://me:pw@host/v1"}, []string{"--url", "https://host/v1"}},
		{"user information in the = form", []string{"--url=https://me:pw@host/v1"}, []string{"--url=https://host/v1"}},
		{"nil stays nil", nil, nil},
		{"a count of tokens is no secret", []string{"--output-tokens", "128", "--input-tokens=64"}, []string{"--output-tokens", "128", "--input-tokens=64"}},
	} {
		if got := RedactArgs(c.in); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.why, got, c.want)
		}
	}
}

// TestLoadWarning: the busy-machine warning is given only where the load
// of other processes plausibly explains the failed check: a missed latency
// bound (MLPerf) or jobs lost to their timeout (GB/T), with no SUT failure
// and no interrupt to explain it instead.
func TestLoadWarning(t *testing.T) {
	busy := &sysinfo.Load{CPUs: 2, WallSeconds: 20, OtherCPUSeconds: 18.6}
	quiet := &sysinfo.Load{CPUs: 2, WallSeconds: 20, OtherCPUSeconds: 1}
	missed := &loadgen.Summary{Valid: false, Effective: loadgen.Effective{Scenario: loadgen.Server}, PerfConstraintsMet: false}
	tooShort := &loadgen.Summary{Valid: false, Effective: loadgen.Effective{Scenario: loadgen.Offline}, PerfConstraintsMet: true}
	lostGBT := &gbt.Metrics{Loss: gbt.Loss{Lost: 5, Sent: 100, LossCheck: gbt.LossCheck{Rate: 0.05, Threshold: 0.01}}}
	tests := []struct {
		name string
		out  *Outcome
		load *sysinfo.Load
		want string // "" for no warning, else a part of it
	}{
		{"a missed latency bound on a busy machine warns, naming the load", &Outcome{Result: &loadgen.Result{Summary: missed}}, busy, "other processes used 0.93 of the 2 cores"},
		{"a missed latency bound on a quiet machine: the SUT's result", &Outcome{Result: &loadgen.Result{Summary: missed}}, quiet, ""},
		{"a too-short Offline run: load explains nothing", &Outcome{Result: &loadgen.Result{Summary: tooShort}}, busy, ""},
		{"failures decided it, not load", &Outcome{Result: &loadgen.Result{Summary: missed, FailedSamples: 3}}, busy, ""},
		{"an interrupted run", &Outcome{Result: &loadgen.Result{Summary: missed, Interrupted: "Ctrl-C"}}, busy, ""},
		{"a passing run: nothing to explain", &Outcome{Result: &loadgen.Result{Summary: missed}, Verdict: Verdict{Pass: true}}, busy, ""},
		{"GB/T jobs lost to their timeout on a busy machine", &Outcome{Result: &loadgen.Result{}, GBT: lostGBT}, busy, "job timeouts"},
		{"no load measured", &Outcome{Result: &loadgen.Result{Summary: missed}}, nil, ""},
	}
	for _, tt := range tests {
		got := loadWarning(tt.out, tt.load)
		if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: got %q, want one containing %q", tt.name, got, tt.want)
		}
	}
}

func TestSUTInfo(t *testing.T) {
	ref := referenceInfo("synthetic-test", "test-version")
	if !slices.Equal(ref.Precision, testinfo.PrecisionList{testinfo.FP32}) {
		t.Errorf("reference precision %v, want FP32: the MLP computes in float32 (GB-7.3-c)", ref.Precision)
	}
	if ref.BatchSize != mlp.MaxBatch || ref.BatchVariable != testinfo.Used {
		t.Errorf("reference batch %d variable %v, want %d and used: it batches dynamically (GB-7.2-e)", ref.BatchSize, ref.BatchVariable, mlp.MaxBatch)
	}
	if ref.Framework.Name != mlp.Framework || ref.Framework.Version != "test-version" || ref.ModelName == "" || ref.DatasetType != testinfo.DatasetFixed || ref.Extra["dataset"] != "synthetic-test" {
		t.Errorf("reference framework/model/data set %+v", ref)
	}
	tests := []struct {
		sut, reason string
		info        testinfo.Info
		want        []string // in the note
		notWant     []string
	}{
		{"reference", "every knowable field comes from the reference SUT", ref,
			[]string{"come from the reference SUT"}, []string{"Not provided", "null"}},
		{"null-async", "a null SUT without --info provides none of them", testinfo.Info{},
			[]string{"null-async SUT computes nothing", "Not provided: framework, model, precision, batch size."}, nil},
		{"null", "--info declares precision and batch size only", testinfo.Info{Precision: testinfo.PrecisionList{testinfo.INT8}, BatchSize: 8},
			[]string{"Not provided: framework, model."}, []string{"precision,"}},
	}
	for _, tc := range tests {
		note := infoNote(sut.Kind(tc.sut), tc.info)
		for _, w := range tc.want {
			if !strings.Contains(note, w) {
				t.Errorf("%s: note %q lacks %q", tc.reason, note, w)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(note, w) {
				t.Errorf("%s: note %q has %q", tc.reason, note, w)
			}
		}
	}
	if info := testinfo.Merge(ref, testinfo.Info{Precision: testinfo.PrecisionList{testinfo.FP16}}); !slices.Equal(info.Precision, testinfo.PrecisionList{testinfo.FP16}) || info.BatchSize != mlp.MaxBatch {
		t.Errorf("--info overrides field by field: %+v", info)
	}
}

func TestOnlineScorer(t *testing.T) {
	var s onlineScorer
	if got := s.score(3, func(uint64) uint8 { return 0 }); got != "" {
		t.Errorf("no classification: score %q, want \"\" (no scorer applies)", got)
	}
	labels := []uint8{7, 2, 9, 4, 1}
	// Hand-worked: 0 right, 1 wrong, 2 never classified, 3 right after a
	// later answer replaced a wrong one, 4 wrong; total 6 leaves index 5
	// unscored.
	s.classified(3, 0)
	s.classified(0, 7)
	s.classified(1, 3)
	s.classified(3, 4)
	s.classified(4, 9)
	label := func(i uint64) uint8 {
		if i < uint64(len(labels)) {
			return labels[i]
		}
		return 0
	}
	if got, want := s.score(6, label), "10-10-"; got != want {
		t.Errorf("score = %q, want %q", got, want)
	}
}

// TestGentleDefaultsForServers: with no model and no config file, a
// network server gets a load and a bound it can meet instead of the
// self-test defaults sized for the null SUT (100 000 queries/s, a 1 ms p99
// bound, which no server over the network meets); an explicit setting
// still wins. The in-process reference model gets a load sized for it: an
// Offline pass that expects the null SUT's 20 M samples/s lasts ten
// minutes on it.
func TestGentleDefaultsForServers(t *testing.T) {
	for _, c := range []struct {
		why      string
		cfg      sut.Config
		set      []string
		qps      float64
		bound    time.Duration
		scenario string
		minMs    uint64
	}{
		{"the null SUT keeps the self-test defaults", sut.Config{}, nil, 100000, time.Millisecond, "", 0},
		{"an OpenAI-compatible server (an LLM)", sut.Config{Kind: sut.OpenAI, Net: sut.Net{URLs: []string{"http://h"}}}, nil, 10, time.Minute, "", 0},
		{"a KServe v2 server", sut.Config{Kind: sut.KServe, Net: sut.Net{URLs: []string{"http://h"}}}, nil, 100, 100 * time.Millisecond, "", 0},
		{"dispatched KServe nodes", sut.Config{Kind: sut.Dispatch, Dispatch: &sut.DispatchConfig{Backend: "kserve"}, Net: sut.Net{URLs: []string{"http://h"}}}, nil, 100, 100 * time.Millisecond, "", 0},
		{"--set wins over the server's default", sut.Config{Kind: sut.KServe, Net: sut.Net{URLs: []string{"http://h"}}}, []string{"target_latency=20"}, 100, 20 * time.Millisecond, "", 0},
		{"the reference model in Server: a load it takes with a bound it meets on a busy machine", sut.Config{Kind: sut.Reference}, nil, 1000, 100 * time.Millisecond, "", 10_000},
		{"the reference model in Offline expects more than it does, so the pass lasts min_duration, not ten minutes", sut.Config{Kind: sut.Reference}, nil, 200_000, time.Millisecond, "Offline", 50},
		{"the reference model in MultiStream runs 500 ms, enough queries for early stopping", sut.Config{Kind: sut.Reference}, nil, 100000, time.Millisecond, "MultiStream", 500},
		{"an ONNX model in process in Offline expects more than the OCR detector's 10–60 images/s, so the pass lasts min_duration", sut.Config{Kind: sut.ONNX}, nil, 100, time.Millisecond, "Offline", 10_000},
		{"the reference model in SingleStream keeps the self-test's settings", sut.Config{Kind: sut.Reference}, nil, 100000, time.Millisecond, "SingleStream", 50},
	} {
		scenario := cmp.Or(c.scenario, "Server")
		r := &runner{plan: &Plan{SUT: c.cfg, Settings: Settings{Scenario: scenario, Set: c.set}}, ctx: context.Background()}
		st, err := r.settings()
		if err != nil {
			t.Fatalf("%s: %v", c.why, err)
		}
		qps := st.settings.ServerTargetQPS
		if scenario == "Offline" {
			qps = st.settings.OfflineExpectedQPS
		}
		if qps != c.qps || time.Duration(st.settings.ServerTargetLatencyNs) != c.bound {
			t.Errorf("%s: %v queries/s, bound %v; want %v, %v", c.why, qps, time.Duration(st.settings.ServerTargetLatencyNs), c.qps, c.bound)
		}
		if c.minMs != 0 && st.settings.MinDurationMs != c.minMs {
			t.Errorf("%s: min_duration %d ms, want %d", c.why, st.settings.MinDurationMs, c.minMs)
		}
	}
}

// halfRightSUT answers the even samples with their label (index mod 10)
// and the odd ones wrongly.
type halfRightSUT struct{}

func (halfRightSUT) Name() string { return "HalfRightSUT" }
func (halfRightSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, q := range samples {
		b := byte(q.Index % 10)
		if q.Index%2 == 1 {
			b = (b + 1) % 10
		}
		r.Complete(q.ID, []byte{b}, 0)
	}
}
func (halfRightSUT) FlushQueries() {}

// TestSampledAccuracyLogJudgesNothing: the accuracy log of a performance
// run holds a sample of the responses (accuracy_log_probability, TEST01):
// its top-1 is shown over the responses logged, with no target, and it
// cannot make the run INVALID (it did: the sample was scored against the
// whole set's size and the target). An accuracy run is still judged.
func TestSampledAccuracyLogJudgesNothing(t *testing.T) {
	for _, tc := range []struct {
		mode       string
		set        []string
		pass       bool
		targetZero bool
	}{
		{"performance", []string{"accuracy_log_probability=0.5", "min_duration=50"}, true, true},
		{"accuracy", nil, false, false},
	} {
		qsl := newCountingQSL(500)
		out, err := Run(context.Background(), Plan{
			Custom:    &Custom{SUT: halfRightSUT{}, QSL: qsl, Labels: func(i uint64) uint8 { return uint8(i % 10) }, Target: 0.9},
			Settings:  Settings{Scenario: "Offline", Mode: tc.mode, Set: tc.set},
			OutputDir: t.TempDir(), NoReport: true,
		})
		if err != nil && out == nil {
			t.Fatal(err)
		}
		a := out.Accuracy
		if a == nil || a.Pass != tc.pass || (a.Target == 0) != tc.targetZero || math.Abs(a.Value-50) > 5 {
			t.Errorf("%s run: accuracy check %+v, want pass %v near 50 %%", tc.mode, a, tc.pass)
		}
	}
}
