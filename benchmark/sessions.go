package benchmark

import (
	"fmt"
	"slices"

	"aimeter/bundle"
	"aimeter/dataset/prompts"
	"aimeter/loadgen"
	"aimeter/sut"
	"aimeter/sut/openai"
	"aimeter/workload/session"
)

// Sessions is a multi-turn run (Plan.Sessions): chat conversations, read
// from a ShareGPT file or generated, whose turns are the run's samples. A
// session's first turn goes out at its start (session i at i·Interval);
// each later turn Think after the previous answer completed, carrying the
// whole history so far: with History HistoryServer the server's own
// answers to the earlier turns, as a chat client sends them; with
// HistoryDataset (or "") the data set's reference answers, so that the
// prompts are the same from run to run and server to server. Each turn's
// latency counts from that scheduled time. A failed turn ends its session.
type Sessions = bundle.SessionsInput

// sessionRun is the loaded workload of a sessions run.
type sessionRun struct {
	in     bundle.SessionsInput
	set    *prompts.Set
	chains *loadgen.Chains
	// history carries the server's answers into later turns; nil when
	// the history holds the data set's answers.
	history *openai.History
}

// loadSessions reads or generates the conversations and builds their
// prompts and chains, before anything runs.
func (r *runner) loadSessions() error {
	p := r.plan
	in := p.Sessions
	if in == nil {
		return nil
	}
	switch {
	case p.Replay != nil:
		return usage("Sessions", "Sessions with Replay: a run replays a trace or runs sessions, not both")
	case p.Custom != nil:
		return usage("Sessions", "Sessions: sessions send chat messages through the OpenAI client; they cannot drive a Custom SUT")
	case p.SUT.Backend() != string(sut.OpenAI):
		return usage("Sessions", "Sessions with SUT.Kind %s: they are chat conversations; run them against an OpenAI-compatible server (SUT.Kind openai, or SUT.Kind dispatch with openai nodes)", p.SUT.KindOrNull())
	case p.GBT != nil || p.Settings.Concurrency > 0:
		return usage("Sessions", "Sessions set their own load: no GBT or Settings.Concurrency")
	case p.Settings.Scenario != "" && p.Settings.Scenario != loadgen.Server.String(), p.Settings.Mode != "" && p.Settings.Mode != "performance":
		return usage("Sessions", "Sessions are a performance run on the Server scenario's issuing: no Settings.Scenario or Settings.Mode")
	case p.SUT.OpenAI != nil && p.SUT.OpenAI.Prompts != "", p.SUT.PerformanceSampleCount != 0:
		return usage("Sessions", "Sessions: the prompts are the sessions' turns: no SUT.OpenAI.Prompts or SUT.PerformanceSampleCount")
	case in.Interval < 0 || in.Think < 0:
		return usage("Sessions", "Sessions.Think and Sessions.Interval: the think time and the interval between sessions must be ≥ 0")
	}
	rec := *in
	var set *session.Set
	var err error
	if in.ShareGPT != "" {
		sum, err := pinnedFile("Sessions.ShareGPT", in.ShareGPT, in.SHA256)
		if err != nil {
			return err
		}
		rec.SHA256 = sum
		set, err = session.ReadShareGPT(in.ShareGPT, session.ShareGPTOptions{Think: in.Think, MaxSessions: in.Sessions})
		if err != nil {
			return &UsageError{Field: "Sessions.ShareGPT", Err: err}
		}
	} else {
		tok, err := r.tokenizer()
		if err != nil {
			return err
		}
		set, err = session.Generate(session.GenerateOptions{Sessions: in.Sessions, MinTurns: in.MinTurns, MaxTurns: in.MaxTurns,
			UserWords: in.UserWords, OutputTokens: in.AnswerTokens, Think: in.Think, Seed: in.Seed, Tokenizer: tok})
		if err != nil {
			return &UsageError{Field: "Sessions", Err: err}
		}
	}
	run := &sessionRun{chains: &loadgen.Chains{}}
	var ps []prompts.Prompt
	rec.TurnsPerSession = nil
	for i := range set.Conversations {
		c := &set.Conversations[i]
		rec.TurnsPerSession = append(rec.TurnsPerSession, len(c.Turns))
		cl := session.NewClient(c)
		for k := range c.Turns {
			_, msgs, mt, think, ok := cl.Next()
			if !ok {
				return fmt.Errorf("sessions: conversation %d turn %d: the client refused the turn", i, k)
			}
			ps = append(ps, prompts.Prompt{Messages: slices.Clone(msgs), MaxTokens: mt})
			after, delay := int32(len(ps)-2), int64(think)
			if k == 0 {
				after, delay = -1, int64(i)*int64(in.Interval)
			}
			run.chains.After = append(run.chains.After, after)
			run.chains.Delay = append(run.chains.Delay, delay)
			run.chains.Samples = append(run.chains.Samples, uint64(len(ps)-1))
			cl.Answer(c.Turns[k].Answer)
		}
	}
	if run.set, err = prompts.New(set.Name, ps); err != nil {
		return &UsageError{Field: "Sessions", Err: err}
	}
	switch rec.History {
	case bundle.HistoryServer:
		run.history = openai.NewHistory(run.chains.After)
	case "", bundle.HistoryDataset:
	default:
		return usage("Sessions.History", "Sessions.History %q: want server (the server's own answers) or dataset (the data set's)", rec.History)
	}
	run.in = rec
	r.sessions = run
	return nil
}

// SessionMetrics computes the per-turn and per-session metrics of a
// sessions run from its records and each session's number of turns
// (bundle.SessionsInput.TurnsPerSession): sample k is turn t of session s
// where the turns of sessions 0…s−1 come first.
func SessionMetrics(res *loadgen.Result, turnsPerSession []int) (*session.Metrics, error) {
	recs, err := session.TurnRecords(res.Records(), turnsPerSession)
	if err != nil {
		return nil, err
	}
	m, err := session.Compute(recs)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// sessionHistory is the History of a sessions run whose turns carry the
// server's answers, shared by all its endpoints; nil otherwise.
func (r *runner) sessionHistory() *openai.History {
	if r.sessions == nil {
		return nil
	}
	return r.sessions.history
}
