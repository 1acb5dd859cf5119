package benchmark

import (
	"context"
	"errors"
	"testing"
	"time"

	"aimeter/gbt"
)

// TestWarmupApplies: a warm-up is accepted where it means something (the
// fixed-concurrency mode, the Server scenario) and refused, naming
// Warmup, elsewhere: the other scenarios, a replay (its schedule is the
// trace's) and a sessions run (its turns are chained).
func TestWarmupApplies(t *testing.T) {
	w := Warmup{Requests: 10}
	rows := []struct {
		why     string
		plan    Plan
		refused bool
	}{
		{"Server: a Poisson warm-up at the target rate", Plan{Warmup: w, Settings: Settings{Scenario: "Server"}}, false},
		{"the fixed-concurrency mode", Plan{Warmup: w, Settings: Settings{Concurrency: 4}}, false},
		{"Offline issues everything at once", Plan{Warmup: w, Settings: Settings{Scenario: "Offline"}}, true},
		{"MultiStream neither", Plan{Warmup: w, Settings: Settings{Scenario: "MultiStream"}}, true},
		{"a replay's schedule is its trace's", Plan{Warmup: w, Replay: &Replay{}, Settings: Settings{Scenario: "Server"}}, true},
		{"a sessions run chains its turns", Plan{Warmup: w, Sessions: &Sessions{}, Settings: Settings{Scenario: "Server"}}, true},
		{"a GB/T test measures from its first job, even on the Server scenario", Plan{Warmup: w, GBT: &GBT{Input: gbt.PlanInput{Arrival: gbt.Arrival{Mode: gbt.ModePoisson, Lambda: 50, Duration: time.Second}}}}, true},
		{"no warm-up asked: Offline is fine", Plan{Settings: Settings{Scenario: "Offline"}}, false},
	}
	for _, row := range rows {
		r := &runner{plan: &row.plan, ctx: context.Background()}
		_, err := r.settings()
		var ue *UsageError
		switch {
		case row.refused && (!errors.As(err, &ue) || ue.Field != "Warmup"):
			t.Errorf("%s: error %v, want a usage error naming Warmup", row.why, err)
		case !row.refused && err != nil:
			t.Errorf("%s: %v, want it accepted", row.why, err)
		}
	}
}
