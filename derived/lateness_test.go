package derived

import (
	"math/rand/v2"
	"testing"

	"aimeter/loadgen"
	"aimeter/workload/trace"
)

// TestSendLatenessScanEqualsHeld checks that the send lateness of a Server
// pass too large to hold its delays (read in several readings of its
// records) is the one trace.LatenessOf gives from every delay held: counts,
// the late ones, p50, p99 and the largest, with ties, negative delays
// (counted as 0) and a tail beyond the late bound.
func TestSendLatenessScanEqualsHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("a pass of over a million records")
	}
	n := latenessHoldMax + 12_345
	rng := rand.New(rand.NewPCG(9, 9))
	table := loadgen.NewRecordTable(n)
	recs := make([]loadgen.Record, 0, 4096)
	var d []int64
	for i := range n {
		sched := int64(i) * 1000
		var late int64
		switch k := rng.IntN(100); {
		case k < 40:
			late = 2_000 // ties
		case k < 45:
			late = -rng.Int64N(500) // issued early: counts as 0
		case k < 99:
			late = rng.Int64N(1_000_000)
		default:
			late = int64(trace.DefaultLateAfter) + rng.Int64N(1e9)
		}
		recs = append(recs, loadgen.Record{SeqID: uint64(i), QueryID: uint64(i), ScheduledNs: sched, IssuedNs: sched + late,
			FirstTokenNs: loadgen.NoTime, CompletedNs: sched + late + 10, Status: loadgen.StatusOK})
		d = append(d, late)
		if len(recs) == cap(recs) || i == n-1 {
			table.Append(recs...)
			recs = recs[:0]
		}
	}
	res := &loadgen.Result{Effective: loadgen.Effective{Scenario: loadgen.Server},
		Passes:  []loadgen.PassInfo{{Kind: loadgen.PassPerformance, FirstSeq: 0, EndSeq: uint64(n), Reported: true}},
		Summary: &loadgen.Summary{}}
	res.AttachTable(table)
	got := sendLatenessOf(res)
	want := trace.LatenessOf(d, trace.DefaultLateAfter)
	if got == nil || *got != want {
		t.Fatalf("send lateness read in passes = %+v, held = %+v", got, want)
	}
}
