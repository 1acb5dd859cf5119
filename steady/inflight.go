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
// is not in (0, 1] or no request succeeded.
func InFlight(recs []loadgen.Record, ratio float64) (InFlightResult, error) {
	if !(ratio > 0 && ratio <= 1) {
		return InFlightResult{}, fmt.Errorf("steady: in-flight ratio %v: want a fraction in (0, 1]", ratio)
	}
	deltas := map[int64]int{}
	for _, r := range recs {
		if r.Status != loadgen.StatusOK || r.CompletedNs == loadgen.NoTime || r.CompletedNs <= r.IssuedNs {
			continue
		}
		deltas[r.IssuedNs]++
		deltas[r.CompletedNs]--
	}
	if len(deltas) == 0 {
		return InFlightResult{}, errors.New("steady: no successful request with a positive duration")
	}
	times := make([]int64, 0, len(deltas))
	for t := range deltas {
		times = append(times, t)
	}
	slices.Sort(times)
	type interval struct {
		start, end int64
		n          int
	}
	var intervals []interval
	n, peak := 0, 0
	for i := 0; i < len(times)-1; i++ {
		n += deltas[times[i]]
		intervals = append(intervals, interval{times[i], times[i+1], n})
		peak = max(peak, n)
	}
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
	for _, iv := range intervals {
		if iv.n >= res.Threshold {
			if !open {
				spanStart, open = iv.start, true
			}
			spanEnd = iv.end
			continue
		}
		flush()
	}
	flush()
	res.StartNs, res.EndNs = best[0], best[1]
	for _, r := range recs {
		if r.IssuedNs >= res.StartNs && r.IssuedNs < res.EndNs {
			res.Samples = append(res.Samples, r.SeqID)
		}
	}
	return res, nil
}
