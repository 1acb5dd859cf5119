package session

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"aimeter/loadgen"
)

// TurnRecord is the outcome of one turn of a run: a sample's record with
// its session and turn index. Times are ns on the run's clock; the latency
// of a turn counts from ScheduledNs, the moment the user sent it (the
// previous answer's completion plus the think time).
type TurnRecord struct {
	Session, Turn int
	ScheduledNs   int64
	FirstTokenNs  int64 // ≤ ScheduledNs when no token time was recorded
	CompletedNs   int64
	OutputTokens  int64
	// OK is false for a failed or lost turn: it never counts as a
	// completion.
	OK bool
}

// TurnStats are the statistics of the turns with one index across the
// sessions: how a conversation's k-th turn fares as its history grows.
type TurnStats struct {
	Turn int `json:"turn"`
	// Count and Failed count the turns with this index and those failed.
	Count  int `json:"count"`
	Failed int `json:"failed"`
	// TTFT and E2E are nearest-rank percentiles over the successful turns
	// (the ⌈p·n⌉-th smallest).
	TTFTP50 time.Duration `json:"ttft_p50_ns"`
	TTFTP90 time.Duration `json:"ttft_p90_ns"`
	E2EP50  time.Duration `json:"e2e_p50_ns"`
	E2EP90  time.Duration `json:"e2e_p90_ns"`
}

// SessionStats are one session's figures.
type SessionStats struct {
	Session int `json:"session"`
	// Turns counts its turns run; Failed those that failed (a session ends
	// at its first failure).
	Turns  int `json:"turns"`
	Failed int `json:"failed"`
	// Duration is from its first turn's scheduled time to its last turn's
	// completion: think times included.
	Duration time.Duration `json:"duration_ns"`
	// OutputTokens and TurnTime sum its successful turns' output tokens and
	// times (completion − scheduled: think times excluded).
	OutputTokens int64         `json:"output_tokens"`
	TurnTime     time.Duration `json:"turn_time_ns"`
	// Interactivity is OutputTokens / TurnTime in tokens per second (0
	// without a successful turn).
	Interactivity float64 `json:"e2e_interactivity"`
}

// Metrics are a multi-turn run's per-turn and per-session figures.
type Metrics struct {
	PerTurn  []TurnStats    `json:"per_turn"`
	Sessions []SessionStats `json:"sessions"`
	// E2EInteractivity is MLPerf Endpoints' agentic metric over the run:
	// Σ output tokens of the successful turns / Σ their turn times, in
	// tokens per second.
	E2EInteractivity float64 `json:"e2e_interactivity"`
	// SessionInteractivityP50 and P10 are the median and the 10th
	// percentile (the slow side: 90 % of sessions did better) of the
	// sessions' own interactivity, over sessions with a successful turn.
	SessionInteractivityP50 float64 `json:"session_interactivity_p50"`
	SessionInteractivityP10 float64 `json:"session_interactivity_p10"`
}

// Compute computes the metrics of a run's turns, in any order. A turn
// whose session and index repeat, or whose times go backwards, is an
// error naming it.
func Compute(recs []TurnRecord) (Metrics, error) {
	var m Metrics
	type key struct{ s, t int }
	seen := map[key]bool{}
	bySession := map[int]*SessionStats{}
	first, last := map[int]int64{}, map[int]int64{}
	byTurn := map[int]*[2][]int64{} // ttft, e2e
	turnStats := map[int]*TurnStats{}
	var tokens, turnTime int64
	for _, r := range recs {
		k := key{r.Session, r.Turn}
		switch {
		case r.Session < 0 || r.Turn < 0:
			return m, fmt.Errorf("session %d turn %d: negative index", r.Session, r.Turn)
		case seen[k]:
			return m, fmt.Errorf("session %d turn %d: recorded twice", r.Session, r.Turn)
		case r.OK && r.CompletedNs < r.ScheduledNs:
			return m, fmt.Errorf("session %d turn %d: completed at %d ns, before its schedule %d ns", r.Session, r.Turn, r.CompletedNs, r.ScheduledNs)
		}
		seen[k] = true
		ss := bySession[r.Session]
		if ss == nil {
			ss = &SessionStats{Session: r.Session}
			bySession[r.Session] = ss
			first[r.Session] = r.ScheduledNs
		}
		first[r.Session] = min(first[r.Session], r.ScheduledNs)
		ts := turnStats[r.Turn]
		if ts == nil {
			ts = &TurnStats{Turn: r.Turn}
			turnStats[r.Turn], byTurn[r.Turn] = ts, &[2][]int64{}
		}
		ss.Turns++
		ts.Count++
		if !r.OK {
			ss.Failed++
			ts.Failed++
			continue
		}
		last[r.Session] = max(last[r.Session], r.CompletedNs)
		d := r.CompletedNs - r.ScheduledNs
		ss.OutputTokens += r.OutputTokens
		ss.TurnTime += time.Duration(d)
		tokens += r.OutputTokens
		turnTime += d
		bt := byTurn[r.Turn]
		if r.FirstTokenNs > r.ScheduledNs {
			bt[0] = append(bt[0], r.FirstTokenNs-r.ScheduledNs)
		}
		bt[1] = append(bt[1], d)
	}
	for _, t := range slices.Sorted(maps.Keys(turnStats)) {
		ts, bt := turnStats[t], byTurn[t]
		ts.TTFTP50, ts.TTFTP90 = rank(bt[0], 50), rank(bt[0], 90)
		ts.E2EP50, ts.E2EP90 = rank(bt[1], 50), rank(bt[1], 90)
		m.PerTurn = append(m.PerTurn, *ts)
	}
	var inter []float64
	for _, s := range slices.Sorted(maps.Keys(bySession)) {
		ss := bySession[s]
		if l, ok := last[s]; ok {
			ss.Duration = time.Duration(l - first[s])
		}
		if ss.TurnTime > 0 {
			ss.Interactivity = float64(ss.OutputTokens) / ss.TurnTime.Seconds()
			inter = append(inter, ss.Interactivity)
		}
		m.Sessions = append(m.Sessions, *ss)
	}
	if turnTime > 0 {
		m.E2EInteractivity = float64(tokens) / (float64(turnTime) / 1e9)
	}
	if len(inter) > 0 {
		slices.Sort(inter)
		m.SessionInteractivityP50 = inter[rankIndex(len(inter), 50)]
		m.SessionInteractivityP10 = inter[rankIndex(len(inter), 10)]
	}
	return m, nil
}

// rankIndex is the index of the ⌈n·p/100⌉-th smallest of n.
func rankIndex(n, p int) int { return max((n*p+99)/100, 1) - 1 }

// rank is the nearest-rank percentile p of v (0 for none); it sorts v.
func rank(v []int64, p int) time.Duration {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return time.Duration(v[rankIndex(len(v), p)])
}

// TurnRecords gives the records of a sessions run their sessions and turn
// indices, from each session's number of turns
// (bundle.SessionsInput.TurnsPerSession): sample k is turn t of session s
// where the turns of sessions 0…s−1 come first. A sample beyond the turns
// is an error.
func TurnRecords(recs iter.Seq[loadgen.Record], turnsPerSession []int) ([]TurnRecord, error) {
	first := make([]int, len(turnsPerSession))
	total := 0
	for s, n := range turnsPerSession {
		first[s] = total
		total += n
	}
	var out []TurnRecord
	for rec := range recs {
		i := int(rec.SampleIndex)
		if i >= total {
			return nil, fmt.Errorf("session: sample %d is beyond the %d turns of the sessions", i, total)
		}
		s, found := slices.BinarySearch(first, i)
		if !found {
			s--
		}
		for s+1 < len(first) && first[s+1] == i { // sessions of 0 turns share a start
			s++
		}
		out = append(out, TurnRecord{Session: s, Turn: i - first[s], ScheduledNs: rec.ScheduledNs,
			FirstTokenNs: rec.FirstTokenNs, CompletedNs: rec.CompletedNs, OutputTokens: rec.Tokens, OK: rec.Status == loadgen.StatusOK})
	}
	return out, nil
}
