package loadgen

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"
)

// randomColumns makes n records of queries of 1 to maxSPQ samples, with
// every status and token times, in issue order.
func randomColumns(rng *rand.Rand, n, maxSPQ int) *RecordColumns {
	var c RecordColumns
	qid, left := uint64(0), 0
	var sched int64
	for i := range n {
		if left == 0 {
			qid++
			left = 1 + rng.IntN(maxSPQ)
			sched += rng.Int64N(1000)
		}
		left--
		rec := Record{SeqID: uint64(i), QueryID: qid, ScheduledNs: sched, IssuedNs: sched + 5,
			CompletedNs: sched + 10 + rng.Int64N(100_000), Tokens: rng.Int64N(5), FirstTokenNs: NoTime, Status: StatusOK}
		if rec.Tokens > 0 {
			rec.FirstTokenNs = sched + 10
		}
		switch rng.IntN(10) {
		case 0:
			rec.Status = StatusError
		case 1:
			rec.Status, rec.CompletedNs = StatusLost, NoTime
		}
		c.Append(rec)
	}
	return &c
}

func TestPerfAccJoinIsOneReading(t *testing.T) {
	// Records read in parts, the parts joined, give what one reading in
	// order gives: queries cut between parts are one query, counters add
	// up, the final query is the last one.
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		why    string
		spq    int
		tokens bool
		sc     Scenario
	}{
		{"one sample a query: no query is ever cut", 1, false, Server},
		{"queries of up to 7 samples, cut anywhere", 7, false, Offline},
		{"one query for everything (Offline): every part is the same query", 1 << 30, false, Offline},
		{"token latencies, queries cut", 5, true, Server},
	} {
		e := &Effective{Scenario: c.sc, UseTokenLatencies: c.tokens}
		info := PassInfo{EndNs: 1 << 40, ProtocolErrors: 3}
		for trial := range 50 {
			n := 1 + rng.IntN(300)
			cols := randomColumns(rng, n, c.spq)
			whole := newPerfAcc(e, info, true, nil)
			whole.add(cols)
			want, wantMax := whole.result(), whole.maxCompletion

			// Cut at up to 4 random points (parts may be empty).
			cuts := []int{0}
			for range rng.IntN(4) {
				cuts = append(cuts, rng.IntN(n+1))
			}
			cuts = append(cuts, n)
			slices.Sort(cuts)
			var first *perfAcc
			var lat, tok, ttft, tpot []int64
			for k := range len(cuts) - 1 {
				var part RecordColumns
				part.AppendRange(cols, cuts[k], cuts[k+1])
				a := newPerfAcc(e, info, true, nil)
				a.add(&part)
				lat = append(lat, a.pr.SampleLatencies...)
				tok = append(tok, a.pr.TokensPerSample...)
				ttft = append(ttft, a.pr.FirstTokenLatencies...)
				tpot = append(tpot, a.pr.TimePerOutputToken...)
				if first == nil {
					first = a
				} else {
					first.join(a)
				}
			}
			got := first.result()
			got.SampleLatencies, got.TokensPerSample, got.FirstTokenLatencies, got.TimePerOutputToken = lat, tok, ttft, tpot
			if !reflect.DeepEqual(orNil(got), orNil(want)) || first.maxCompletion != wantMax {
				t.Fatalf("%s (trial %d, cuts %v): joined\n%+v\nwant\n%+v", c.why, trial, cuts, got, want)
			}
		}
	}
}

// orNil makes empty slices nil, so that DeepEqual compares contents.
func orNil(pr PerformanceResult) PerformanceResult {
	for _, s := range []*[]int64{&pr.SampleLatencies, &pr.QueryLatencies, &pr.TokensPerSample, &pr.FirstTokenLatencies, &pr.TimePerOutputToken} {
		if len(*s) == 0 {
			*s = nil
		}
	}
	return pr
}

func TestScanPassInPartsIsOneReading(t *testing.T) {
	// A pass large enough to be read in parts, with failed and lost
	// samples, gives the raw result and latest completion of one reading
	// in order, whatever the number of processors.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	n := 3*scanPassMin + 12345
	sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
		for i, s := range samples {
			switch {
			case i%97 == 5:
				// never answered: lost at the end of the pass
			case i%31 == 2:
				r.Respond(Response{ID: s.ID, Err: errors.New("boom")})
			default:
				r.Complete(s.ID, nil, int64(i%4))
			}
		}
	}}
	s := DefaultSettings()
	s.Scenario, s.MinDurationMs, s.MinQueryCount = Offline, 0, uint64(n)
	res, err := Run(context.Background(), sut, &testQSL{total: 64, perf: 64}, s, &Options{SpinWindow: -1, StallTimeout: 1})
	if err != nil && res == nil {
		t.Fatal(err)
	}
	pr := res.passes[len(res.passes)-1]
	e := res.Summary.Effective
	if got := int(pr.p.extent.Load()); got < 2*scanPassMin {
		t.Fatalf("a pass of %d samples: too small to be read in parts", got)
	}
	for _, latencies := range []bool{true, false} {
		gotMax, got := pr.scan(&e, latencies)
		whole := newPerfAcc(&e, pr.info, latencies, nil)
		for c := range pr.columns(0) {
			whole.add(c)
		}
		want := whole.result()
		if !reflect.DeepEqual(orNil(got), orNil(want)) || gotMax != whole.maxCompletion {
			t.Fatalf("latencies %v: read in parts: %d latencies, %d queries, lost %d, failed %d, latest %d; in order: %d, %d, %d, %d, %d",
				latencies, len(got.SampleLatencies), got.QueriesIssued, got.LostSamples, got.FailedSamples, gotMax,
				len(want.SampleLatencies), want.QueriesIssued, want.LostSamples, want.FailedSamples, whole.maxCompletion)
		}
		if latencies && (got.LostSamples == 0 || got.FailedSamples == 0) {
			t.Fatalf("the pass has %d lost and %d failed samples: the test needs both", got.LostSamples, got.FailedSamples)
		}
	}
}

func TestReportedPass(t *testing.T) {
	for _, c := range []struct {
		why      string
		reported []bool
		want     int
	}{
		{"no pass (a run refused before issuing)", nil, -1},
		{"an accuracy pass alone reports nothing", []bool{false}, -1},
		{"submission: accuracy, then the reported performance pass", []bool{false, true}, 1},
		{"find-peak: the reported probe among others", []bool{false, true, false}, 1},
		{"two marked (a stored result written so): the last, as the report reads it", []bool{true, false, true}, 2},
	} {
		var r Result
		for _, rep := range c.reported {
			r.Passes = append(r.Passes, PassInfo{Reported: rep})
		}
		if got := r.ReportedPass(); got != c.want {
			t.Errorf("%s: ReportedPass() = %d, want %d", c.why, got, c.want)
		}
	}
}
