package loadgen

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

func TestSampleTimeoutClosedLoopMovesOn(t *testing.T) {
	// GB/T 45087 arrival mode 0 (GB-7.4.2-T10-mode0, IN-48): the next job
	// goes out when the previous completes or its timeout expires.
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.MinDurationMs = 0
		s.MinQueryCount = 20
		n := 0
		sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
			n++
			if n%5 == 0 {
				return // lost
			}
			id := samples[0].ID
			time.AfterFunc(10*time.Millisecond, func() { r.Complete(id, nil, 0) })
		}}
		res, err := Run(context.Background(), sut, &testQSL{total: 8, perf: 8}, s, &Options{SampleTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		recs := records(res)
		if len(recs) != 20 || res.LostSamples != 4 {
			t.Fatalf("%d samples, %d lost; want 20 and 4", len(recs), res.LostSamples)
		}
		for i := 1; i < len(recs); i++ {
			prev := recs[i-1]
			want := prev.CompletedNs
			if prev.Status == StatusLost {
				want = prev.IssuedNs + int64(2*time.Second)
			}
			if recs[i].IssuedNs != want {
				t.Fatalf("query %d issued at %d, want %d (previous %s)", i, recs[i].IssuedNs, want, prev.Status)
			}
		}
		if res.Summary.Valid {
			t.Error("lost samples make the run INVALID")
		}
	})
}

func TestSampleTimeoutOpenLoopReaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Scenario = Server
		s.ServerTargetQPS = 100
		s.MinDurationMs = 2000
		slow := 0
		sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
			id := samples[0].ID
			d := time.Millisecond
			if samples[0].Index == 0 {
				d = 5 * time.Second // past the timeout: lost, then a late completion
				slow++
			}
			time.AfterFunc(d, func() { r.Complete(id, nil, 0) })
		}}
		res, err := Run(context.Background(), sut, &testQSL{total: 4, perf: 4}, s, &Options{SampleTimeout: 4 * time.Second, SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		if slow == 0 || res.LostSamples != uint64(slow) {
			t.Fatalf("%d slow samples, %d lost", slow, res.LostSamples)
		}
		for r := range res.Records() {
			if (r.SampleIndex == 0) != (r.Status == StatusLost) {
				t.Fatalf("record %+v", r)
			}
		}
	})
}

func TestArrivalsReplaceThePoissonSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Fixed period T = 500 ms, n = 2 jobs per tick (GB-7.4.2-T10-mode1).
		var arrivals []int64
		for k := 0; k < 10; k++ {
			at := int64(k) * int64(500*time.Millisecond)
			arrivals = append(arrivals, at, at)
		}
		s := DefaultSettings()
		s.Scenario = Server
		res, err := Run(context.Background(), delaySUT(time.Millisecond), &testQSL{total: 8, perf: 8}, s, &Options{Arrivals: arrivals, SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		var sched []int64
		for r := range res.Records() {
			sched = append(sched, r.ScheduledNs)
			if r.IssuedNs != r.ScheduledNs {
				t.Fatalf("late issue %+v", r)
			}
		}
		if !slices.Equal(sched, arrivals) {
			t.Errorf("scheduled %v, want %v", sched, arrivals)
		}
	})
	var fe *FieldError
	s := DefaultSettings()
	if _, err := Run(context.Background(), syncSUT, &testQSL{total: 8, perf: 8}, s, &Options{Arrivals: []int64{0}}); !errors.As(err, &fe) || fe.Field != "Options.Arrivals" {
		t.Errorf("arrivals outside Server: %v", err)
	}
	s.Scenario = Server
	if _, err := Run(context.Background(), syncSUT, &testQSL{total: 8, perf: 8}, s, &Options{Arrivals: []int64{5, 3}}); !errors.As(err, &fe) {
		t.Errorf("decreasing arrivals: %v", err)
	}
}

func TestCompleteWithStagesKeepsSUTTimes(t *testing.T) {
	s := DefaultSettings()
	s.MinDurationMs = 0
	s.MinQueryCount = 10
	sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
		st := NoStages
		st.Received = r.Now()
		st.InferenceStart, st.InferenceEnd = st.Received+1, st.Received+2
		st.Node = uint32(samples[0].Index)
		r.CompleteWithStages(samples[0].ID, nil, 0, st)
	}}
	res, err := Run(context.Background(), sut, &testQSL{total: 8, perf: 8}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.HasStages() {
		t.Fatal("stages reported but not kept")
	}
	recs := records(res)
	i := 0
	for st := range res.Stages() {
		r := recs[i]
		if st.Node != uint32(r.SampleIndex) || st.Received < r.IssuedNs || st.Received > r.CompletedNs || st.InferenceEnd != st.Received+2 {
			t.Fatalf("record %+v has stages %+v", r, st)
		}
		i++
	}
	if i != len(recs) {
		t.Fatalf("%d stages for %d records", i, len(recs))
	}
}
