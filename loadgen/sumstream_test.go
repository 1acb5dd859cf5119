package loadgen_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"aimeter/loadgen"
)

// synthPass builds a pass of n samples of scenario sc in a table: queries
// of per samples (Offline: one query), latencies from a wide, tied mixture
// (most near 1 ms, a tail to seconds, a block of equal values), some
// samples lost or failed, and in token mode first-token times and token
// counts.
func synthPass(sc loadgen.Scenario, n, per int, tokens, allFail bool, seed uint64) (*loadgen.Result, loadgen.PassInfo) {
	rng := rand.New(rand.NewPCG(seed, 7))
	t := loadgen.NewRecordTable(n)
	const first = 10
	var sched int64
	q := uint64(100)
	var end int64
	for i := range n {
		if sc == loadgen.Offline {
			per = n
		}
		if i%per == 0 {
			q++
			if sc != loadgen.Offline {
				sched += rng.Int64N(2_000_000)
			}
		}
		var lat int64
		switch k := rng.IntN(100); {
		case k < 60:
			lat = 900_000 + rng.Int64N(200_000)
		case k < 85:
			lat = 5_000_000 // ties: a quarter of the samples
		case k < 99:
			lat = rng.Int64N(50_000_000)
		default:
			lat = rng.Int64N(3_000_000_000)
		}
		r := loadgen.Record{SeqID: uint64(first + i), QueryID: q, SampleIndex: uint64(i % 64), ScheduledNs: sched, IssuedNs: sched + 1000,
			FirstTokenNs: loadgen.NoTime, CompletedNs: sched + lat, Status: loadgen.StatusOK}
		if tokens {
			r.Tokens = 1 + rng.Int64N(200)
			if rng.IntN(10) > 0 {
				r.FirstTokenNs = sched + lat/(1+rng.Int64N(5))
			}
		}
		switch k := rng.IntN(1000); {
		case allFail:
			r.Status = loadgen.StatusError
		case k < 3:
			r.Status, r.CompletedNs = loadgen.StatusLost, loadgen.NoTime
		case k < 6:
			r.Status = loadgen.StatusError
		}
		end = max(end, r.CompletedNs)
		t.Append(r)
	}
	info := loadgen.PassInfo{Kind: loadgen.PassPerformance, FirstSeq: first, EndSeq: first + uint64(n), Reported: true,
		QueriesIssued: q - 100, EndNs: end + 1}
	res := &loadgen.Result{Passes: []loadgen.PassInfo{info}}
	res.AttachTable(t)
	return res, info
}

// TestSummarizePassScanEqualsInMemory checks that the summary read from a
// stream of records, several times over, is SummarizeStoredPass's (every
// latency held and selected) bit for bit, in every scenario, with and
// without token latencies, small (sorted at once) and large (narrowed by
// histograms first).
func TestSummarizePassScanEqualsInMemory(t *testing.T) {
	for _, row := range []struct {
		why     string
		sc      loadgen.Scenario
		n, per  int
		tokens  bool
		allFail bool
	}{
		{"Server, small: the values are sorted at the second reading", loadgen.Server, 5000, 1, false, false},
		{"Server, large: histograms narrow the ranks first", loadgen.Server, 300_000, 1, false, false},
		{"Offline: one query, its all-done time the latest completion", loadgen.Offline, 200_000, 1, false, false},
		{"SingleStream: early stopping reads ranks near the top", loadgen.SingleStream, 150_000, 1, false, false},
		{"MultiStream: query latencies of 8 samples each", loadgen.MultiStream, 160_000, 8, false, false},
		{"MultiStream, every sample failed: early stopping reads the query latencies unsorted, in issue order", loadgen.MultiStream, 40_000, 8, false, true},
		{"Server in token mode: TTFT and TPOT ranks and over-latency counts", loadgen.Server, 120_000, 1, true, false},
		{"SingleStream in token mode: TPOT then TTFT early stopping", loadgen.SingleStream, 90_000, 1, true, false},
		{"Offline in token mode: tokens counted, no TTFT", loadgen.Offline, 70_000, 1, true, false},
	} {
		e := loadgen.Effective{Scenario: row.sc, TargetLatencyNs: 10_000_000, TargetLatencyPercentile: 0.99, MinDurationMs: 100,
			MinQueryCount: 100, UseTokenLatencies: row.tokens, TTFTLatencyNs: 2_000_000, TPOTLatencyNs: 300_000, MaxErrorRate: 0.01}
		if row.sc == loadgen.SingleStream || row.sc == loadgen.MultiStream {
			e.TargetLatencyPercentile = 0.9
		}
		res, info := synthPass(row.sc, row.n, row.per, row.tokens, row.allFail, uint64(row.n))
		res.Effective = e
		want, err := res.SummarizeStoredPass(0)
		if err != nil {
			t.Fatal(err)
		}
		readings := 0
		got, err := loadgen.SummarizePassScan("", e, info, func(fn func(*loadgen.RecordColumns) error) error {
			readings++
			for c := range res.PassColumns(0, 4096) {
				if err := fn(c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", row.why, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\nstreamed  %+v\nin memory %+v", row.why, got, want)
		}
		if got.Result.FailedSamples == 0 && row.allFail || got.EarlyStoppingLines == nil && row.sc == loadgen.MultiStream {
			t.Errorf("%s: %d failed, early stopping %q", row.why, got.Result.FailedSamples, got.EarlyStoppingLines)
		}
		if readings < 2 || readings > 7 {
			t.Errorf("%s: %d readings", row.why, readings)
		}
	}
}
