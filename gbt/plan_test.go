package gbt

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"aimeter/loadgen"
)

func planInput(mode ArrivalMode) PlanInput {
	return PlanInput{
		Arrival: Arrival{
			Mode: mode, Lambda: 50, Period: 100 * time.Millisecond, N: 2, Duration: 2 * time.Second,
			Bursts: 1, BurstLength: 500 * time.Millisecond, BurstPeriod: 10 * time.Millisecond, BurstN: 3, Seed: 7,
		},
		UnderlyingMode: ModeFixedPeriod,
		Mixed:          Mixed{Lambda: 5, QSLSize: 16, Seed: 8},
		LossThreshold:  0.01,
	}
}

func TestPlanConflicts(t *testing.T) {
	base := loadgen.DefaultSettings()
	base.MinDurationMs = 3000 // as --set min_duration=3000 leaves it
	base.MinQueryCount = 10
	base.ServerTargetQPS = 9
	base.ScheduleRNGSeed = 99
	set := func(k, v string) UserSetting { return UserSetting{Key: k, Value: v, Source: "--set"} }
	tests := []struct {
		reason string
		mode   ArrivalMode
		user   []UserSetting
		want   []string // substrings of the error, in order; none: no error
		n      int      // conflicts reported
	}{
		{"the issue's example: mode 2 sets min_duration from the duration", ModePoisson,
			[]UserSetting{set("min_duration", "3000")},
			[]string{"--set min_duration=3000 conflicts with the GB/T arrival duration 2s (mode 2 sets min_duration from the duration)"}, 1},
		{"every conflict is reported, not only the first", ModePoisson,
			[]UserSetting{set("min_duration", "3000"), set("target_qps", "9"), set("schedule_rng_seed", "99")},
			[]string{"min_duration=3000", "target_qps=9 conflicts with the GB/T arrival rate λ = 50", "schedule_rng_seed=99 conflicts with the GB/T arrival seed 7"}, 3},
		{"mode 0 ends on the duration, so min_query_count is its own", ModeContinuous,
			[]UserSetting{set("min_query_count", "10")}, []string{"min_query_count=10", "min_query_count to 1"}, 1},
		{"mode 1 derives target_qps from its schedule", ModeFixedPeriod,
			[]UserSetting{set("target_qps", "9")}, []string{"target_qps=9 conflicts with the GB/T arrival schedule"}, 1},
		{"mode 4 sets min_duration to 0", ModeOffline,
			[]UserSetting{{Key: "min_duration", Value: "3000", Source: "user.conf"}}, []string{"user.conf min_duration=3000 conflicts with the GB/T offline arrival (mode 4 sets min_duration to 0"}, 1},
		{"a key the mode does not set is the user's", ModePoisson,
			[]UserSetting{set("min_query_count", "10"), set("qsl_rng_seed", "3")}, nil, 0},
		{"mode 4 leaves min_query_count alone", ModeOffline,
			[]UserSetting{set("min_query_count", "10")}, nil, 0},
		{"mode 5 conflicts through its underlying mode", ModeMixed,
			[]UserSetting{set("min_duration", "3000")}, []string{"mode 5 sets min_duration"}, 1},
	}
	for _, tc := range tests {
		p, err := NewRunPlan(planInput(tc.mode), base, tc.user)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.reason, err)
			}
			continue
		}
		var ce *ConflictError
		if !errors.As(err, &ce) || !IsUsage(err) || p != nil {
			t.Errorf("%s: want a *ConflictError, got %v", tc.reason, err)
			continue
		}
		msg := err.Error()
		for _, w := range tc.want {
			i := strings.Index(msg, w)
			if i < 0 {
				t.Errorf("%s: %q lacks %q", tc.reason, msg, w)
				break
			}
			msg = msg[i+len(w):]
		}
		if len(ce.Conflicts) != tc.n {
			t.Errorf("%s: %d conflicts, want %d", tc.reason, len(ce.Conflicts), tc.n)
		}
	}
}

func TestPlanSettingsAndSchedule(t *testing.T) {
	base := loadgen.DefaultSettings()
	tests := []struct {
		reason   string
		mode     ArrivalMode
		scenario loadgen.Scenario
		arrivals int // scheduled offsets kept in the plan; -1: LoadGen schedules
		timeout  time.Duration
	}{
		{"mode 0 is LoadGen's SingleStream with the 2 s timeout", ModeContinuous, loadgen.SingleStream, -1, 2 * time.Second},
		{"mode 1: 2 jobs every 100 ms for 2 s", ModeFixedPeriod, loadgen.Server, 40, 4 * time.Second},
		{"mode 2: LoadGen's Poisson schedule", ModePoisson, loadgen.Server, -1, 4 * time.Second},
		{"mode 4: Offline, no timeout (IN-51)", ModeOffline, loadgen.Offline, -1, 0},
		{"mode 5 over mode 1 schedules like mode 1", ModeMixed, loadgen.Server, 40, 4 * time.Second},
	}
	for _, tc := range tests {
		p, err := NewRunPlan(planInput(tc.mode), base, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.reason, err)
		}
		if p.Settings.Scenario != tc.scenario || p.Settings.Mode != loadgen.PerformanceOnly || p.SampleTimeout != tc.timeout ||
			p.Test.Arrival.Timeout != tc.timeout || p.Test.Arrival.Mode != tc.mode {
			t.Errorf("%s: plan %+v", tc.reason, p)
		}
		if tc.arrivals < 0 {
			if p.Arrivals != nil || p.Test.Schedule.Hash != "" {
				t.Errorf("%s: LoadGen schedules, but the plan has %d offsets", tc.reason, len(p.Arrivals))
			}
		} else if len(p.Arrivals) != tc.arrivals || p.Test.Schedule.Hash != ScheduleHash(p.Arrivals) {
			t.Errorf("%s: %d offsets, hash %q", tc.reason, len(p.Arrivals), p.Test.Schedule.Hash)
		}
		if (p.Foreign != nil) != (tc.mode == ModeMixed) || (p.Test.Mixed != nil) != (tc.mode == ModeMixed) {
			t.Errorf("%s: foreign %+v", tc.reason, p.Foreign)
		}
		if o := p.Options(); len(o.Arrivals) != len(p.Arrivals) || o.SampleTimeout != p.SampleTimeout {
			t.Errorf("%s: options %+v", tc.reason, o)
		}
	}
	// The description keeps only what the mode uses.
	if p, _ := NewRunPlan(planInput(ModeFixedPeriod), base, nil); p.Test.Arrival.Lambda != 0 || p.Test.Arrival.Period == 0 || p.Test.Arrival.Bursts != 0 {
		t.Errorf("mode 1 description %+v", p.Test.Arrival)
	}
	if p, _ := NewRunPlan(planInput(ModePoisson), base, nil); p.Test.Arrival.Lambda != 50 || p.Test.Arrival.Period != 0 || p.Test.Arrival.N != 0 {
		t.Errorf("mode 2 description %+v", p.Test.Arrival)
	}
	// A peak plan keeps the bursts it placed, so the test records them.
	p, err := NewRunPlan(planInput(ModePeak), base, nil)
	if err != nil || len(p.Test.Arrival.BurstStarts) != 1 || p.SampleTimeout != time.Minute {
		t.Fatalf("peak plan %+v, %v", p, err)
	}
}

func TestPlanRejects(t *testing.T) {
	tests := []struct {
		reason string
		mutate func(*PlanInput)
		param  string
	}{
		{"Table 10 has six modes", func(in *PlanInput) { in.Arrival.Mode = 6 }, "arrival.mode"},
		{"mode 5 over mode 5", func(in *PlanInput) { in.Arrival.Mode = ModeMixed; in.UnderlyingMode = ModeMixed }, "underlying_mode"},
		{"foreign jobs need a rate", func(in *PlanInput) { in.Arrival.Mode = ModeMixed; in.Mixed.Lambda = 0 }, "mixed.lambda"},
		{"foreign jobs need samples", func(in *PlanInput) { in.Arrival.Mode = ModeMixed; in.Mixed.QSLSize = 0 }, "mixed.qsl_size"},
		{"unknown scenario", func(in *PlanInput) { in.Scenario = "T99-1" }, "scenario"},
		{"Table 10 has two threshold columns", func(in *PlanInput) { in.TimeoutClass = 3 }, "timeout_class"},
		{"loss threshold is a fraction (IN-79)", func(in *PlanInput) { in.LossThreshold = 2 }, "loss_threshold"},
		{"negative sample size", func(in *PlanInput) { in.SampleBytes = -1 }, "sample_bytes"},
		{"arrival parameters are validated (IN-47)", func(in *PlanInput) { in.Arrival.Lambda = 0 }, "lambda"},
	}
	for _, tc := range tests {
		in := planInput(ModePoisson)
		tc.mutate(&in)
		_, err := NewRunPlan(in, loadgen.DefaultSettings(), nil)
		if err == nil || !IsUsage(err) || !strings.Contains(err.Error(), tc.param) {
			t.Errorf("%s: err = %v, want a usage error naming %s", tc.reason, err, tc.param)
		}
	}
}

// ArrivalMode is written as the bare number of Table 10, so gbt_result.json
// keeps "mode": 2, and prints as its name.
func TestArrivalModeJSONAndString(t *testing.T) {
	tests := []struct {
		reason string
		mode   ArrivalMode
		json   string
		name   string
	}{
		{"Poisson is mode 2 (GB-7.4.2-T10-mode2)", ModePoisson, `{"mode":2,"timeout_ns":0,"seed":0}`, "poisson"},
		{"mixed is mode 5 (GB-7.4.2-T10-mode5)", ModeMixed, `{"mode":5,"timeout_ns":0,"seed":0}`, "mixed"},
		{"a number outside Table 10 still prints", 9, `{"mode":9,"timeout_ns":0,"seed":0}`, "mode(9)"},
	}
	for _, tc := range tests {
		b, err := json.Marshal(Arrival{Mode: tc.mode})
		if err != nil || string(b) != tc.json || tc.mode.String() != tc.name || tc.mode.Valid() != (tc.mode <= ModeMixed) {
			t.Errorf("%s: %s %v %q", tc.reason, b, err, tc.mode)
		}
		var back Arrival
		if err := json.Unmarshal(b, &back); err != nil || back.Mode != tc.mode {
			t.Errorf("%s: read back %v, %v", tc.reason, back.Mode, err)
		}
	}
}

// TestForeignSeed: one arrival seed fixes the foreign jobs' schedule too,
// and it is not the main jobs' schedule.
func TestForeignSeed(t *testing.T) {
	for _, s := range []uint64{0, 1, 42} {
		if f := ForeignSeed(s); f == s || f != ForeignSeed(s) {
			t.Errorf("ForeignSeed(%d) = %d", s, f)
		}
	}
}
