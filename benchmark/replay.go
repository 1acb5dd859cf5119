package benchmark

import (
	"fmt"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/dataset/prompts"
	"aimeter/loadgen"
	"aimeter/mlperfconf"
	"aimeter/sut"
	"aimeter/workload/trace"
)

// Replay is a trace replay (Plan.Replay): the run's schedule and prompts
// come from a trace file instead of LoadGen's generator. The run is a
// Server performance run with explicit arrivals: request k of the trace
// is sample k, scheduled at its (scaled) trace time, with its own input
// length and max_tokens; its latency counts from that time, never from
// the send. Only a network SUT speaking the OpenAI API (SUT.Kind openai,
// or a dispatcher of OpenAI nodes) can replay: the trace's lengths are
// prompt and output tokens.
type Replay = bundle.ReplayInput

// replayed is the loaded trace of a replay run.
type replayed struct {
	in    bundle.ReplayInput
	sched *trace.Schedule
	set   *prompts.Set
}

// loadReplay reads, checks and schedules the plan's trace, and builds its
// prompts, before anything runs: a bad trace is a usage error naming its
// line and field.
func (r *runner) loadReplay() error {
	p := r.plan
	in := p.Replay
	if in == nil {
		return r.loadSessions()
	}
	switch {
	case p.Custom != nil:
		return usage("Replay", "Replay: a replay sends its trace's prompts through the OpenAI client; it cannot drive a Custom SUT")
	case p.SUT.Backend() != string(sut.OpenAI):
		return usage("Replay", "Replay with SUT.Kind %s: a trace's lengths are prompt and output tokens; replay against an OpenAI-compatible server (SUT.Kind openai, or SUT.Kind dispatch with openai nodes)", p.SUT.KindOrNull())
	case p.GBT != nil:
		return usage("Replay", "Replay cannot be combined with GBT: the trace is the arrival schedule")
	case p.Settings.Concurrency > 0:
		return usage("Replay", "Replay cannot be combined with Settings.Concurrency: the trace sets when each request goes out")
	case p.Settings.Scenario != "" && p.Settings.Scenario != loadgen.Server.String():
		return usage("Replay", "Replay with Settings.Scenario %s: a replay runs on the Server scenario's issuing (explicit arrivals)", p.Settings.Scenario)
	case p.Settings.Mode != "" && p.Settings.Mode != "performance":
		return usage("Replay", "Replay with Settings.Mode %s: a replay is a performance run", p.Settings.Mode)
	case p.SUT.OpenAI != nil && p.SUT.OpenAI.Prompts != "":
		return usage("Replay", "Replay with SUT.OpenAI.Prompts: the prompts are built from the trace (its lengths and hash ids)")
	case p.SUT.PerformanceSampleCount != 0:
		return usage("Replay", "Replay with SUT.PerformanceSampleCount: every request of the trace is a sample of its own, all loaded")
	}
	sum, err := pinnedFile("Replay.Path", in.Path, in.SHA256)
	if err != nil {
		return err
	}
	tr, err := trace.Read(in.Path)
	if err != nil {
		return &UsageError{Field: "Replay.Path", Err: err}
	}
	sched, err := tr.Schedule(trace.ScheduleOptions{Speedup: in.Speedup, MaxRequests: in.MaxRequests, MaxDuration: in.MaxDuration})
	if err != nil {
		return &UsageError{Field: "Replay.Path", Err: err}
	}
	tok, err := r.tokenizer()
	if err != nil {
		return err
	}
	set, err := sched.Prompts(tr.Name, trace.PromptOptions{Seed: in.Seed, Tokenizer: tok})
	if err != nil {
		return &UsageError{Field: "Replay.Path", Err: err}
	}
	rec := *in
	rec.SHA256, rec.Format, rec.Requests, rec.Truncated = sum, string(tr.Format), len(sched.Arrivals), sched.Truncated
	r.replay = &replayed{in: rec, sched: sched, set: set}
	if sched.Truncated != "" {
		r.notify(Note, "replaying %s of %s", sched.Truncated, tr.Name)
	}
	return nil
}

// replaySettings sizes the Server settings to the schedule: the run is
// VALID only when it issued every request of it (min_query_count) over its
// whole span (min_duration), and target_qps is the trace's mean rate (what
// the logs report as the scheduled rate).
func (r *runner) replaySettings(s *loadgen.Settings, src mlperfconf.Sources) {
	if r.sessions != nil {
		by := "the sessions' turns"
		s.MinQueryCount, s.MinDurationMs = uint64(len(r.sessions.chains.After)), 0
		src.Impose("min_query_count", by)
		src.Impose("min_duration", by)
	}
	if r.replay == nil {
		return
	}
	by := "the replayed trace " + r.replay.in.Path
	sched := r.replay.sched
	s.MinQueryCount = uint64(len(sched.Arrivals))
	s.MinDurationMs = uint64(sched.Duration().Milliseconds())
	src.Impose("min_query_count", by)
	src.Impose("min_duration", by)
	if rate := sched.RatePerSecond(); rate >= loadgen.MinTargetQPS {
		s.ServerTargetQPS = rate
		src.Impose("target_qps", by)
	}
}

// replayOptions sets the run's explicit arrivals and samples.
func (r *runner) replayOptions(opts *loadgen.Options) {
	if r.replay != nil {
		opts.Arrivals, opts.ArrivalSamples = r.replay.sched.Arrivals, r.replay.sched.Samples()
	}
	if r.sessions != nil {
		opts.Chains = r.sessions.chains
	}
}

// replayPrompts is the prompt set of a replay run, or nil.
func (r *runner) replayPrompts() *prompts.Set {
	if r.sessions != nil {
		return r.sessions.set
	}
	if r.replay == nil {
		return nil
	}
	return r.replay.set
}

// replayOutcome adds the replay's send lateness and the sessions' metrics
// to the outcome of the run just measured.
func (r *runner) replayOutcome(out *Outcome) {
	if err := workloadOutcome(out); err != nil {
		r.notify(Warning, "%v", err)
	}
}

// workloadOutcome fills Outcome.Lateness (a trace replay) and
// Outcome.Sessions (a sessions run) from the bundle alone, its records and
// invocation.json, so that `aimeter report` gives them again.
func workloadOutcome(out *Outcome) error {
	b := out.Bundle
	if b == nil || invocation.Of(b) == nil || out.Result == nil {
		return nil
	}
	if invocation.Of(b).Replay != nil {
		// The summary result.json and the report give, of the replay's
		// one pass, sorted once (derived.Set.SendLateness); from every
		// record only for a run without a reported pass.
		if out.Derived != nil {
			out.Lateness = out.Derived.SendLateness()
		}
		if out.Lateness == nil {
			l := trace.Lateness(out.Result.Records(), trace.DefaultLateAfter)
			out.Lateness = &l
		}
	}
	if ss := invocation.Of(b).Sessions; ss != nil {
		m, err := SessionMetrics(out.Result, ss.TurnsPerSession)
		if err != nil {
			return fmt.Errorf("the sessions' metrics: %w", err)
		}
		out.Sessions = m
	}
	return nil
}
