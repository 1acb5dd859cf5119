package loadgen

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestArrivalSamplesIssueTheNamedSamples replays a hand-written trace of
// five requests: each goes out at its own offset with its own sample
// (repeats and ties included), whatever the sample index RNG would draw.
func TestArrivalSamplesIssueTheNamedSamples(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		arrivals := []int64{0, 0, int64(3 * time.Millisecond), int64(10 * time.Millisecond), int64(10 * time.Millisecond)}
		samples := []uint64{4, 0, 4, 2, 1}
		s := DefaultSettings()
		s.Scenario = Server
		res, err := Run(context.Background(), delaySUT(2*time.Millisecond), &testQSL{total: 5, perf: 5}, s,
			&Options{Arrivals: arrivals, ArrivalSamples: samples, SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		recs := records(res)
		if len(recs) != 5 {
			t.Fatalf("%d records, want 5", len(recs))
		}
		for i, r := range recs {
			if r.SampleIndex != samples[i] || r.ScheduledNs != arrivals[i] || r.IssuedNs != arrivals[i] {
				t.Errorf("request %d: sample %d scheduled %d issued %d; want sample %d at %d", i, r.SampleIndex, r.ScheduledNs, r.IssuedNs, samples[i], arrivals[i])
			}
			if want := arrivals[i] + int64(2*time.Millisecond); r.CompletedNs != want {
				t.Errorf("request %d completed at %d, want %d", i, r.CompletedNs, want)
			}
		}
	})
}

// TestArrivalSamplesLateIssueKeepsTheSchedule: a SUT that holds the issuer
// past the next arrival makes that send late; the record keeps the trace's
// time as its schedule, so the lateness is in the latency.
func TestArrivalSamplesLateIssueKeepsTheSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		arrivals := []int64{0, int64(time.Millisecond), int64(2 * time.Millisecond)}
		s := DefaultSettings()
		s.Scenario = Server
		s.ServerCoalesceQueries = false
		first := true
		sut := funcSUT{issue: func(r *Responder, qs []QuerySample) {
			if first {
				first = false
				time.Sleep(5 * time.Millisecond)
			}
			for _, q := range qs {
				r.Complete(q.ID, nil, 0)
			}
		}}
		res, err := Run(context.Background(), sut, &testQSL{total: 3, perf: 3}, s,
			&Options{Arrivals: arrivals, ArrivalSamples: []uint64{0, 1, 2}, SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		recs := records(res)
		wantIssued := []int64{0, int64(5 * time.Millisecond), int64(5 * time.Millisecond)}
		var issued []int64
		for i, r := range recs {
			issued = append(issued, r.IssuedNs)
			if r.ScheduledNs != arrivals[i] {
				t.Errorf("request %d scheduled at %d, want the trace's %d", i, r.ScheduledNs, arrivals[i])
			}
		}
		if !slices.Equal(issued, wantIssued) {
			t.Errorf("issued at %v, want %v", issued, wantIssued)
		}
	})
}

func TestArrivalSamplesRefused(t *testing.T) {
	s := DefaultSettings()
	s.Scenario = Server
	fp := s
	fp.Mode = FindPeakPerformance
	for _, tc := range []struct {
		name, why string
		s         Settings
		o         Options
		want      string
	}{
		{"no arrivals", "samples name arrivals; alone they have nothing to name", s,
			Options{ArrivalSamples: []uint64{0}}, "set Arrivals too"},
		{"length", "one sample per arrival, no more, no fewer", s,
			Options{Arrivals: []int64{0, 1}, ArrivalSamples: []uint64{0}}, "one sample per arrival (2)"},
		{"not loaded", "index 8 is past the 8 samples loaded", s,
			Options{Arrivals: []int64{0, 1}, ArrivalSamples: []uint64{0, 8}}, "entry 1"},
		{"find-peak", "a fixed list has no rate to search", fp,
			Options{Arrivals: []int64{0}, ArrivalSamples: []uint64{0}}, "find-peak"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), syncSUT, &testQSL{total: 100, perf: 8}, tc.s, &tc.o)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "Options.ArrivalSamples" || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: got %v, want a FieldError on Options.ArrivalSamples saying %q", tc.why, err, tc.want)
			}
		})
	}
}
