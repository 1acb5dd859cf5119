package collect

import (
	"context"
	"time"

	"aimeter/train"
)

// WaitOptions configure Server.Wait. The zero value waits only for the
// context.
type WaitOptions struct {
	// Ranks is the number of ranks expected: the wait ends once Ranks
	// ranks have posted a train_end. Zero means no fixed number (see
	// UntilRanksDone).
	Ranks int
	// UntilRanksDone, with Ranks zero, ends the wait once every rank seen
	// (at least one) has posted a train_end; false with Ranks zero does not
	// wait for the ranks at all. It has no effect where Ranks > 0.
	UntilRanksDone bool
	// Until ends the wait this long after it began, done or not; zero
	// means no limit.
	Until time.Duration
	// Linger is how long, once the ranks are done, the wait goes on until
	// no event has come for that long, so that events posted after a
	// train_end (a late batch from another rank, a final power reading)
	// are kept; zero ends it at once.
	Linger time.Duration
	// Poll is how often the event count is looked at; zero means 100 ms.
	Poll time.Duration
}

// WaitEnd says why Server.Wait returned.
type WaitEnd int

// The ends of a wait.
const (
	// WaitRanksDone: the expected ranks posted train_end, and then no
	// event came for WaitOptions.Linger.
	WaitRanksDone WaitEnd = iota + 1
	// WaitUntil: WaitOptions.Until passed.
	WaitUntil
	// WaitCancelled: the context was done; context.Cause tells why.
	WaitCancelled
)

// WaitResult is what Server.Wait saw.
type WaitResult struct {
	// End says why the wait ended.
	End WaitEnd
	// RanksDone reports whether, when the wait ended, the expected ranks
	// had posted a train_end: WaitOptions.Ranks of them, or with Ranks
	// zero every rank seen (at least one).
	RanksDone bool
}

// Wait blocks until the job whose ranks post to s is done, opts.Until
// passes, or ctx is done, whichever comes first (see WaitOptions).
//
// Checking for train_end copies every stored event, so Wait checks only
// after new events came, and at most every 2 s once there are more than
// 100,000 of them.
func (s *Server) Wait(ctx context.Context, opts WaitOptions) WaitResult {
	poll := opts.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	waitRanks := opts.Ranks > 0 || opts.UntilRanksDone
	var deadline <-chan time.Time
	if opts.Until > 0 {
		t := time.NewTimer(opts.Until)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var doneAt time.Time
	lastCount := int64(-1)
	lastChange := time.Now()
	var lastCheck time.Time
	unchecked := false // events came that were not checked for train_end yet
	for {
		select {
		case <-ctx.Done():
			return WaitResult{End: WaitCancelled, RanksDone: !doneAt.IsZero() || ranksDone(s.Events(), opts.Ranks)}
		case <-deadline:
			return WaitResult{End: WaitUntil, RanksDone: !doneAt.IsZero() || ranksDone(s.Events(), opts.Ranks)}
		case <-tick.C:
			now := time.Now()
			if c := s.Status().Events; c != lastCount {
				lastCount, lastChange, unchecked = c, now, true
			}
			if doneAt.IsZero() && unchecked && waitRanks && now.Sub(lastCheck) >= checkEvery(lastCount) {
				lastCheck, unchecked = now, false
				if ranksDone(s.Events(), opts.Ranks) {
					doneAt = now
				}
			}
			if !doneAt.IsZero() && now.Sub(lastChange) >= opts.Linger {
				return WaitResult{End: WaitRanksDone, RanksDone: true}
			}
		}
	}
}

// checkEvery is how often the events are scanned for train_end when there
// are n of them: each scan copies them all.
func checkEvery(n int64) time.Duration {
	if n > 100_000 {
		return 2 * time.Second
	}
	return 0
}

// ranksDone reports whether want ranks (every rank seen, at least one,
// when want is 0) have posted a train_end.
func ranksDone(events []train.Event, want int) bool {
	type rk struct {
		node string
		rank int
	}
	seen, ended := map[rk]bool{}, map[rk]bool{}
	for _, e := range events {
		k := rk{e.Node, e.Rank}
		seen[k] = true
		if e.Kind == train.TrainEnd {
			ended[k] = true
		}
	}
	if want > 0 {
		return len(ended) >= want
	}
	return len(seen) > 0 && len(ended) == len(seen)
}
