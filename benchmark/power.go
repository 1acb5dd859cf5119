package benchmark

import (
	"context"
	"time"

	"aimeter/loadgen"
	"aimeter/telemetry"
)

// startPower starts sampling the plan's power sources; nil without any.
func (r *runner) startPower() *telemetry.Sampler {
	if len(r.plan.Power) == 0 {
		return nil
	}
	return telemetry.Start(time.Now(), r.plan.Power, r.plan.PowerOptions)
}

// stopPower stops s and returns its log on the clock of res (ns from its
// start; nil when res is), warning about reads that gave nothing. It runs after an
// interrupted run too: the windowed sources are asked without the run's
// cancellation, each within its own timeout.
func (r *runner) stopPower(s *telemetry.Sampler, res *loadgen.Result) *telemetry.Log {
	if s == nil {
		return nil
	}
	if res == nil { // loadgen refused the settings: nothing to keep
		s.Stop(context.WithoutCancel(r.ctx))
		return nil
	}
	// The sampler started before the warm-up: the log counts from the
	// run's start, the clock of the records and of a replay's t_ns.
	if !res.StartTime.IsZero() {
		s.SetOrigin(res.StartTime)
	}
	l, err := s.Stop(context.WithoutCancel(r.ctx))
	if err != nil {
		r.notify(Warning, "power: %v", err)
		return nil
	}
	if !res.StartTime.IsZero() {
		l.Rebase(res.StartTime)
	}
	if n := len(l.Gaps); n > 0 {
		g := l.Gaps[0]
		r.notify(Warning, "power: %d reads gave nothing (the first, of %s: %s); telemetry.json lists them and result.json's coverage counts them", n, g.Source, g.Reason)
	}
	return l
}
