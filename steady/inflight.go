package steady

import (
	"cmp"
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
// is not in (0, 1] or no request succeeded.
func InFlight(recs []loadgen.Record, ratio float64) (InFlightResult, error) {
	if !(ratio > 0 && ratio <= 1) {
		return InFlightResult{}, fmt.Errorf("steady: in-flight ratio %v: want a fraction in (0, 1]", ratio)
	}
	// The changes of the count in flight, one a send and one a completion,
	// sorted by time and summed per distinct time: 16 bytes an event, not
	// a map entry (issue 43: a long run's report must fit where its run
	// did).
	type change struct {
		t int64
		d int
	}
	counted := func(r *loadgen.Record) bool {
		return r.Status == loadgen.StatusOK && r.CompletedNs != loadgen.NoTime && r.CompletedNs > r.IssuedNs
	}
	n := 0
	for i := range recs {
		if counted(&recs[i]) {
			n++
		}
	}
	changes := make([]change, 0, 2*n)
	for i := range recs {
		if r := &recs[i]; counted(r) {
			changes = append(changes, change{r.IssuedNs, 1}, change{r.CompletedNs, -1})
		}
	}
	if len(changes) == 0 {
		return InFlightResult{}, errors.New("steady: no successful request with a positive duration")
	}
	slices.SortFunc(changes, func(a, b change) int { return cmp.Compare(a.t, b.t) })
	k := 0
	for _, c := range changes {
		if k > 0 && changes[k-1].t == c.t {
			changes[k-1].d += c.d
			continue
		}
		changes[k] = c
		k++
	}
	changes = changes[:k]
	// intervals yields each interval between consecutive distinct times
	// with the count in flight in it.
	intervals := func(f func(start, end int64, n int)) {
		n := 0
		for i := 0; i < len(changes)-1; i++ {
			n += changes[i].d
			f(changes[i].t, changes[i+1].t, n)
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
	res.StartNs, res.EndNs = best[0], best[1]
	for _, r := range recs {
		if r.IssuedNs >= res.StartNs && r.IssuedNs < res.EndNs {
			res.Samples = append(res.Samples, r.SeqID)
		}
	}
	return res, nil
}
