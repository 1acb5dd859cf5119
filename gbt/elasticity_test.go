package gbt

import (
	"math"
	"strings"
	"testing"
	"time"

	"aimeter/loadgen"
)

// sample is one sample of a hand-built peak-mode run: received by the SUT at
// recv s, processing ended at end s (T_DIP = end − recv), size bytes.
type sample struct {
	recv, end float64
	bytes     int64
	status    loadgen.Status
	tokens    int64
}

// peakRun builds a PeakRun; each sample is issued when it is received, and
// completed when processing ends (test clock stage times).
func peakRun(samples []sample, bursts []Burst) PeakRun {
	var run PeakRun
	for _, s := range samples {
		st := s.status
		if st == 0 {
			st = loadgen.StatusOK
		}
		done := ms(s.end * 1000)
		if st == loadgen.StatusLost {
			done = loadgen.NoTime
		}
		run.Records = append(run.Records, loadgen.Record{IssuedNs: ms(s.recv * 1000), ScheduledNs: ms(s.recv * 1000),
			FirstTokenNs: loadgen.NoTime, CompletedNs: done, Tokens: s.tokens, Status: st})
		stg := loadgen.NoStages
		stg.Received = ms(s.recv * 1000)
		stg.InferenceStart = stg.Received
		stg.InferenceEnd = ms(s.end * 1000)
		run.Stages = append(run.Stages, stg)
		run.RequestBytes = append(run.RequestBytes, s.bytes)
	}
	run.Bursts = bursts
	return run
}

// elasticityRun is the hand-worked elasticity example (unit 1 s, MB = 10^6
// bytes):
//
//	unit 0: 1.5 MB with T_DIP 10 ms, 0.5 MB with T_DIP 20 ms → S = 2 MB, maxT = 20 ms
//	unit 1: 3 MB, T_DIP 30 ms                                  → S = 3 MB, maxT = 30 ms
//	unit 2: 1 MB, T_DIP 40 ms                                  → S = 1 MB, maxT = 40 ms
//	unit 3: 4 MB, T_DIP 60 ms                                  → S = 4 MB, maxT = 60 ms
//	unit 4: nothing                                            → S = 0
//	unit 5: 1 MB, T_DIP 5 ms                                   → S = 1 MB, maxT = 5 ms
//
// Qualifying pairs (S(i+1) > S(i)): (0,1): (30−20)/20 × (3−2)/2 = 0.5 × 0.5 =
// 0.25; (2,3): (60−40)/40 × (4−1)/1 = 0.5 × 3 = 1.5. Pair (4,5) has S(4) = 0
// and is skipped (IN-76). EL = (0.25 + 1.5)/2 = 0.875, reported 87.5 %.
// Variants: classical (0.5/0.5 + 0.5/3)/2 = 7/12; %/MB (50/1 + 50/3)/2 =
// 100/3.
func elasticityRun() PeakRun {
	return peakRun([]sample{
		{recv: 0.1, end: 0.11, bytes: 1_500_000},
		{recv: 0.5, end: 0.52, bytes: 500_000},
		{recv: 1.2, end: 1.23, bytes: 3_000_000},
		{recv: 2.0, end: 2.04, bytes: 1_000_000},
		{recv: 3.9, end: 3.96, bytes: 4_000_000},
		{recv: 5.5, end: 5.505, bytes: 1_000_000},
	}, nil)
}

func TestElasticityHandWorked(t *testing.T) {
	el := ComputeElasticity(elasticityRun(), ElasticityOptions{})
	if !el.Available || el.Basis != BasisSUTReceived || el.UnitNs != int64(time.Second) {
		t.Fatalf("elasticity = %+v", el)
	}
	if el.N != 2 || el.Skipped != 1 || el.Pairs[0].I != 0 || el.Pairs[1].I != 2 {
		t.Errorf("N = %d, skipped %d, pairs %+v; want pairs (0,1) and (2,3), (4,5) skipped for S(4) = 0 (IN-76)", el.N, el.Skipped, el.Pairs)
	}
	checks := []struct {
		what      string
		got, want float64
	}{
		{"EL(0,1) = 0.5 × 0.5", el.Pairs[0].EL, 0.25},
		{"EL(2,3) = 0.5 × 3", el.Pairs[1].EL, 1.5},
		{"EL = Σ/N (GB-7.6.5-T19-EL d))", el.Value, 0.875},
		{"EL × 100, the reported % (IN-76)", el.Percent, 87.5},
		{"classical variant (IN-76)", el.Classical, 7.0 / 12},
		{"%/MB variant (IN-76)", el.PercentPerMB, 100.0 / 3},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	wantUnits := []ElasticityUnit{
		{2, 2_000_000, ms(20)}, {1, 3_000_000, ms(30)}, {1, 1_000_000, ms(40)},
		{1, 4_000_000, ms(60)}, {0, 0, loadgen.NoTime}, {1, 1_000_000, ms(5)},
	}
	if len(el.Units) != len(wantUnits) {
		t.Fatalf("units = %+v", el.Units)
	}
	for i, u := range wantUnits {
		if el.Units[i] != u {
			t.Errorf("unit %d = %+v, want %+v (sizeInDuration, GB-7.6.5-T19-FNa)", i, el.Units[i], u)
		}
	}
}

func TestElasticityCases(t *testing.T) {
	half := ComputeElasticity(elasticityRun(), ElasticityOptions{Unit: 500 * time.Millisecond})
	// Units of 0.5 s: 0: 1.5 MB/10 ms; 1: 0.5 MB/20 ms; 2: 3 MB/30 ms;
	// 3: –; 4: 1 MB/40 ms; 5, 6: –; 7: 4 MB/60 ms; 8–10: –; 11: 1 MB/5 ms.
	// Qualifying: (1,2): (30−20)/20 × (3−0.5)/0.5 = 0.5 × 5 = 2.5; (3,4),
	// (6,7), (10,11) have S(i) = 0 and are skipped. EL = 2.5.
	if !half.Available || half.N != 1 || half.Skipped != 3 || !near(half.Value, 2.5) {
		t.Errorf("0.5 s units: N %d skipped %d EL %v; want 1, 3, 2.5", half.N, half.Skipped, half.Value)
	}

	// Decreasing load only: no interval qualifies, EL is undefined ("--").
	down := ComputeElasticity(peakRun([]sample{{recv: 0.1, end: 0.2, bytes: 5}, {recv: 1.1, end: 1.2, bytes: 3}}, nil), ElasticityOptions{})
	if down.Available || down.N != 0 || !strings.Contains(down.Reason, "IN-76") {
		t.Errorf("decreasing load: %+v; want unavailable (N = 0, IN-76)", down)
	}

	// A unit i+1 without any measured T_DIP is skipped.
	run := peakRun([]sample{{recv: 0.1, end: 0.2, bytes: 1}, {recv: 1.1, end: 1.2, bytes: 3}}, nil)
	run.Stages[1] = loadgen.NoStages
	run.Stages[1].Received = ms(1100)
	nomax := ComputeElasticity(run, ElasticityOptions{})
	if nomax.Available || nomax.Skipped != 1 {
		t.Errorf("unit 1 without T_DIP: %+v; want the pair skipped", nomax)
	}

	// No stage times: T_DIP is unknown.
	run = elasticityRun()
	run.Stages = nil
	if e := ComputeElasticity(run, ElasticityOptions{}); e.Available || !strings.Contains(e.Reason, ReasonNoStages) {
		t.Errorf("no stages: %+v", e)
	}

	// Stage times on the SUT clock: samples are placed by their issue time
	// (here equal to the receipt), T_DIP stays valid; labelled.
	run = elasticityRun()
	for i := range run.Stages {
		run.Stages[i].Clock = loadgen.SUTClock
		run.Stages[i].Received -= 777 // an unrelated clock
		run.Stages[i].InferenceStart -= 777
		run.Stages[i].InferenceEnd -= 777
	}
	sut := ComputeElasticity(run, ElasticityOptions{})
	if sut.Basis != BasisTesterIssue || sut.Note == "" || !near(sut.Value, 0.875) {
		t.Errorf("SUT clock: basis %s note %q EL %v; want the tester-issue basis, labelled, EL 0.875", sut.Basis, sut.Note, sut.Value)
	}

	// A lost sample without stage times is not placed on the SUT basis.
	run = elasticityRun()
	run.Records = append(run.Records, loadgen.Record{IssuedNs: ms(50), CompletedNs: loadgen.NoTime, FirstTokenNs: loadgen.NoTime, Status: loadgen.StatusLost})
	run.Stages = append(run.Stages, loadgen.NoStages)
	run.RequestBytes = append(run.RequestBytes, 9_000_000)
	if e := ComputeElasticity(run, ElasticityOptions{}); !near(e.Value, 0.875) || e.Units[0].Bytes != 2_000_000 {
		t.Errorf("with an unreceived lost sample: EL %v, unit 0 %+v; want 0.875 and 2 MB", e.Value, e.Units[0])
	}
}

// pressureRun is the hand-worked pressure-tolerance example (unit 1 s; all
// ok with 10 tokens unless noted; 1 MB = 10^6 bytes):
//
//	s0      recv 0.5,         end 0.6 (unit 0)           1 MB
//	s1..s3  recv 1.1 1.2 1.3, end 1.5 1.9 2.1 (1, 1, 2)  2 MB each
//	s4..s7  recv 2.2 … 2.5,   end 2.6 2.7 3.2 3.3        1 MB each, s5 an error
//	s8, s9  recv 3.4 3.5,     end 3.6 3.7 (unit 3)        1 MB each
//
// Received per unit: 1, 3, 4, 2 jobs/s; 1, 6, 4, 2 MB/s. With a threshold
// of 2 jobs/s (strictly greater) units 1 and 2 are over: T_over = 2 s.
// Processed in them (t_DIPE in units 1, 2): s1, s2, s3 (6 MB) and s4, s5
// (2 MB): D_over = 8 MB, PT = 8 MB / 2 s = 4 MB/s. Of those, 4 are ok with
// 40 tokens: 2 samples/s, 20 tokens/s. Output 100 bytes each: 500 B / 2 s.
func pressureRun(bursts []Burst) PeakRun {
	s := []sample{
		{recv: 0.5, end: 0.6, bytes: 1e6},
		{recv: 1.1, end: 1.5, bytes: 2e6}, {recv: 1.2, end: 1.9, bytes: 2e6}, {recv: 1.3, end: 2.1, bytes: 2e6},
		{recv: 2.2, end: 2.6, bytes: 1e6}, {recv: 2.3, end: 2.7, bytes: 1e6, status: loadgen.StatusError},
		{recv: 2.4, end: 3.2, bytes: 1e6}, {recv: 2.5, end: 3.3, bytes: 1e6},
		{recv: 3.4, end: 3.6, bytes: 1e6}, {recv: 3.5, end: 3.7, bytes: 1e6},
	}
	for i := range s {
		s[i].tokens = 10
	}
	run := peakRun(s, bursts)
	run.ResponseBytes = make([]int64, len(s))
	for i := range run.ResponseBytes {
		run.ResponseBytes[i] = 100
	}
	return run
}

func TestPressureToleranceHandWorked(t *testing.T) {
	burst := []Burst{{StartNs: ms(1000), EndNs: ms(3000)}}
	rows := []struct {
		why        string
		opts       PressureOptions
		bursts     []Burst
		over       int
		dOver      int64
		pt         float64
		samples    int
		sps, tps   float64
		derived    bool
		warnSubstr string
	}{
		{"threshold 2 jobs/s: units 1, 2 over; PT = 8 MB / 2 s (GB-7.6.6-T20-PT)",
			PressureOptions{Threshold: 2}, burst, 2, 8e6, 4, 4, 2, 20, false, ""},
		{"threshold 3 MB/s: units 1 (6 MB/s) and 2 (4 MB/s) over (IN-77 unit MB/s)",
			PressureOptions{Threshold: 3, ThresholdUnit: PressureMBPerSecond}, burst, 2, 8e6, 4, 4, 2, 20, false, ""},
		{"threshold 5 MB/s: only unit 1; D_over = s1, s2 = 4 MB in 1 s",
			PressureOptions{Threshold: 5, ThresholdUnit: PressureMBPerSecond}, burst, 1, 4e6, 4, 2, 2, 20, false, ""},
		{"threshold from σ = 5 jobs/s: σ/2 = 2.5 jobs/s (IN-77 default)",
			PressureOptions{Sigma: 5}, burst, 2, 8e6, 4, 4, 2, 20, true, ""},
		{"bursts elsewhere: warned",
			PressureOptions{Threshold: 2}, []Burst{{StartNs: ms(5000), EndNs: ms(6000)}}, 2, 8e6, 4, 4, 2, 20, false, "no over-threshold unit"},
		{"a burst covering only unit 1: unit 2 is over outside it",
			PressureOptions{Threshold: 2}, []Burst{{StartNs: ms(1000), EndNs: ms(2000)}}, 2, 8e6, 4, 4, 2, 20, false, "1 over-threshold units of time lie outside"},
	}
	for _, row := range rows {
		pt, err := ComputePressureTolerance(pressureRun(row.bursts), row.opts)
		if err != nil {
			t.Errorf("%s: %v", row.why, err)
			continue
		}
		if !pt.Available || pt.OverUnits != row.over || pt.OverNs != int64(row.over)*int64(time.Second) || pt.OverBytes != row.dOver {
			t.Errorf("%s: over %d units (%d ns), D_over %d; want %d units, %d bytes", row.why, pt.OverUnits, pt.OverNs, pt.OverBytes, row.over, row.dOver)
		}
		if !near(pt.MBPerSecond, row.pt) || pt.Samples != row.samples || !near(pt.SamplesPerSecond, row.sps) || !near(pt.TokensPerSecond, row.tps) {
			t.Errorf("%s: PT %v MB/s, %d samples, %v samples/s, %v tokens/s; want %v, %d, %v, %v",
				row.why, pt.MBPerSecond, pt.Samples, pt.SamplesPerSecond, pt.TokensPerSecond, row.pt, row.samples, row.sps, row.tps)
		}
		if pt.ThresholdDerived != row.derived {
			t.Errorf("%s: derived = %v", row.why, pt.ThresholdDerived)
		}
		warn := strings.Join(pt.Warnings, "; ")
		if (row.warnSubstr == "") != (warn == "") || !strings.Contains(warn, row.warnSubstr) {
			t.Errorf("%s: warnings %q, want %q", row.why, warn, row.warnSubstr)
		}
	}
	pt, _ := ComputePressureTolerance(pressureRun(burst), PressureOptions{Threshold: 2})
	if pt.OverInBurstNs != int64(2*time.Second) || !near(pt.OutputMBPerSecond, 500/1e6/2) {
		t.Errorf("over in burst %d ns, output %v MB/s; want 2 s and 0.00025 MB/s", pt.OverInBurstNs, pt.OutputMBPerSecond)
	}
}

func TestPressureToleranceErrors(t *testing.T) {
	rows := []struct {
		why  string
		opts PressureOptions
		want string
	}{
		{"no threshold and no σ: a required parameter (IN-77)", PressureOptions{}, "required tester parameter"},
		{"negative threshold", PressureOptions{Threshold: -1}, "want a finite number ≥ 0"},
		{"NaN threshold", PressureOptions{Threshold: math.NaN()}, "want a finite number ≥ 0"},
		{"unknown unit", PressureOptions{Threshold: 1, ThresholdUnit: "req/min"}, `unit "req/min"`},
	}
	for _, row := range rows {
		_, err := ComputePressureTolerance(pressureRun(nil), row.opts)
		if err == nil || !strings.Contains(err.Error(), row.want) {
			t.Errorf("%s: error %v, want %q", row.why, err, row.want)
		}
	}
	// Threshold above every unit: not available, warned when there were bursts.
	pt, err := ComputePressureTolerance(pressureRun([]Burst{{0, ms(1000)}}), PressureOptions{Threshold: 100})
	if err != nil || pt.Available || len(pt.Warnings) != 1 {
		t.Errorf("threshold 100 jobs/s: %+v, %v; want unavailable with a warning", pt, err)
	}
}

// TestPressureToleranceTesterBasis: without SUT receipt times on the test
// clock the tester's issue and receipt times place the samples (labelled).
func TestPressureToleranceTesterBasis(t *testing.T) {
	run := pressureRun(nil)
	run.Stages = nil
	pt, err := ComputePressureTolerance(run, PressureOptions{Threshold: 2})
	if err != nil {
		t.Fatal(err)
	}
	// In pressureRun issue = receipt and completion = processing end, so
	// the figures equal the SUT basis (the error s5 returned a result at
	// 2.7 s and counts as processed on either basis).
	if pt.Basis != BasisTesterIssue || !pt.Available || pt.OverBytes != 8e6 || len(pt.Warnings) != 1 || !strings.Contains(pt.Warnings[0], "not GB-conformant") {
		t.Errorf("tester basis: %+v", pt)
	}
}

func TestPeakRunPanics(t *testing.T) {
	run := pressureRun(nil)
	run.RequestBytes = run.RequestBytes[:3]
	defer func() {
		if recover() == nil {
			t.Error("no panic for 3 request sizes and 10 records")
		}
	}()
	ComputeElasticity(run, ElasticityOptions{})
}
