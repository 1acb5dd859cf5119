package report

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/sysinfo"
)

// runFake runs one test on synctest's fake clock, so that every time in the
// result is deterministic.
func runFake(t *testing.T, sut loadgen.SUT, qsl loadgen.QSL, s loadgen.Settings) *loadgen.Result {
	t.Helper()
	var res *loadgen.Result
	synctest.Test(t, func(t *testing.T) {
		var err error
		res, err = loadgen.Run(context.Background(), sut, qsl, s, nil)
		if err != nil {
			t.Fatalf("loadgen.Run: %v", err)
		}
	})
	return res
}

func singleStreamResult(t *testing.T) *loadgen.Result {
	s := loadgen.DefaultSettings()
	s.Mode = loadgen.SubmissionRun
	s.MinDurationMs = 1000
	s.MinQueryCount = 100
	s.SingleStreamExpectedLatencyNs = 3_000_000
	sut := loadgentest.DelaySUT{DelayOf: func(idx uint64, _ int) time.Duration {
		d := 2*time.Millisecond + time.Duration(idx*37%11)*250*time.Microsecond
		if idx%53 == 0 {
			d += 6 * time.Millisecond
		}
		return d
	}}
	return runFake(t, sut, &loadgentest.QSL{Total: 64}, s)
}

func multiStreamResult(t *testing.T) *loadgen.Result {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.MultiStream
	s.MinDurationMs = 1000
	s.MinQueryCount = 100
	s.MultiStreamExpectedLatencyNs = 6_000_000
	sut := loadgentest.DelaySUT{DelayOf: func(idx uint64, pos int) time.Duration {
		d := 3*time.Millisecond + time.Duration(pos)*400*time.Microsecond
		if idx%29 == 0 {
			d += 5 * time.Millisecond
		}
		return d
	}}
	return runFake(t, sut, &loadgentest.QSL{Total: 128}, s)
}

func offlineResult(t *testing.T) *loadgen.Result {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 1000
	s.OfflineExpectedQPS = 2000
	// Batches of 32 samples, one every 15 ms: a staircase of completions.
	sut := loadgentest.DelaySUT{DelayOf: func(_ uint64, pos int) time.Duration {
		return time.Duration(pos/32+1) * 15 * time.Millisecond
	}}
	return runFake(t, sut, &loadgentest.QSL{Total: 512}, s)
}

func accuracyResult(t *testing.T) *loadgen.Result {
	s := loadgen.DefaultSettings()
	s.Mode = loadgen.AccuracyOnly
	return runFake(t, loadgentest.SyncSUT{}, &loadgentest.QSL{Total: 50}, s)
}

// serverKind picks the Server fixture of serverResultOf.
type serverKind int

const (
	// serverCongested is INVALID: a congested stretch pushes the p99 far past
	// the 10 ms bound, and two samples are lost.
	serverCongested serverKind = iota
	// serverValid is VALID: the p99 is well under the bound.
	serverValid
	// serverNearBound is INVALID by a hair: the p99 sits just above the
	// bound, so that the p99 and bound marker lines nearly coincide.
	serverNearBound
)

// serverResult is the congested, INVALID Server fixture.
func serverResult(t *testing.T) *loadgen.Result {
	t.Helper()
	return serverResultOf(t, serverCongested)
}

// serverResultOf builds a Server result from synthetic records (a Server run
// cannot use the fake clock: its issuer spins): Poisson arrivals for 2 s at
// the target QPS (500, or a find-peak-like 487.65432109876 for the VALID
// run), latencies of 2 ms plus an exponential part, with a 10 ms bound.
func serverResultOf(t *testing.T, kind serverKind) *loadgen.Result {
	t.Helper()
	qps, expMs := 500.0, 1.0
	switch kind {
	case serverValid:
		qps = 487.6543210987654
	case serverNearBound:
		expMs = 1.85
	}
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Server
	s.ServerTargetQPS = qps
	s.ServerTargetLatencyNs = 10_000_000
	s.MinDurationMs = 1000
	s.MinQueryCount = 100
	eff, err := loadgen.NewEffective(s, 1024, 1024)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, uint64(2+kind)))
	const endNs = 2_050_000_000
	var recs []loadgen.Record
	var lost uint64
	var sched int64
	for i := uint64(0); sched < 2_000_000_000; i++ {
		lat := int64(2_000_000 + rng.ExpFloat64()*expMs*1_000_000)
		if kind == serverCongested && sched > 1_200_000_000 && sched < 1_300_000_000 {
			lat += int64(10_000_000 + rng.Float64()*25_000_000)
		}
		r := loadgen.Record{
			SeqID: i, QueryID: i, SampleIndex: rng.Uint64N(1024),
			ScheduledNs: sched, IssuedNs: sched + 1000,
			FirstTokenNs: loadgen.NoTime, CompletedNs: sched + lat, Status: loadgen.StatusOK,
		}
		if kind == serverCongested && (i == 700 || i == 701) {
			r.CompletedNs, r.Status = loadgen.NoTime, loadgen.StatusLost
			lost++
		}
		recs = append(recs, r)
		sched += int64(math.Ceil(rng.ExpFloat64() / qps * 1e9))
	}
	info := loadgen.PassInfo{
		Kind: loadgen.PassPerformance, FirstSeq: 0, EndSeq: uint64(len(recs)),
		TargetQPS: qps, StartUnixNs: time.Date(2000, 1, 1, 0, 0, 1, 0, time.UTC).UnixNano(),
		EndNs: endNs, QueriesIssued: uint64(len(recs)), Reported: true,
	}
	sum, err := loadgen.SummarizePass("SyntheticServer", eff, info, recs)
	if err != nil {
		t.Fatal(err)
	}
	res := &loadgen.Result{
		SUTName: "SyntheticServer", QSLName: "TestQSL", QSLTotalCount: 1024, QSLPerformanceCount: 1024,
		Requested: s, Effective: eff, StartTime: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		Passes: []loadgen.PassInfo{info}, Summary: sum, LostSamples: lost,
	}
	res.AttachRecords(recs)
	return res
}

var (
	fixedTime   = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fixedSystem = sysinfo.System{
		Hostname: "bench-01", OS: "linux", Arch: "amd64", CPU: "Example CPU @ 3.00GHz",
		Cores: 16, MemoryBytes: 64 << 30, GoVersion: "go1.26.0", AimeterVersion: "v0.0.0-test",
		Accelerators: []sysinfo.Accelerator{h200, h200},
	}
	// h200 is what nvidia-smi reported on a real H200 machine.
	h200 = sysinfo.Accelerator{Vendor: "NVIDIA", Name: "NVIDIA H200", MemoryBytes: 143771 << 20, DriverVersion: "580.159.04", Source: "nvidia-smi"}
)

// testReport is the deterministic report of the golden and browser tests:
// SingleStream (submission run with accuracy), MultiStream, Offline, three
// Server runs (INVALID far past the bound, VALID, INVALID just past the
// bound; the last two merged from 4 shards, the last partially), and an
// accuracy-only run.
func testReport(t *testing.T) *Report {
	t.Helper()
	valid, nearBound := serverResultOf(t, serverValid), serverResultOf(t, serverNearBound)
	return &Report{
		Title:     "aimeter test report",
		Generated: fixedTime,
		System:    fixedSystem,
		Notes: []string{
			"Synthetic results made on a fake clock.",
			`Escaping check: <script>alert("x")</script> & co.`,
		},
		Runs: []RunSection{
			{Name: "delay SUT SingleStream", Result: singleStreamResult(t),
				Accuracy: &AccuracyInfo{Metric: "top-1 accuracy (%)", Value: 86.57000000000001, Target: 75.6954, Pass: true}},
			{Name: "delay SUT MultiStream", Result: multiStreamResult(t)},
			{Name: "batching SUT Offline", Result: offlineResult(t)},
			{Name: `synthetic Server <b>"congested"</b>`, Result: serverResult(t)},
			{Name: "synthetic Server, VALID", Result: valid, Shards: mergeOf(valid, 4, true)},
			{Name: "synthetic Server, p99 just past the bound", Result: nearBound, Shards: mergeOf(nearBound, 4, false, 2)},
			{Name: "accuracy only", Result: accuracyResult(t),
				Accuracy: &AccuracyInfo{Metric: "mAP", Value: 0.3712, Target: 0.3755, Pass: false}},
		},
	}
}

// chartedScenarios is the number of scenarios of testReport with charts.
const chartedScenarios = 6
