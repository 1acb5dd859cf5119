package steady

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"aimeter/loadgen"
)

// DefaultInFlightRatio is the fraction of the peak in-flight count that
// InFlight's window must hold: the value of SGLang's usage example
// (`--steady-state-concurrency-ratio 0.8`), which has no default.
const DefaultInFlightRatio = 0.8

// InFlightResult is the outcome of InFlight.
type InFlightResult struct {
	// Ratio is the fraction asked for; Peak the most requests ever in
	// flight; Threshold = max(1, ⌈Peak·Ratio⌉).
	Ratio     float64
	Peak      int
	Threshold int
	// StartNs and EndNs are the window on the pass's clock.
	StartNs, EndNs int64
	// Samples are the seq ids of the samples sent within the window
	// [StartNs, EndNs).
	Samples []uint64
}

// InFlight finds the steady-state window SGLang's bench_serving reports
// (python/sglang/benchmark/steady_state.py): the longest continuous
// interval in which at least max(1, ⌈peak × ratio⌉) requests were in
// flight, a request being in flight from its send (IssuedNs) to its
// completion; the first such interval wins a tie. As SGLang does, only
// successful requests with a positive duration count. An error when ratio
// is not in (0, 1] or no request succeeded. It is InFlightTable of the
// records.
func InFlight(recs []loadgen.Record, ratio float64) (InFlightResult, error) {
	return InFlightTable(tableOf(recs), ratio)
}

// InFlightTable is InFlight over the records of t. It holds the send and
// the completion times of the requests that count, sorted (16 bytes a
// request), and the seq ids of the window's samples.
func InFlightTable(t loadgen.RecordAccess, ratio float64) (InFlightResult, error) {
	if !(ratio > 0 && ratio <= 1) {
		return InFlightResult{}, fmt.Errorf("steady: in-flight ratio %v: want a fraction in (0, 1]", ratio)
	}
	counted := func(c *loadgen.RecordColumns, k int) bool {
		return c.Status[k] == loadgen.StatusOK && c.CompletedNs[k] != loadgen.NoTime && c.CompletedNs[k] > c.IssuedNs[k]
	}
	n := 0
	for c := range t.Blocks(scanBlock) {
		for k := range c.SeqID {
			if counted(c, k) {
				n++
			}
		}
	}
	if n == 0 {
		return InFlightResult{}, errors.New("steady: no successful request with a positive duration")
	}
	// The count in flight rises by one at each send and falls by one at
	// each completion: the sends and the completions, each sorted, merged
	// into the distinct times at which it changes (16 bytes a request, not
	// a change of 16 bytes per event: issue 43).
	sends, ends := make([]int64, 0, n), make([]int64, 0, n)
	for c := range t.Blocks(scanBlock) {
		for k := range c.SeqID {
			if counted(c, k) {
				sends, ends = append(sends, c.IssuedNs[k]), append(ends, c.CompletedNs[k])
			}
		}
	}
	slices.Sort(sends)
	slices.Sort(ends)
	// intervals yields each interval between consecutive distinct times
	// of a send or a completion with the count in flight in it.
	intervals := func(f func(start, end int64, n int)) {
		i, j := 0, 0
		// next is the next distinct time and the net change of the count
		// at it (zero when as many requests end as start then).
		next := func() (at int64, d int, ok bool) {
			switch {
			case i < len(sends) && j < len(ends):
				at = min(sends[i], ends[j])
			case i < len(sends):
				at = sends[i]
			case j < len(ends):
				at = ends[j]
			default:
				return 0, 0, false
			}
			for ; i < len(sends) && sends[i] == at; i++ {
				d++
			}
			for ; j < len(ends) && ends[j] == at; j++ {
				d--
			}
			return at, d, true
		}
		n := 0
		at, d, _ := next()
		for {
			n += d
			to, dd, ok := next()
			if !ok {
				return
			}
			f(at, to, n)
			at, d = to, dd
		}
	}
	peak := 0
	intervals(func(_, _ int64, n int) { peak = max(peak, n) })
	res := InFlightResult{Ratio: ratio, Peak: peak, Threshold: max(1, int(math.Ceil(float64(peak)*ratio)))}
	best, bestLen := [2]int64{}, int64(-1)
	var spanStart, spanEnd int64
	open := false
	flush := func() {
		if open && spanEnd-spanStart > bestLen {
			best, bestLen = [2]int64{spanStart, spanEnd}, spanEnd-spanStart
		}
		open = false
	}
	intervals(func(start, end int64, n int) {
		if n >= res.Threshold {
			if !open {
				spanStart, open = start, true
			}
			spanEnd = end
			return
		}
		flush()
	})
	flush()
	sends, ends = nil, nil
	res.StartNs, res.EndNs = best[0], best[1]
	// The samples sent in the window, counted first to be held once.
	in := 0
	for c := range t.Blocks(scanBlock) {
		for _, at := range c.IssuedNs {
			if at >= res.StartNs && at < res.EndNs {
				in++
			}
		}
	}
	if in > 0 {
		res.Samples = make([]uint64, 0, in)
	}
	for c := range t.Blocks(scanBlock) {
		for k, seq := range c.SeqID {
			if at := c.IssuedNs[k]; at >= res.StartNs && at < res.EndNs {
				res.Samples = append(res.Samples, seq)
			}
		}
	}
	return res, nil
}
