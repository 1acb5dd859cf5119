package loadgen

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// perIndexDelaySUT completes each sample delay(index) after it is issued, on the
// (fake) clock.
func perIndexDelaySUT(delay func(idx uint64) time.Duration) funcSUT {
	return funcSUT{issue: func(r *Responder, samples []QuerySample) {
		for _, s := range samples {
			id := s.ID
			time.AfterFunc(delay(s.Index), func() { r.Complete(id, nil, 0) })
		}
	}}
}

func concurrencyRun(t *testing.T, n uint64, minQueries uint64, minDuration time.Duration, delay func(uint64) time.Duration) *Result {
	t.Helper()
	s := DefaultSettings()
	s.Concurrency = n
	s.MinQueryCount = minQueries
	s.MinDurationMs = uint64(minDuration / time.Millisecond)
	res, err := Run(context.Background(), perIndexDelaySUT(delay), &testQSL{total: 64, perf: 64}, s, &Options{SpinWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestConcurrencyKeepsNInFlight checks the fixed-concurrency mode with
// unequal fixed delays: the first N queries go out at 0, every later one
// at the exact moment an earlier one completes (its scheduled time being
// that moment), so exactly N are in flight from the start until issuing
// ends.
func TestConcurrencyKeepsNInFlight(t *testing.T) {
	for _, n := range []uint64{1, 3, 8} {
		synctest.Test(t, func(t *testing.T) {
			delay := func(idx uint64) time.Duration { return time.Duration(5+idx%7*3) * time.Millisecond }
			res := concurrencyRun(t, n, 200, 0, delay)
			recs := records(res)
			if uint64(len(recs)) < 200 {
				t.Fatalf("%d records, want ≥ 200", len(recs))
			}
			var issues, completions []int64
			for k, r := range recs {
				if r.Status != StatusOK {
					t.Fatalf("record %d: %s", k, r.Status)
				}
				if r.ScheduledNs != r.IssuedNs {
					t.Fatalf("record %d scheduled at %d, issued at %d: want the issue time", k, r.ScheduledNs, r.IssuedNs)
				}
				if got, want := r.CompletedNs-r.IssuedNs, int64(delay(r.SampleIndex)); got != want {
					t.Fatalf("record %d took %d ns, want the SUT's %d", k, got, want)
				}
				if uint64(k) < n {
					if r.IssuedNs != 0 {
						t.Fatalf("record %d of the first %d issued at %d, want 0", k, n, r.IssuedNs)
					}
				} else {
					issues = append(issues, r.IssuedNs)
				}
				completions = append(completions, r.CompletedNs)
			}
			// Query k ≥ N replaces the (k−N+1)-th completion: the issue
			// times after the first N are the earliest completion times.
			slices.Sort(completions)
			if !slices.Equal(issues, completions[:len(issues)]) {
				t.Fatalf("issue times are not the completion times they replace:\nissues      %v\ncompletions %v", issues[:min(10, len(issues))], completions[:min(10, len(issues))])
			}
			// So, sweeping the timeline, exactly N are in flight at every
			// moment until the last issue.
			last := issues[len(issues)-1]
			inFlight := 0
			type ev struct {
				t int64
				d int
			}
			var evs []ev
			for _, r := range recs {
				evs = append(evs, ev{r.IssuedNs, +1}, ev{r.CompletedNs, -1})
			}
			slices.SortFunc(evs, func(a, b ev) int {
				if a.t != b.t {
					return int(a.t - b.t)
				}
				return a.d - b.d // completions first at the same instant
			})
			for i, e := range evs {
				inFlight += e.d
				if i+1 < len(evs) && evs[i+1].t == e.t {
					continue
				}
				if e.t <= last && inFlight != int(n) {
					t.Fatalf("at %d ns %d in flight, want %d", e.t, inFlight, n)
				}
			}
		})
	}
}

// TestConcurrencyThroughput: with every sample taking d, N chains complete
// N/d samples per second, and the run lasts its minimum duration.
func TestConcurrencyThroughput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, d = 4, 10 * time.Millisecond
		res := concurrencyRun(t, n, 10, time.Second, func(uint64) time.Duration { return d })
		recs := records(res)
		end := int64(0)
		for _, r := range recs {
			end = max(end, r.CompletedNs)
		}
		// Issuing stops with the first query issued at ≥ 1 s, the first of
		// a group of N, so one query more than 100 groups.
		if want := 100*n + 1; len(recs) != want {
			t.Errorf("%d samples, want %d", len(recs), want)
		}
		if got, want := float64(len(recs)-1)/float64(end-int64(d))*1e9, float64(n)/d.Seconds(); got != want {
			t.Errorf("throughput %v samples/s, want N/latency = %v", got, want)
		}
		if res.Summary == nil || res.Summary.Effective.Concurrency != n {
			t.Fatalf("summary %+v: want effective concurrency %d", res.Summary, n)
		}
		if !res.Summary.MinDurationMet || !res.Summary.MinQueriesMet {
			t.Errorf("min duration met %v, min queries met %v", res.Summary.MinDurationMet, res.Summary.MinQueriesMet)
		}
	})
}

// A lost sample (the sample timeout) frees its slot like a completion.
func TestConcurrencyLostSampleFreesItsSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := DefaultSettings()
		s.Concurrency = 2
		s.MinQueryCount = 6
		s.MinDurationMs = 0
		sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
			for _, smp := range samples {
				if smp.ID <= 2 {
					continue // never answered: lost after the timeout
				}
				id := smp.ID
				time.AfterFunc(time.Millisecond, func() { r.Complete(id, nil, 0) })
			}
		}}
		res, err := Run(context.Background(), sut, &testQSL{total: 8, perf: 8}, s, &Options{SampleTimeout: 50 * time.Millisecond, StallTimeout: time.Hour, SpinWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		if res.LostSamples != 2 {
			t.Fatalf("%d lost, want 2", res.LostSamples)
		}
		recs := records(res)
		// Both slots are held by the first two queries until their timeout
		// at 50 ms, when the third and fourth go out.
		if got := recs[2].IssuedNs; got != int64(50*time.Millisecond) {
			t.Errorf("query 3 issued at %d, want at the timeout of the first two, 50 ms", got)
		}
	})
}

func TestConcurrencySettings(t *testing.T) {
	tests := []struct {
		name     string
		scenario Scenario
		n        uint64
		ok       bool
	}{
		{"SingleStream takes a concurrency", SingleStream, 8, true},
		{"zero is LoadGen's own behaviour in any scenario", Server, 0, true},
		{"Server cannot take it: it has its own schedule", Server, 8, false},
		{"MultiStream cannot take it", MultiStream, 2, false},
		{"Offline cannot take it", Offline, 2, false},
		{"above the bound", SingleStream, MaxConcurrency + 1, false},
	}
	for _, tt := range tests {
		s := DefaultSettings()
		s.Scenario, s.Concurrency = tt.scenario, tt.n
		err := s.Validate()
		var fe *FieldError
		if tt.ok != (err == nil) || (err != nil && (!errors.As(err, &fe) || fe.Field != "concurrency")) {
			t.Errorf("%s: Validate() = %v", tt.name, err)
		}
	}
	s := DefaultSettings()
	s.Concurrency = 8
	e, err := NewEffective(s, 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	// Its own query generation: 8 chains of requests as short as 1 µs,
	// whatever the SingleStream expected latency (1 s by default, which
	// ran out of queries after 2 s).
	if e.Concurrency != 8 || e.MaxAsyncQueries != 8 || e.TargetQPS != 8e6 {
		t.Errorf("effective %+v: want concurrency 8, max async 8, a generation rate of 8 × 10^6 queries/s", e)
	}
}
