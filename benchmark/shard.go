package benchmark

import (
	"context"
	"errors"
	"fmt"
	"time"

	"aimeter/clocksync"
	"aimeter/loadgen"
	"aimeter/shard"
	"aimeter/verdict"
)

// Shard runs a plan as one shard of a test split over several load
// generators, each generating the whole seeded schedule and issuing its
// part (loadgen.Shard), and starts the shards together (docs/sharding.md).
// Every count of the plan is the whole test's: a shard derives its part.
type Shard struct {
	// Index is the shard's number from 0, as a Kubernetes Indexed Job's
	// JOB_COMPLETION_INDEX; Count is the number of shards. Count 0 or 1
	// runs the whole test (with a common start only, if StartAt is set).
	Index, Count int
	// StartAt, when not zero, is when every shard starts issuing, on the
	// reference clock (ClockRef's; this host's when ClockRef is ""). When
	// the run starts it must be in the future and at most MaxStartAhead
	// away. The zero value starts at once.
	StartAt time.Time
	// StartTolerance is how late after StartAt a shard may start issuing;
	// later, it refuses to run rather than shift the schedule. 0 means
	// loadgen.DefaultStartTolerance (100 ms).
	StartTolerance time.Duration
	// ClockRef is the URL of the reference clock, a server of
	// clocksync.Path (the tester's service, `aimeter serve`): the shard
	// measures its clock's offset against it before the run and records
	// it. "" takes this host's clock as the reference, unmeasured.
	ClockRef string

	// Measure, if set, measures the offset in place of clocksync.Measure
	// (a test's injected clock); nil measures ClockRef over HTTP.
	Measure func(ctx context.Context, ref string) (clocksync.Measurement, error)
	// Now is this host's clock; nil means time.Now.
	Now func() time.Time
}

// MaxStartAhead is how far ahead a common start may be.
const MaxStartAhead = 24 * time.Hour

func (s *Shard) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Shard) loadgen() loadgen.Shard { return loadgen.Shard{Index: s.Index, Count: s.Count} }

// validate checks the shard before anything runs.
func (s *Shard) validate() error {
	if err := s.loadgen().Validate(); err != nil {
		field := "Shard.Index"
		if s.Count < 0 {
			field = "Shard.Count"
		}
		return usage(field, "%s: shard %d of %d: the index runs from 0 to the number of shards less one", field, s.Index, s.Count)
	}
	if s.StartTolerance < 0 {
		return usage("Shard.StartTolerance", "Shard.StartTolerance %v: must be ≥ 0 (0 = %v)", s.StartTolerance, loadgen.DefaultStartTolerance)
	}
	if s.ClockRef != "" {
		if _, err := clocksync.Endpoint(s.ClockRef); err != nil {
			return usage("Shard.ClockRef", "Shard.ClockRef: %v", err)
		}
	}
	return nil
}

// validateWith checks the shard against the rest of the plan p, as far as
// the plan alone tells (loadgen refuses the rest, after the cascade).
func (s *Shard) validateWith(p *Plan) error {
	if err := s.validate(); err != nil {
		return err
	}
	if c := p.Settings.Concurrency; s.Count > 1 && c > 0 && c < uint64(s.Count) {
		return usage("Shard.Count", "Shard.Count: %d shards of a concurrency of %d (Settings.Concurrency): the concurrency is split over the shards, and each needs at least 1 query in flight", s.Count, c)
	}
	if s.Count > 1 && p.Settings.Mode == "find-peak" {
		return usage("Shard.Count", "Shard.Count: %d shards of a find-peak search: a search chooses each probe's rate from the last probe's result, which one shard does not have; run it unsharded", s.Count)
	}
	if s.StartTolerance != 0 && s.StartAt.IsZero() {
		return usage("Shard.StartTolerance", "Shard.StartTolerance applies only to a common start (Shard.StartAt)")
	}
	return nil
}

// shardStart is a shard's clock and start, measured before the run.
type shardStart struct {
	clock *clocksync.Measurement
	// local is StartAt on this host's clock; zero for no common start.
	local time.Time
}

// prepareShard measures the clock against the reference and checks the
// start: in the future, and not more than MaxStartAhead away, on the
// reference's clock. It runs before anything is loaded.
func (r *runner) prepareShard() error {
	s := r.plan.Shard
	if s == nil {
		return nil
	}
	var st shardStart
	var offset time.Duration
	if s.ClockRef != "" {
		measure := s.Measure
		if measure == nil {
			measure = func(ctx context.Context, ref string) (clocksync.Measurement, error) {
				return clocksync.Measure(ctx, ref, clocksync.Options{Now: s.Now})
			}
		}
		m, err := measure(r.ctx, s.ClockRef)
		if err != nil {
			if r.ctx.Err() != nil {
				return fmt.Errorf("%w: %v", loadgen.ErrInterrupted, err)
			}
			return usage("Shard.ClockRef", "Shard.ClockRef: %v", err)
		}
		st.clock, offset = &m, m.Offset
		r.notify(Info, "clock offset against %s: %v ± %v", m.URL, m.Offset, m.Uncertainty)
	}
	if !s.StartAt.IsZero() {
		now := s.now().Add(offset) // on the reference's clock
		switch ahead := s.StartAt.Sub(now); {
		case ahead <= 0:
			return usage("Shard.StartAt", "Shard.StartAt %s is %v in the past (now %s on the reference clock): give every shard a start in the future",
				s.StartAt.UTC().Format(time.RFC3339Nano), (-ahead).Round(time.Millisecond), now.UTC().Format(time.RFC3339Nano))
		case ahead > MaxStartAhead:
			return usage("Shard.StartAt", "Shard.StartAt %s is %v ahead, more than %v: a start that far is a mistake",
				s.StartAt.UTC().Format(time.RFC3339Nano), ahead.Round(time.Second), MaxStartAhead)
		}
		st.local = s.StartAt.Add(-offset)
	}
	r.shardStart = &st
	return nil
}

// shardOptions sets the shard and the start of the measured run.
func (r *runner) shardOptions(opts *loadgen.Options) {
	s := r.plan.Shard
	if s == nil || r.shardStart == nil {
		return
	}
	opts.Shard = s.loadgen()
	opts.StartAt, opts.StartTolerance = r.shardStart.local, s.StartTolerance
}

// missedStart turns loadgen's refusal to start late into the run's error:
// nothing was issued and nothing is written.
func missedStart(err error) error {
	if errors.Is(err, loadgen.ErrMissedStart) {
		return &UsageError{Field: "Shard.StartTolerance", Err: err}
	}
	return nil
}

// shardRecord is the shard.json of the run; nil for a whole test without
// a common start.
func (r *runner) shardRecord(res *loadgen.Result) *shard.Record {
	s := r.plan.Shard
	if s == nil || res.Shard == nil || r.shardStart == nil {
		return nil
	}
	sh := s.loadgen()
	rec := &shard.Record{Index: s.Index, Count: max(s.Count, 1), Rule: shard.RuleQueryModN,
		ScheduleSHA256: res.Shard.ScheduleSHA256, PassSchedules: res.Shard.Passes,
		MinQueryCount: sh.ShardSplit(res.Effective.MinQueryCount), MaxQueryCount: sh.ShardSplit(res.Effective.MaxQueryCount),
		StartLateNs: int64(res.Shard.StartLate), Clock: r.shardStart.clock}
	if res.Effective.Scenario == loadgen.Offline {
		rec.Rule = shard.RuleSampleBlocks
	}
	if c := res.Requested.Concurrency; c > 0 {
		rec.Concurrency = sh.ShardSplit(c)
	}
	if !s.StartAt.IsZero() {
		at, local := s.StartAt, r.shardStart.local
		rec.StartAt, rec.LocalStartAt = &at, &local
		rec.StartToleranceNs = int64(s.StartTolerance)
		if rec.StartToleranceNs == 0 {
			rec.StartToleranceNs = int64(loadgen.DefaultStartTolerance)
		}
	}
	return rec
}

// PartialNote is what the console says of a shard's bundle (verdict.PartialNote).
func PartialNote(rec *shard.Record) string { return verdict.PartialNote(rec) }
