package loadgen

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestChainsScheduleEachTurnAfterThePrevious runs two sessions of chained
// turns on the fake clock and works every time out by hand. Session A
// (queries 0, 2, 4) starts at 0; session B (queries 1, 3) at 5 ms. Every
// answer takes 10 ms, except sample 3's (query 3), which takes 30 ms;
// think times are 2 ms (A) and 7 ms (B).
//
//	A: q0 at 0, done 10; q2 at 10+2 = 12, done 22; q4 at 22+2 = 24, done 34
//	B: q1 at 5, done 15; q3 at 15+7 = 22, done 52
func TestChainsScheduleEachTurnAfterThePrevious(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := int64(time.Millisecond)
		c := &Chains{
			After:   []int32{-1, -1, 0, 1, 2},
			Delay:   []int64{0, 5 * ms, 2 * ms, 7 * ms, 2 * ms},
			Samples: []uint64{0, 1, 2, 3, 4},
		}
		sut := funcSUT{issue: func(r *Responder, qs []QuerySample) {
			for _, q := range qs {
				d := 10 * time.Millisecond
				if q.Index == 3 {
					d = 30 * time.Millisecond
				}
				time.AfterFunc(d, func() { r.Complete(q.ID, nil, 0) })
			}
		}}
		s := DefaultSettings()
		s.Scenario = Server
		res, err := Run(context.Background(), sut, &testQSL{total: 5, perf: 5}, s, &Options{Chains: c, SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		want := map[uint64][3]int64{ // sample: scheduled, issued, completed
			0: {0, 0, 10 * ms}, 1: {5 * ms, 5 * ms, 15 * ms}, 2: {12 * ms, 12 * ms, 22 * ms},
			3: {22 * ms, 22 * ms, 52 * ms}, 4: {24 * ms, 24 * ms, 34 * ms},
		}
		n := 0
		for r := range res.Records() {
			n++
			w := want[r.SampleIndex]
			if r.ScheduledNs != w[0] || r.IssuedNs != w[1] || r.CompletedNs != w[2] || r.Status != StatusOK {
				t.Errorf("sample %d: scheduled %d issued %d completed %d (%s); want %v", r.SampleIndex, r.ScheduledNs, r.IssuedNs, r.CompletedNs, r.Status, w)
			}
		}
		if n != 5 {
			t.Errorf("%d records, want 5", n)
		}
	})
}

// TestChainsFailureEndsTheSession: a failed turn's followers are never
// sent; the other session goes on.
func TestChainsFailureEndsTheSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &Chains{
			After:   []int32{-1, -1, 0, 1, 2, 3},
			Delay:   []int64{0, 0, 1e6, 1e6, 1e6, 1e6},
			Samples: []uint64{0, 1, 2, 3, 4, 5},
		}
		sut := funcSUT{issue: func(r *Responder, qs []QuerySample) {
			for _, q := range qs {
				time.AfterFunc(time.Millisecond, func() {
					if q.Index == 2 {
						r.Fail(q.ID, errors.New("HTTP 503"))
						return
					}
					r.Complete(q.ID, nil, 0)
				})
			}
		}}
		s := DefaultSettings()
		s.Scenario = Server
		s.MaxErrorRate = 1
		res, err := Run(context.Background(), sut, &testQSL{total: 6, perf: 6}, s, &Options{Chains: c, SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for r := range res.Records() {
			got = append(got, fmt.Sprintf("%d:%s", r.SampleIndex, r.Status))
		}
		// Session A: 0 ok, 2 failed, 4 never sent. Session B: 1, 3, 5 ok.
		if strings.Join(got, " ") != "0:ok 1:ok 2:error 3:ok 5:ok" {
			t.Errorf("records %v", got)
		}
	})
}

func TestChainsRefused(t *testing.T) {
	s := DefaultSettings()
	s.Scenario = Server
	ok := Chains{After: []int32{-1, 0}, Delay: []int64{0, 0}, Samples: []uint64{0, 1}}
	for _, tc := range []struct {
		name, why, want string
		s               Settings
		o               Options
	}{
		{"offline", "chains are a Server schedule", "use the Server scenario", DefaultSettings(), Options{Chains: &ok}},
		{"with arrivals", "one schedule or the other", "give one or the other", s, Options{Chains: &ok, Arrivals: []int64{0, 0}}},
		{"forward", "a query follows an earlier one", "entry 1: After must be", s, Options{Chains: &Chains{After: []int32{-1, 1}, Delay: []int64{0, 0}, Samples: []uint64{0, 1}}}},
		{"negative delay", "no time travel", "entry 0: delays are ≥ 0", s, Options{Chains: &Chains{After: []int32{-1}, Delay: []int64{-1}, Samples: []uint64{0}}}},
		{"lengths", "one entry per query", "one entry per query", s, Options{Chains: &Chains{After: []int32{-1}, Delay: []int64{0, 0}, Samples: []uint64{0}}}},
		{"not loaded", "sample 9 of 8", "entry 0: sample indices", s, Options{Chains: &Chains{After: []int32{-1}, Delay: []int64{0}, Samples: []uint64{9}}}},
		{"empty", "nothing to run", "at least one query", s, Options{Chains: &Chains{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), syncSUT, &testQSL{total: 8, perf: 8}, tc.s, &tc.o)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "Options.Chains" || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: got %v, want a FieldError on Options.Chains saying %q", tc.why, err, tc.want)
			}
		})
	}
}
