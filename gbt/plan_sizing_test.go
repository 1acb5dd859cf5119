package gbt

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/loadgen"
	"aimeter/sut/null"
)

// delaySUT answers every sample after d, from a timer: on synctest's fake
// clock, a server of constant latency.
type delaySUT time.Duration

func (delaySUT) Name() string { return "delay" }
func (d delaySUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, s := range samples {
		time.AfterFunc(time.Duration(d), func() { r.Complete(s.ID, nil, 0) })
	}
}
func (delaySUT) FlushQueries() {}

// TestPlanMode0SendsJobsForTheDuration is issue 39's first reproduction:
// a mode 0 test of 3 s against a SUT answering in 1 ms, with aimeter's
// SingleStream expected latency for an OpenAI server (1 s), sent LoadGen's
// 2 × 3 s / 1 s + 1 = 7 pre-generated jobs in 7 ms and stopped. Mode 0
// sends the next job when the previous completes until the duration has
// passed (GB-7.4.2-T10-mode0), however fast the SUT: about 3 000 jobs
// here, over at least 3 s, for mode 0 and for mode 5 over it.
func TestPlanMode0SendsJobsForTheDuration(t *testing.T) {
	for _, mode := range []ArrivalMode{ModeContinuous, ModeMixed} {
		t.Run(mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				in := planInput(mode)
				in.UnderlyingMode = ModeContinuous
				in.Arrival.Duration = 3 * time.Second
				base := loadgen.DefaultSettings()
				base.SingleStreamExpectedLatencyNs = uint64(time.Second)
				p, err := NewRunPlan(in, base, nil)
				if err != nil {
					t.Fatal(err)
				}
				opts := p.Options()
				opts.SpinWindow = -1
				res, err := loadgen.Run(context.Background(), delaySUT(time.Millisecond), null.QSL{Total: 64}, p.Settings, &opts)
				if err != nil {
					t.Fatal(err)
				}
				jobs := res.RecordCount()
				var last int64
				for r := range res.Records() {
					last = max(last, r.CompletedNs)
				}
				if jobs < 2900 || jobs > 3100 || time.Duration(last) < 3*time.Second {
					t.Errorf("mode %d: %d jobs over %v; want about 3000 over the 3 s duration", mode, jobs, time.Duration(last))
				}
				if !res.Summary.MinDurationMet {
					t.Errorf("mode %d: the duration was not met", mode)
				}
			})
		})
	}
}

// TestPlanOfflineJobs is issue 39's second reproduction: mode 4 sent
// LoadGen's default min_query_count of 100 jobs, said nowhere, and its
// test recorded the 10 s default duration, which no offline job waits for
// (GB-7.4.2-T10-mode4: every job at once). The jobs count is now
// Arrival.Jobs, else a user's min_query_count, else the loaded data set
// (SizeJobs); the test records it and no duration.
func TestPlanOfflineJobs(t *testing.T) {
	base := loadgen.DefaultSettings()
	base.MinQueryCount = 10
	set := []UserSetting{{Key: "min_query_count", Value: "10", Source: "--set"}}
	cases := []struct {
		why    string
		jobs   uint64
		user   []UserSetting
		loaded uint64
		want   uint64
	}{
		{"no count named: the loaded data set, each sample once", 0, nil, 1024, 1024},
		{"an explicit jobs count", 37, nil, 1024, 37},
		{"a user's min_query_count is the count, as before", 0, set, 1024, 10},
	}
	for _, c := range cases {
		in := planInput(ModeOffline)
		in.Arrival.Jobs = c.jobs
		p, err := NewRunPlan(in, base, c.user)
		if err != nil {
			t.Fatalf("%s: %v", c.why, err)
		}
		p.SizeJobs(c.loaded)
		if p.Settings.MinQueryCount != c.want || p.Test.Arrival.Jobs != c.want {
			t.Errorf("%s: min_query_count %d, recorded jobs %d; want %d", c.why, p.Settings.MinQueryCount, p.Test.Arrival.Jobs, c.want)
		}
		e, err := loadgen.NewEffective(p.Settings, c.loaded, c.loaded)
		if err != nil {
			t.Fatal(err)
		}
		if e.SamplesPerQuery != c.want {
			t.Errorf("%s: the Offline query holds %d samples, want %d", c.why, e.SamplesPerQuery, c.want)
		}
		raw, err := json.Marshal(p.Test.Arrival)
		if err != nil {
			t.Fatal(err)
		}
		if p.Test.Arrival.Duration != 0 || strings.Contains(string(raw), "duration") {
			t.Errorf("%s: the offline test records a duration: %s", c.why, raw)
		}
	}

	// Mode 5 over 4: the foreign jobs still arrive for the duration.
	in := planInput(ModeMixed)
	in.UnderlyingMode = ModeOffline
	p, err := NewRunPlan(in, base, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.SizeJobs(256)
	if p.Test.Arrival.Duration != in.Arrival.Duration || p.Test.Arrival.Jobs != 256 || p.Foreign.MinDurationMs != 2000 {
		t.Errorf("mode 5 over 4: duration %v, jobs %d, foreign min_duration %d", p.Test.Arrival.Duration, p.Test.Arrival.Jobs, p.Foreign.MinDurationMs)
	}

	// A count for another mode, and a user setting against the count.
	in = planInput(ModePoisson)
	in.Arrival.Jobs = 5
	var pe *PlanError
	if _, err := NewRunPlan(in, base, nil); !errors.As(err, &pe) || pe.Param != "arrival.jobs" {
		t.Errorf("a jobs count for mode 2: %v, want a PlanError on arrival.jobs", err)
	}
	in = planInput(ModeOffline)
	in.Arrival.Jobs = 37
	var ce *ConflictError
	if _, err := NewRunPlan(in, base, set); !errors.As(err, &ce) || !strings.Contains(err.Error(), "offline jobs 37") {
		t.Errorf("jobs 37 with --set min_query_count=10: %v, want a conflict naming both", err)
	}
}
