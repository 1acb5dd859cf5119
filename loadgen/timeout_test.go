package loadgen

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"
)

// TestLossDecidedByTimestamp checks GB-7.4.1-d/e and IN-63 in every
// scenario that applies a sample timeout: a result 1 ns after issue +
// threshold is lost, 1 ns before it is ok. The SUT completes inside
// IssueQuery, so no timer of the issuer can act first in SingleStream
// (GB/T arrival mode 0): only the timestamps can decide.
func TestLossDecidedByTimestamp(t *testing.T) {
	const timeout = 2 * time.Second
	for _, tc := range []struct {
		name     string
		scenario Scenario
		delay    time.Duration
		want     Status
	}{
		{"mode 0, 1 ns before the deadline is ok", SingleStream, timeout - 1, StatusOK},
		{"mode 0, 1 ns after the deadline is lost", SingleStream, timeout + 1, StatusLost},
		{"MultiStream, 1 ns before the deadline is ok", MultiStream, timeout - 1, StatusOK},
		{"MultiStream, 1 ns after the deadline is lost", MultiStream, timeout + 1, StatusLost},
		{"Server (modes 1 and 2), 1 ns before is ok", Server, timeout - 1, StatusOK},
		{"Server (modes 1 and 2), 1 ns after is lost", Server, timeout + 1, StatusLost},
		{"Offline, 1 ns before is ok", Offline, timeout - 1, StatusOK},
		{"Offline, 1 ns after is lost", Offline, timeout + 1, StatusLost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := DefaultSettings()
				s.Scenario = tc.scenario
				s.MinDurationMs = 0
				s.MinQueryCount = 3
				s.ServerTargetQPS = 0.1
				s.OfflineExpectedQPS = 1
				sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
					time.Sleep(tc.delay)
					for _, smp := range samples {
						r.Complete(smp.ID, nil, 0)
					}
				}}
				res, err := Run(context.Background(), sut, &testQSL{total: 4, perf: 4}, s, &Options{SampleTimeout: timeout, SpinWindow: -1})
				if err != nil {
					t.Fatal(err)
				}
				n, lost := 0, 0
				for r := range res.Records() {
					n++
					if r.Status != tc.want {
						t.Fatalf("sample issued at %d completed at %d: %s, want %s", r.IssuedNs, r.CompletedNs, r.Status, tc.want)
					}
					if r.Status == StatusLost {
						lost++
					}
				}
				if n == 0 || res.LostSamples != uint64(lost) {
					t.Fatalf("%d records, %d lost, LostSamples %d", n, lost, res.LostSamples)
				}
				if tc.want == StatusLost && (res.DuplicateCompletions != 0 || res.LateCompletions != uint64(lost)) {
					t.Errorf("%d late and %d duplicate completions, want %d late and none duplicate", res.LateCompletions, res.DuplicateCompletions, lost)
				}
			})
		})
	}
}

// TestMode0LastJobTimesOut checks that arrival mode 0 applies the threshold
// to its last job too: the pass ends when that job's deadline passes, not
// when the stall timeout gives up on the SUT.
func TestMode0LastJobTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 2 * time.Second
		s := DefaultSettings()
		s.MinDurationMs = 0
		s.MinQueryCount = 3
		n := 0
		sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
			n++
			if n == 3 {
				return // the last job never completes
			}
			id := samples[0].ID
			time.AfterFunc(time.Millisecond, func() { r.Complete(id, nil, 0) })
		}}
		res, err := Run(context.Background(), sut, &testQSL{total: 8, perf: 8}, s, &Options{SampleTimeout: timeout, StallTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		recs := records(res)
		if len(recs) != 3 || recs[2].Status != StatusLost || res.LostSamples != 1 {
			t.Fatalf("%d records, %d lost; want the third of 3 lost", len(recs), res.LostSamples)
		}
		pi := res.Passes[len(res.Passes)-1]
		if want := recs[2].IssuedNs + int64(timeout); pi.EndNs != want || pi.StopReason != "" {
			t.Errorf("pass ended at %d (%q), want at the last job's deadline %d", pi.EndNs, pi.StopReason, want)
		}
	})
}

// TestMode0StagesScaleWithIssued runs arrival mode 0 with a stage-timing
// SUT for thousands of jobs against a schedule of 400 000 generated
// samples (a 1 µs expected latency), and checks that the stage times cost
// memory in proportion to the jobs issued: the allocations of the run,
// less those of the same run without stage times, stay within the issued
// samples' stage records plus one chunk.
func TestMode0StagesScaleWithIssued(t *testing.T) {
	run := func(withStages bool) (issued int, alloc uint64) {
		synctest.Test(t, func(t *testing.T) {
			s := DefaultSettings()
			s.MinDurationMs = 200
			s.MinQueryCount = 1
			s.SingleStreamExpectedLatencyNs = 1000
			sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
				time.Sleep(50 * time.Microsecond)
				st := NoStages
				st.Clock, st.Received, st.ResultSent = TestClock, 1, 2
				for _, smp := range samples {
					if withStages {
						r.CompleteWithStages(smp.ID, nil, 0, st)
					} else {
						r.Complete(smp.ID, nil, 0)
					}
				}
			}}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := Run(context.Background(), sut, &testQSL{total: 8, perf: 8}, s, &Options{SampleTimeout: time.Second, SpinWindow: -1})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if res.HasStages() != withStages {
				t.Fatalf("HasStages %v, want %v", res.HasStages(), withStages)
			}
			issued, alloc = int(res.RecordCount()), after.TotalAlloc-before.TotalAlloc
		})
		return issued, alloc
	}
	n0, plain := run(false)
	n1, staged := run(true)
	if n0 != n1 || n1 < 2000 {
		t.Fatalf("%d and %d jobs issued, want the same number, at least 2000", n0, n1)
	}
	size := uint64(unsafe.Sizeof(StageTimes{}))
	bound := uint64(n1+pageLen)*size + 256<<10
	if staged > plain && staged-plain > bound {
		t.Errorf("stage times of %d jobs cost %d bytes more than none (bound %d)", n1, staged-plain, bound)
	}
}
