package benchmark

import (
	"slices"
	"testing"
	"time"

	"aimeter/loadgen"
)

// fakeService is a SUT on a fake clock: serving n samples advances it by
// single for one sample and by batch for more, the costs of round i being
// scaled by slow[i].
type fakeService struct {
	now           time.Time
	single, batch time.Duration
	slow          []float64
	round         int
	lastN         int
}

func (f *fakeService) serve(n int) {
	if n == 1 && f.lastN > 1 { // a new round starts with single samples
		f.round++
	}
	f.lastN = n
	cost := f.single
	if n > 1 {
		cost = f.batch
	}
	f.now = f.now.Add(time.Duration(float64(cost) * f.slow[f.round]))
}

// TestCalibrateHandWorked: single samples cost 100 µs and batches of 64
// cost 1.6 ms (40,000 samples/s). A round serves 400 single samples in its
// 40 ms (mean 100 µs) and 38 batches in its 60 ms (the 38th ends at
// 60.8 ms: 2,432 samples / 60.8 ms = 40,000 /s). Of five rounds, one runs
// at half speed (200 µs, 20,000 /s) and one at 1.25 x (80 µs, 50,000 /s,
// its batches ending at 60.16 ms): the medians stay 100 µs and 40,000 /s,
// the fastest batched round is 50,000 /s.
func TestCalibrateHandWorked(t *testing.T) {
	f := &fakeService{now: time.Unix(0, 0), single: 100 * time.Microsecond, batch: 1600 * time.Microsecond,
		slow: []float64{1, 2, 1, 0.8, 1}, round: -1, lastN: 64}
	o := DemoCalibration()
	o.Now = func() time.Time { return f.now }
	c := Calibrate(f.serve, o)
	if c.Single != 100*time.Microsecond {
		t.Errorf("Single = %v, want 100µs", c.Single)
	}
	if d := c.BatchRate - 40_000; d < -1e-6 || d > 1e-6 {
		t.Errorf("BatchRate = %v, want 40,000", c.BatchRate)
	}
	if d := c.BatchRateMax - 50_000; d < -1e-6 || d > 1e-6 {
		t.Errorf("BatchRateMax = %v, want 50,000", c.BatchRateMax)
	}
	if f.round != 4 {
		t.Errorf("%d rounds served, want 5", f.round+1)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		v    []float64
		want float64
	}{
		{"odd count: one slow round does not move it", []float64{70, 71, 20, 69, 72}, 70},
		{"even count: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"one value", []float64{5}, 5},
	}
	for _, tt := range tests {
		if got := median(slices.Clone(tt.v)); got != tt.want {
			t.Errorf("%s: median = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDemoServerTarget(t *testing.T) {
	tests := []struct {
		name      string
		batchRate float64
		want      float64
	}{
		{"a 2-core laptop (70,000 samples/s): the fixed target", 70_000, 2000},
		{"the same laptop with three busy neighbours (10,000): still the fixed target", 10_000, 2000},
		{"exactly four times the target still gets it", 8_000, 2000},
		{"just below four times steps down to 1,000", 7_999, 1000},
		{"a slow machine steps down the 1-2-5 series to 500", 2_000, 500},
		{"200 from 800 samples/s", 800, 200},
		{"a machine that is barely running gets 1", 3, 1},
		{"no speed measured at all still gets a positive target", 0, 1},
		{"a very fast machine does not raise the target", 10_000_000, 2000},
	}
	for _, tt := range tests {
		if got := DemoServerTarget(tt.batchRate); got != tt.want {
			t.Errorf("%s: DemoServerTarget(%v) = %v, want %v", tt.name, tt.batchRate, got, tt.want)
		}
	}
}

// TestPlanDemoHandWorked checks every sized setting of the demo's plans
// for two calibrations worked by hand: the same measured times give the
// same plans as the demo's own sizing did before it moved here.
func TestPlanDemoHandWorked(t *testing.T) {
	type sized struct {
		ssMs, ssLatNs, msMs, msQueries, msLatNs, srvMs, srvBoundNs, offMs uint64
		srvQPS, offQPS                                                    float64
	}
	for _, tc := range []struct {
		name string
		c    Calibration
		d    time.Duration
		want sized
	}{
		// SingleStream's hint 20 µs / 2; MultiStream's (20 µs + 8 / 40,000 s
		// = 200 µs) / 4 = 55 µs; Server 2,000 (a quarter of 40,000 is over
		// it) for 4 x 5 s; Offline 0.4 x 5 s at ⌈2 x 50,000⌉.
		{"a 2-core machine", Calibration{Single: 20 * time.Microsecond, BatchRate: 40_000, BatchRateMax: 50_000}, 5 * time.Second,
			sized{ssMs: 5000, ssLatNs: 10_000, msMs: 5000, msQueries: 662, msLatNs: 55_000, srvMs: 20_000, srvBoundNs: 50_000_000, offMs: 2000, srvQPS: 2000, offQPS: 100_000}},
		// Single 500 ns halves to 250 ns, floored at 1 µs; MultiStream
		// (500 ns + 8 / 3,000 s = 2,666,666 ns) / 4 = 666,791 ns; a quarter
		// of 3,000 is 750: Server 500; a fastest round of 0.2 /s is floored
		// at 1: Offline ⌈2 x 1⌉ = 2; 0.4 x 1 ms rounds down to 0, floored
		// at 1 ms.
		{"a slow model, a short run", Calibration{Single: 500, BatchRate: 3000, BatchRateMax: 0.2}, time.Millisecond,
			sized{ssMs: 1, ssLatNs: 1000, msMs: 1, msQueries: 662, msLatNs: 666_791, srvMs: 4, srvBoundNs: 50_000_000, offMs: 1, srvQPS: 500, offQPS: 2}},
	} {
		p := PlanDemo(tc.c, tc.d)
		got := sized{ssMs: p.SingleStream.MinDurationMs, ssLatNs: p.SingleStream.SingleStreamExpectedLatencyNs,
			msMs: p.MultiStream.MinDurationMs, msQueries: p.MultiStream.MinQueryCount, msLatNs: p.MultiStream.MultiStreamExpectedLatencyNs,
			srvMs: p.Server.MinDurationMs, srvBoundNs: p.Server.ServerTargetLatencyNs, offMs: p.Offline.MinDurationMs,
			srvQPS: p.Server.ServerTargetQPS, offQPS: p.Offline.OfflineExpectedQPS}
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
		for _, s := range []loadgen.Settings{p.SingleStream, p.MultiStream, p.Server, p.Offline} {
			if err := s.Validate(); err != nil {
				t.Errorf("%s: %s: %v", tc.name, s.Scenario, err)
			}
		}
		if p.SingleStream.Scenario != loadgen.SingleStream || p.MultiStream.Scenario != loadgen.MultiStream ||
			p.Server.Scenario != loadgen.Server || p.Offline.Scenario != loadgen.Offline {
			t.Errorf("%s: scenarios %v %v %v %v", tc.name, p.SingleStream.Scenario, p.MultiStream.Scenario, p.Server.Scenario, p.Offline.Scenario)
		}
	}
}

// TestPlanDemoOfflineRunsItsMinimumDuration checks the Offline sizing the
// way LoadGen does it (1.1 x min_duration x expected QPS samples in one
// query): a SUT running at the fastest calibrated speed, and even at twice
// that, still needs at least min_duration for the query.
func TestPlanDemoOfflineRunsItsMinimumDuration(t *testing.T) {
	tests := []struct {
		name string
		c    Calibration
		d    time.Duration
	}{
		{"a 2-core machine", Calibration{Single: 21_000, BatchRate: 70_000, BatchRateMax: 73_000}, 5 * time.Second},
		{"a slow machine", Calibration{Single: 2_000_000, BatchRate: 500, BatchRateMax: 900}, 5 * time.Second},
		{"a short run", Calibration{Single: 21_000, BatchRate: 70_000, BatchRateMax: 73_000}, 500 * time.Millisecond},
		{"a calibration that measured nothing", Calibration{}, time.Second},
	}
	for _, tt := range tests {
		p := PlanDemo(tt.c, tt.d)
		e, err := loadgen.NewEffective(p.Offline, 5000, 1024)
		if err != nil {
			t.Fatal(err)
		}
		minDur := time.Duration(p.Offline.MinDurationMs) * time.Millisecond
		if minDur <= 0 {
			t.Fatalf("%s: Offline min duration %v", tt.name, minDur)
		}
		fastest := max(tt.c.BatchRateMax, 1)
		for _, speedup := range []float64{1, 2} {
			took := time.Duration(float64(e.SamplesPerQuery) / (speedup * fastest) * float64(time.Second))
			if took < minDur {
				t.Errorf("%s: %d samples at %.0f x the fastest round (%.0f/s) take %v, under the %v minimum", tt.name, e.SamplesPerQuery, speedup, fastest, took, minDur)
			}
		}
	}
}

// TestSizeSetHandWorked: the audit's overrides from a probe's calibration.
func TestSizeSetHandWorked(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c        Calibration
		scenario loadgen.Scenario
		minDur   time.Duration
		want     string
	}{
		{"Offline: twice the fastest rate, rounded up", Calibration{BatchRate: 1234.2, BatchRateMax: 1234.2}, loadgen.Offline, 10 * time.Second, "target_qps=2469"},
		{"Offline: capped at LoadGen's largest query over 1.1 x 1 s", Calibration{BatchRateMax: 1e10}, loadgen.Offline, time.Second, "target_qps=1952257861"},
		{"SingleStream: a quarter of the query interval, ms", Calibration{Single: 2 * time.Millisecond}, loadgen.SingleStream, 10 * time.Second, "target_latency=0.5"},
		{"MultiStream: at least 1 µs", Calibration{Single: 2}, loadgen.MultiStream, 10 * time.Second, "target_latency=0.001"},
	} {
		if got := tc.c.sizeSet(tc.scenario, tc.minDur); !slices.Equal(got, []string{tc.want}) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// A probe's Sizing reads as the calibration it sized from.
	sz := &Sizing{Rate: 300, QueryInterval: 4 * time.Millisecond}
	if c := sz.Calibration(); c != (Calibration{Single: 4 * time.Millisecond, BatchRate: 300, BatchRateMax: 300}) {
		t.Errorf("Sizing.Calibration = %+v", c)
	}
}
