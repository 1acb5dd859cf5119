// Package metricstest holds the hand-worked fixtures that the tests of
// the serving metrics (package metrics) and of the studies built on them
// (package sweep) share.
package metricstest

import (
	"time"

	"aimeter/loadgen"
)

const msNs = int64(time.Millisecond)

// HandResult is a 2-second pass of ten requests at concurrency 4, whose
// figures the tests of packages metrics and sweep work out by hand.
// Times are ms from the start of the pass; every request is scheduled at
// a whole second or half second.
func HandResult() *loadgen.Result {
	rec := func(seq uint64, sched, first, done, tokens int64, st loadgen.Status) loadgen.Record {
		r := loadgen.Record{SeqID: seq, QueryID: seq, ScheduledNs: sched * msNs, IssuedNs: sched*msNs + 1, FirstTokenNs: loadgen.NoTime,
			CompletedNs: loadgen.NoTime, Tokens: tokens, Status: st}
		if first >= 0 {
			r.FirstTokenNs = first * msNs
		}
		if done >= 0 {
			r.CompletedNs = done * msNs
		}
		return r
	}
	recs := []loadgen.Record{
		//        sched first done tokens            TTFT  E2E   TPOT
		rec(0, 0, 100, 1000, 10, loadgen.StatusOK),    // 100   1000  900/9 = 100
		rec(1, 0, 50, 500, 10, loadgen.StatusOK),      // 50    500   450/9 = 50
		rec(2, 0, 300, 1200, 10, loadgen.StatusOK),    // 300   1200  900/9 = 100
		rec(3, 500, 600, 1100, 11, loadgen.StatusOK),  // 100   600   500/10 = 50
		rec(4, 500, 550, 1500, 20, loadgen.StatusOK),  // 50    1000  950/19 = 50
		rec(5, 500, 700, 700, 1, loadgen.StatusOK),    // 200   200   none (1 token)
		rec(6, 1000, -1, 1800, 5, loadgen.StatusOK),   // 800 (no first token: the whole latency)  800  0/4 = 0
		rec(7, 1000, 1100, 1900, 9, loadgen.StatusOK), // 100   900   800/8 = 100
		rec(8, 1000, -1, 1200, 0, loadgen.StatusError),
		rec(9, 1500, -1, -1, 0, loadgen.StatusLost),
	}
	res := &loadgen.Result{
		Effective: loadgen.Effective{Concurrency: 4},
		Passes:    []loadgen.PassInfo{{Kind: loadgen.PassPerformance, FirstSeq: 0, EndSeq: 10, EndNs: 2000 * msNs, Reported: true}},
	}
	res.AttachRecords(recs)
	return res
}
