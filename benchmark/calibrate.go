package benchmark

import (
	"math"
	"slices"
	"time"

	"aimeter/loadgen"
)

// Calibration is what a calibration measured of a SUT: the time it takes
// to serve a query alone and the rate at which it serves samples in large
// queries (batches). The demo's runs (PlanDemo, from Calibrate) and the
// audits' (SizeForSUT, from its probe passes) are sized from one, with the
// same Offline rule (OfflineQPS).
type Calibration struct {
	// Single is the time to serve one query alone: one sample of the
	// demo's model (median over the rounds of each round's mean), or a
	// query of a SingleStream or MultiStream probe pass (SizeForSUT).
	Single time.Duration
	// BatchRate is the rate serving samples in batches, samples per
	// second: the median over the rounds; BatchRateMax is the fastest
	// round's, what an Offline run is sized for (a rate measured too low
	// ends the run before min_duration, one too high only lengthens it).
	BatchRate, BatchRateMax float64
}

// offlineHeadroom is the multiple of the fastest calibrated rate an
// Offline run expects: LoadGen issues 1.1 x min_duration x the expected
// QPS samples in its one query, so at the calibrated speed the pass lasts
// 2.2 x min_duration, and stays VALID for a SUT up to 2.2 times faster in
// the run than in the calibration (the demo times the bare model, about
// 1.5 x faster than the SUT around it on a 2-core machine; a 10 s kserve
// run measured 1.46 times its probe's rate).
const offlineHeadroom = 2

// OfflineQPS is the expected rate of an Offline run sized for c:
// offlineHeadroom times the fastest batched rate, rounded up to a whole
// sample per second.
func (c Calibration) OfflineQPS() float64 { return math.Ceil(offlineHeadroom * c.BatchRateMax) }

// CalibrateOptions say how Calibrate measures.
type CalibrateOptions struct {
	// Rounds is the number of rounds (at least 1); each times single
	// samples for SingleFor, then batches of Batch samples for BatchFor.
	Rounds    int
	Batch     int
	SingleFor time.Duration
	BatchFor  time.Duration
	// Now, if set, is the clock (a test's fake clock); nil is time.Now.
	Now func() time.Time
}

// DemoCalibration is how the demo calibrates its model: 5 rounds, each
// timing single samples for 40 ms and batches of 64 for 60 ms.
func DemoCalibration() CalibrateOptions {
	return CalibrateOptions{Rounds: 5, Batch: 64, SingleFor: 40 * time.Millisecond, BatchFor: 60 * time.Millisecond}
}

// Calibrate measures serve, which serves one query of n samples and
// returns when it is done, in o.Rounds rounds: each serves single samples
// back to back for o.SingleFor and takes their mean time, then batches of
// o.Batch samples for o.BatchFor and takes their rate. It keeps the
// medians over the rounds, and the fastest batched round: on a machine
// shared with other processes one round may be slowed down, or sped up
// when they pause, without moving the median.
func Calibrate(serve func(n int), o CalibrateOptions) Calibration {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	since := func(start time.Time) time.Duration { return now().Sub(start) }
	rounds, batch := max(o.Rounds, 1), max(o.Batch, 1)
	singles := make([]float64, rounds)
	batches := make([]float64, rounds)
	for i := range rounds {
		start, n := now(), 0
		for since(start) < o.SingleFor || n == 0 {
			serve(1)
			n++
		}
		singles[i] = float64(since(start)) / float64(n)
		start, n = now(), 0
		for since(start) < o.BatchFor || n == 0 {
			serve(batch)
			n += batch
		}
		batches[i] = float64(n) / since(start).Seconds()
	}
	return Calibration{Single: time.Duration(median(singles)), BatchRate: median(batches), BatchRateMax: slices.Max(batches)}
}

// median returns the median of v (the mean of the middle two for an even
// count); v is sorted in place.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// The demo's Server load and bound.
const (
	// DemoServerQPS is the demo's Server target on any machine fast
	// enough: a fixed figure, so that the reported throughput is the same
	// run after run.
	DemoServerQPS = 2000
	// demoServerHeadroom: the target is at most this fraction of the
	// median batched speed, leaving the model idle most of the time so that
	// a neighbour process or a scheduler delay does not pile up a queue.
	// A sample alone costs about 1.5 times a batched one, so the model is
	// busy at most 40 % of the time even at the limit; a 2-core machine
	// measures 70,000 samples/s quiet and about 10,000-16,000 beside three
	// busy processes, and keeps the fixed target in both.
	demoServerHeadroom = 0.25
	// DemoServerBoundNs is the demo's Server p99 latency bound: 50 ms,
	// several scheduler time slices of a shared 2-core machine, so that a
	// neighbour's slice does not decide the result (ResNet-50's MLPerf
	// bound is 15 ms).
	DemoServerBoundNs = 50_000_000
)

// DemoPlans are the settings of the demo's four performance runs.
type DemoPlans struct {
	SingleStream, MultiStream, Server, Offline loadgen.Settings
}

// DemoServerTarget returns the demo's Server target for a model that runs
// batchRate samples/s in batches: the first of DemoServerQPS and the 1-2-5
// series below it within demoServerHeadroom of batchRate, and 1 if none
// is.
func DemoServerTarget(batchRate float64) float64 {
	for _, q := range [...]float64{DemoServerQPS, 1000, 500, 200, 100, 50, 20, 10, 5, 2, 1} {
		if q <= demoServerHeadroom*batchRate {
			return q
		}
	}
	return 1
}

// PlanDemo sizes the demo's performance runs from the calibration of its
// model: d is the minimum duration of SingleStream and MultiStream; Server
// runs 4 x d (a longer run dilutes a stall of the host below 1 % of its
// samples) at DemoServerTarget with the DemoServerBoundNs bound, Offline
// 0.4 x d in one query sized for OfflineQPS (of at least 1 sample/s).
func PlanDemo(c Calibration, d time.Duration) DemoPlans {
	minMs := uint64(d.Milliseconds())
	single := int64(c.Single)
	var p DemoPlans
	// SingleStream: one sample at a time; the hint only sizes the schedule.
	p.SingleStream = loadgen.DefaultSettings()
	p.SingleStream.MinDurationMs = minMs
	p.SingleStream.SingleStreamExpectedLatencyNs = uint64(max(single/2, 1000))

	// MultiStream: 8 samples per query, p99 over at least 662 queries.
	p.MultiStream = loadgen.DefaultSettings()
	p.MultiStream.Scenario = loadgen.MultiStream
	p.MultiStream.MinDurationMs = minMs
	p.MultiStream.MinQueryCount = 662
	p.MultiStream.MultiStreamExpectedLatencyNs = uint64(max((single+int64(8e9/max(c.BatchRate, 1)))/4, 1000))

	// Server: Poisson arrivals at a fixed, low target with a bound for a
	// shared machine.
	p.Server = loadgen.DefaultSettings()
	p.Server.Scenario = loadgen.Server
	p.Server.MinDurationMs = 4 * minMs
	p.Server.ServerTargetQPS = DemoServerTarget(c.BatchRate)
	p.Server.ServerTargetLatencyNs = DemoServerBoundNs

	// Offline: one query sized well above the fastest measured speed.
	p.Offline = loadgen.DefaultSettings()
	p.Offline.Scenario = loadgen.Offline
	p.Offline.MinDurationMs = max(minMs*2/5, 1)
	p.Offline.OfflineExpectedQPS = Calibration{BatchRateMax: max(c.BatchRateMax, 1)}.OfflineQPS()
	return p
}
