package stats

import "testing"

var sinkInt int64

func BenchmarkPercentile(b *testing.B) {
	lat := synthLatencies(1_000_000)
	for b.Loop() {
		sinkInt += Percentile(lat, 0.9) + Percentile(lat, 0.999)
	}
}

// BenchmarkSingleStreamEstimate is the whole SingleStream early-stopping step
// (p = 0.90 target plus the 99th) over 1e6 sorted latencies, fresh memo each
// time as in LoadGen.
func BenchmarkSingleStreamEstimate(b *testing.B) {
	lat := synthLatencies(1_000_000)
	for b.Loop() {
		sinkInt += NewEarlyStopping().SingleStream(lat, 0.9).Target.Estimate
	}
}

// BenchmarkMinPassingCold is one Server-style query (t = 400, p = 0.99) on an
// empty memo.
func BenchmarkMinPassingCold(b *testing.B) {
	for b.Loop() {
		sinkInt += NewEarlyStopping().MinPassing(400, 0.99, EarlyStoppingTolerance, EarlyStoppingConfidence)
	}
}

// BenchmarkMinPassingWarm is a memoised query among 2000 memoised points.
func BenchmarkMinPassingWarm(b *testing.B) {
	var es EarlyStopping
	for t := int64(1); t <= 2000; t++ {
		es.MinPassing(t, 0.99, EarlyStoppingTolerance, EarlyStoppingConfidence)
	}
	for b.Loop() {
		sinkInt += es.MinPassing(1234, 0.99, EarlyStoppingTolerance, EarlyStoppingConfidence)
	}
}

// BenchmarkMinPassingSequential is one ascending step (the SingleStream loop),
// amortised: h(1..N) on a fresh memo, reported per call.
func BenchmarkMinPassingSequential(b *testing.B) {
	var es EarlyStopping
	t := int64(0)
	for b.Loop() {
		t++
		sinkInt += es.MinPassing(t, 0.99, EarlyStoppingTolerance, EarlyStoppingConfidence)
	}
}
