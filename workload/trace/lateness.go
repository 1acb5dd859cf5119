package trace

import (
	"fmt"
	"iter"
	"time"

	"aimeter/loadgen"
	"aimeter/stats"
)

// DefaultLateAfter is the send lateness beyond which a request counts as
// late: 1 ms, the resolution of a trace's timestamps.
const DefaultLateAfter = time.Millisecond

// LatenessSummary says how closely a replay kept its schedule: the send
// lateness of a request is its issue time minus its scheduled (trace)
// time. Its latency counts from the scheduled time all the same, so a late
// send is never hidden; this summary says how much of it was the client's.
type LatenessSummary struct {
	// Count is the number of requests sent.
	Count uint64 `json:"count"`
	// Late counts those sent more than LateAfter after their time.
	Late      uint64        `json:"late"`
	LateAfter time.Duration `json:"late_after_ns"`
	// P50, P99 and Max are send-lateness percentiles (nearest rank: the
	// ⌈p·n⌉-th smallest) and the largest.
	P50 time.Duration `json:"p50_ns"`
	P99 time.Duration `json:"p99_ns"`
	Max time.Duration `json:"max_ns"`
}

// String is a one-line summary for people.
func (l LatenessSummary) String() string {
	return fmt.Sprintf("send lateness over %d requests: p50 %v, p99 %v, max %v; %d later than %v", l.Count, l.P50, l.P99, l.Max, l.Late, l.LateAfter)
}

// Text is the summary as aimeter's console prints it for a run on a
// schedule, the percentiles rounded to the microsecond from a millisecond
// up (below it, to the nanosecond): "Send lateness (issued − scheduled)
// p50 …, p99 …, max …; N of M later than …".
func (l LatenessSummary) Text() string {
	return fmt.Sprintf("Send lateness (issued − scheduled) p50 %v, p99 %v, max %v; %d of %d later than %v",
		RoundLateness(l.P50), RoundLateness(l.P99), RoundLateness(l.Max), l.Late, l.Count, l.LateAfter)
}

// RoundLateness rounds a lateness d for people: to the microsecond from a
// millisecond up (the console's and the schedule warning's figures).
func RoundLateness(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d
}

// Lateness summarises the send lateness of recs (a run's records, e.g.
// loadgen.Result.Records); lateAfter ≤ 0 means DefaultLateAfter.
func Lateness(recs iter.Seq[loadgen.Record], lateAfter time.Duration) LatenessSummary {
	if lateAfter <= 0 {
		lateAfter = DefaultLateAfter
	}
	var d []int64
	for r := range recs {
		d = append(d, r.IssuedNs-r.ScheduledNs)
	}
	return LatenessOf(d, lateAfter)
}

// LatenessOf is Lateness of the delays d (issued − scheduled time of each
// record; a negative one counts as 0), which it sorts in place: for a
// caller that holds them in a slice of the right size already. It reads
// three ranks of them (stats.SelectRanks), without sorting them all.
func LatenessOf(d []int64, lateAfter time.Duration) LatenessSummary {
	if lateAfter <= 0 {
		lateAfter = DefaultLateAfter
	}
	for i, v := range d {
		d[i] = max(v, 0)
	}
	s := LatenessSummary{Count: uint64(len(d)), LateAfter: lateAfter}
	if len(d) == 0 {
		return s
	}
	for _, v := range d {
		if v > int64(lateAfter) {
			s.Late++
		}
	}
	// rank is the index of the ⌈n·num/den⌉-th smallest, in integers.
	rank := func(num, den int) int {
		k := (len(d)*num + den - 1) / den
		return max(k, 1) - 1
	}
	r50, r99 := rank(50, 100), rank(99, 100)
	stats.SelectRanks(d, []int{r50, r99, len(d) - 1})
	s.P50, s.P99, s.Max = time.Duration(d[r50]), time.Duration(d[r99]), time.Duration(d[len(d)-1])
	return s
}
