package report

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/gbt"
	"aimeter/gbt/testinfo"
	"aimeter/loadgen"
	"aimeter/sut/null"
)

// stageSUT answers each sample after delay, reporting its stage times on
// the test clock (a tenth preprocessing, most of it inference, a tenth
// post-processing), so that the SUT-side Table 16 metrics, elasticity and
// pressure tolerance have data. With dropEvery > 0 every dropEvery-th
// sample it is given is never answered: it is lost at its deadline
// (GB-7.6.2-TOUT). It is safe for the concurrent main and foreign runs of a
// mixed test.
type stageSUT struct {
	delay     time.Duration
	dropEvery int64
	n         atomic.Int64
}

func (*stageSUT) Name() string { return "StageSUT" }
func (s *stageSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, q := range samples {
		if s.dropEvery > 0 && s.n.Add(1)%s.dropEvery == 0 {
			continue
		}
		recv := r.Now()
		d := int64(s.delay)
		st := loadgen.StageTimes{
			Clock: loadgen.TestClock, Received: recv,
			PreprocessStart: recv, PreprocessEnd: recv + d/10,
			InferenceStart: recv + d/10, InferenceEnd: recv + d*9/10,
			PostprocessStart: recv + d*9/10, PostprocessEnd: recv + d,
			ResultSent: recv + d,
		}
		time.AfterFunc(s.delay, func() { r.CompleteWithStages(q.ID, nil, 0, st) })
	}
}
func (*stageSUT) FlushQueries() {}

// gbtInfo is the test information of the fixtures (7.1 a)): fixed, so that
// the golden page does not depend on the machine.
var gbtInfo = testinfo.Info{
	OrgName:     "Example Lab",
	TestID:      "T-0042",
	ModelName:   "aimeter reference MLP",
	DatasetType: testinfo.DatasetFixed,
	Framework:   testinfo.Component{Name: "aimeter pure-Go MLP", Version: "v0.0.0-test"},
	BatchSize:   64,
	Precision:   testinfo.PrecisionList{testinfo.FP32},
	Servers:     []testinfo.Server{{Count: 1, CPU: testinfo.CPU{Model: "Example CPU @ 3.00GHz", Cores: 16}}},
	Extra:       map[string]any{"dataset": "NullQSL"},
}

// gbtFixture runs a GB/T test for real, as `aimeter run --arrival-mode`
// does (internal/cli runGBT): gbt.NewRunPlan, loadgen.Run of the main jobs over
// a null.QSL and, for a mixed test (mode 5), a second loadgen.Run of the
// foreign jobs over their own null.QSL on the same SUT (IN-50), then
// gbt.Evaluate. It runs on synctest's fake clock, so every time is exact
// and the outcome does not depend on the machine's load.
func gbtFixture(t *testing.T, in gbt.PlanInput, sut loadgen.SUT) (*loadgen.Result, *GBTRun) {
	t.Helper()
	var (
		res *loadgen.Result
		run *GBTRun
	)
	synctest.Test(t, func(t *testing.T) {
		in.Arrival = in.Arrival.WithDefaults()
		p, err := gbt.NewRunPlan(in, loadgen.DefaultSettings(), nil)
		if err != nil {
			t.Fatalf("gbt.NewRunPlan: %v", err)
		}
		life := gbt.Lifecycle{Now: func() time.Time { return time.Now().UTC() }}
		for _, e := range []gbt.LifecycleEvent{gbt.EventTestStart, gbt.EventDatasetLoadStart, gbt.EventDatasetLoadEnd} {
			if _, err := life.Mark(e); err != nil {
				t.Fatal(err)
			}
		}
		ctx := context.Background()
		opts := p.Options()
		opts.SpinWindow = -1 // the issuer must sleep, not spin, on the fake clock
		var (
			foreign    *loadgen.Result
			foreignErr error
			wg         sync.WaitGroup
		)
		if p.Foreign != nil {
			fopts := p.ForeignOptions()
			fopts.SpinWindow = -1
			wg.Go(func() {
				foreign, foreignErr = loadgen.Run(ctx, sut, null.QSL{Total: p.Test.Mixed.QSLSize}, *p.Foreign, &fopts)
			})
		}
		res, err = loadgen.Run(ctx, sut, null.QSL{Total: 256}, p.Settings, &opts)
		wg.Wait()
		if err != nil || foreignErr != nil {
			t.Fatalf("loadgen.Run: %v; foreign jobs: %v", err, foreignErr)
		}
		if _, err := life.Mark(gbt.EventTestEnd); err != nil {
			t.Fatal(err)
		}
		test := p.Test
		test.Generator = "aimeter v0.0.0-test"
		test.Info = gbtInfo
		test.Precision = testinfo.PrecisionList{testinfo.FP32}
		for _, ps := range res.Passes {
			if ps.Reported {
				test.Start, test.EndNs = time.Unix(0, ps.StartUnixNs).UTC(), ps.EndNs
			}
		}
		if _, err := life.Mark(gbt.EventResultUploadComplete); err != nil {
			t.Fatal(err)
		}
		test.Lifecycle = life.Events()
		data := gbt.RunData{Test: &test, Main: runPart(res)}
		if foreign != nil {
			fp := runPart(foreign)
			data.Foreign = &fp
		}
		m, err := gbt.Evaluate(data)
		if err != nil {
			t.Fatalf("gbt.Evaluate: %v", err)
		}
		run = &GBTRun{Test: &test, Metrics: m, Foreign: foreign}
	})
	return res, run
}

func runPart(res *loadgen.Result) gbt.RunPart {
	p := gbt.RunPart{Records: slices.Collect(res.Records())}
	if res.HasStages() {
		p.Stages = slices.Collect(res.Stages())
	}
	return p
}

// gbtCase is one GB/T run of the tests: its plan input, its SUT and the
// verdict it must get.
type gbtCase struct {
	name string
	in   gbt.PlanInput
	sut  func() loadgen.SUT
	pass bool
}

// slow answers every sample after 150 ms; slowDropping drops every fifth.
func slow() loadgen.SUT         { return &stageSUT{delay: 150 * time.Millisecond} }
func slowDropping() loadgen.SUT { return &stageSUT{delay: 150 * time.Millisecond, dropEvery: 5} }

func poissonIn() gbt.PlanInput {
	return gbt.PlanInput{
		Arrival:       gbt.Arrival{Mode: gbt.ModePoisson, Lambda: 100, Duration: time.Second, Seed: 7},
		LossThreshold: 0.01, SampleBytes: 3136,
	}
}

func peakIn() gbt.PlanInput {
	return gbt.PlanInput{
		Arrival: gbt.Arrival{
			Mode: gbt.ModePeak, Lambda: 20, Duration: 3 * time.Second, Seed: 3,
			Bursts: 2, BurstLength: time.Second, BurstPeriod: 10 * time.Millisecond, BurstN: 2,
			BurstStarts: []time.Duration{500 * time.Millisecond, 2 * time.Second},
		},
		LossThreshold: 0.01, SampleBytes: 3136,
	}
}

func mixedIn() gbt.PlanInput {
	in := poissonIn()
	in.Arrival.Mode = gbt.ModeMixed
	in.UnderlyingMode = gbt.ModePoisson
	in.Mixed = gbt.Mixed{Lambda: 20, QSLSize: 64, Seed: 8}
	return in
}

// gbtCases are PASS and FAIL runs of arrival modes 2 (Poisson), 3 (peak)
// and 5 (mixed over Poisson). In every one LoadGen's own summary is INVALID
// with "Reduce target QPS": the SUT's 150 ms is over the Server latency
// bound of 100 ms. A PASS run loses nothing (its 150 ms are far under the
// GB/T job timeout of Table 10); a FAIL run loses a fifth of its samples (never
// answered), or, for the peak run, every sample to a 100 ms job timeout
// shorter than the SUT's 150 ms (all late completions).
func gbtCases() []gbtCase {
	peakTimeout := peakIn()
	peakTimeout.Timeout = 100 * time.Millisecond
	return []gbtCase{
		{"mode 2 PASS", poissonIn(), slow, true},
		{"mode 2 FAIL", poissonIn(), slowDropping, false},
		{"mode 3 PASS", peakIn(), slow, true},
		{"mode 3 FAIL", peakTimeout, slow, false},
		{"mode 5 PASS", mixedIn(), slow, true},
		{"mode 5 FAIL", mixedIn(), slowDropping, false},
	}
}
