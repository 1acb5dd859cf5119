package steady

// The steady-state analysis as it was when it took a []loadgen.Record
// (commit 4235d66), kept verbatim so that TestTableMatchesLegacy can check
// that the table-based analysis gives bit for bit the same results.

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"aimeter/loadgen"
	"aimeter/stats"
)

func legacyInFlight(recs []loadgen.Record, ratio float64) (InFlightResult, error) {
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

func legacyMeasure(recs []loadgen.Record, seqs []uint64, spanNs int64) Metrics {
	// The seq ids to keep, one bit each from the least (issue 43: a map
	// took about 40 bytes a record of a long run's report).
	// The seq ids of a pass are dense; scattered ones (bits for more
	// than a few words a seq id) go into a map instead.
	var lo uint64
	var bits []uint64
	var scattered map[uint64]bool
	if len(seqs) > 0 {
		lo = slices.Min(seqs)
		if words := (slices.Max(seqs)-lo)/64 + 1; words <= 4*uint64(len(seqs))+1024 {
			bits = make([]uint64, words)
			for _, s := range seqs {
				bits[(s-lo)/64] |= 1 << ((s - lo) % 64)
			}
		} else {
			scattered = make(map[uint64]bool, len(seqs))
			for _, s := range seqs {
				scattered[s] = true
			}
		}
	}
	keep := func(seq uint64) bool {
		switch {
		case seqs == nil:
			return true
		case scattered != nil:
			return scattered[seq]
		}
		i := seq - lo
		return seq >= lo && i/64 < uint64(len(bits)) && bits[i/64]&(1<<(i%64)) != 0
	}
	m := Metrics{SpanNs: spanNs}
	var lat, ttft, tpot []int64
	tokens := int64(0)
	for _, r := range recs {
		if !keep(r.SeqID) {
			continue
		}
		m.Samples++
		switch r.Status {
		case loadgen.StatusError:
			m.Failed++
			continue
		case loadgen.StatusLost:
			m.Lost++
			continue
		}
		if r.CompletedNs == loadgen.NoTime {
			m.Lost++
			continue
		}
		m.Completed++
		tokens += r.Tokens
		lat = append(lat, r.CompletedNs-r.ScheduledNs)
		if r.FirstTokenNs != loadgen.NoTime {
			ttft = append(ttft, r.FirstTokenNs-r.ScheduledNs)
			if r.Tokens > 1 {
				tpot = append(tpot, (r.CompletedNs-r.FirstTokenNs)/(r.Tokens-1))
			}
		}
	}
	if spanNs > 0 {
		m.CompletedPerSec = float64(m.Completed) / (float64(spanNs) / 1e9)
		m.OutputTokensPerSec = float64(tokens) / (float64(spanNs) / 1e9)
	}
	m.HasTokens = len(ttft) > 0
	for _, v := range [][]int64{lat, ttft, tpot} {
		slices.Sort(v)
	}
	for i, p := range Percentiles {
		m.Latency[i] = stats.Percentile(lat, p)
		m.TTFT[i] = stats.Percentile(ttft, p)
		m.TPOT[i] = stats.Percentile(tpot, p)
	}
	return m
}

// superPass is the samples of one super-pass, as the detector needs them.
type legacySuperPassT struct {
	firstIssue, lastIssue int64
	ttft, tpot, latency   []float64
	seqs                  []uint64
}

// SuperPass finds the steady-state window of a run by MLPerf Endpoints'
// super-pass method: the records, in issue order, are cut into super-passes
// of DatasetSize × ⌈Concurrency/DatasetSize⌉ samples; leading super-passes
// whose TPOT p50 is more than 5 % off the median of the back half's are
// warm-up (at least 1, at most half); the rest are grown from the left into
// maximal plateaus of at least 4 super-passes over which TPOT p50 and p90
// are each both trend-free (a Mann-Kendall test with the Hamed-Rao
// correction at 5 %, or a drift under 5 % end to end) and within a CoV of
// 0.08; the first plateau at least as long as max(k*·τ, 5·p90 latency,
// MinDuration) is the window, where τ is the median issue span of its
// super-passes and k* = ⌈(1.96·CoV(TPOT p50)/0.05)²⌉ when over 4. TTFT and
// latency do not gate. With none, the window is the whole run.
//
// Latencies are aimeter's, from the scheduled time: TTFT = first token −
// scheduled, latency = completion − scheduled, TPOT = (completion − first
// token)/(tokens − 1); Endpoints times from the send. Only successful
// samples give times; failed and lost ones still count as issued.
func legacySuperPass(recs []loadgen.Record, opts SuperPassOptions) (SuperPassResult, error) {
	if opts.DatasetSize <= 0 {
		return SuperPassResult{}, fmt.Errorf("steady: data set size %d: want at least 1", opts.DatasetSize)
	}
	c := max(opts.Concurrency, 1)
	size := opts.DatasetSize * ((c + opts.DatasetSize - 1) / opts.DatasetSize)
	floor := opts.MinDuration
	if floor == 0 {
		floor = DefaultMinDuration
	}
	floor = max(floor, 0)

	// The records in issue order, as positions in recs (8 bytes a record,
	// not a sorted copy of 96: issue 43), sorted stably: the same order a
	// stable sort of the records gives.
	order := make([]int, len(recs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := &recs[i], &recs[j]
		if a.IssuedNs != b.IssuedNs {
			return cmp.Compare(a.IssuedNs, b.IssuedNs)
		}
		return cmp.Compare(a.SeqID, b.SeqID)
	})
	var series []legacySuperPassT
	for i, at := range order {
		r := &recs[at]
		k := i / size
		if k == len(series) {
			series = append(series, legacySuperPassT{firstIssue: r.IssuedNs})
		}
		sp := &series[k]
		sp.lastIssue = r.IssuedNs
		sp.seqs = append(sp.seqs, r.SeqID)
		if r.Status != loadgen.StatusOK || r.CompletedNs == loadgen.NoTime {
			continue
		}
		sp.latency = append(sp.latency, float64(r.CompletedNs-r.ScheduledNs))
		if r.FirstTokenNs != loadgen.NoTime {
			sp.ttft = append(sp.ttft, float64(r.FirstTokenNs-r.ScheduledNs))
			if r.Tokens > 1 {
				sp.tpot = append(sp.tpot, float64(r.CompletedNs-r.FirstTokenNs)/float64(r.Tokens-1))
			}
		}
	}
	res := SuperPassResult{Size: size, SuperPasses: len(series)}
	for _, sp := range series {
		res.TPOTP50 = append(res.TPOTP50, pct(sp.tpot, 0.5))
		res.TPOTP90 = append(res.TPOTP90, pct(sp.tpot, 0.9))
	}
	whole := func(reason string) (SuperPassResult, error) {
		res.Found, res.Reason, res.Lo, res.Hi = false, reason, 0, len(series)
		res.Samples = nil
		for _, sp := range series {
			res.Samples = append(res.Samples, sp.seqs...)
		}
		if len(series) > 0 {
			res.StartNs, res.EndNs = series[0].firstIssue, series[len(series)-1].lastIssue
		}
		return res, nil
	}
	if len(order) < opts.DatasetSize {
		return whole(fmt.Sprintf("the run issued %d samples, less than one pass over the data set (%d)", len(order), opts.DatasetSize))
	}
	res.Warmup = adaptiveWarmup(res.TPOTP50)
	if full := len(order) / size; full < res.Warmup+1 {
		return whole(fmt.Sprintf("%d full super-passes of %d samples: none is left after %d of warm-up", full, size, res.Warmup))
	}
	if len(series) > MaxSuperPasses {
		return whole(fmt.Sprintf("%d super-passes of %d samples: more than the %d the detector examines (its plateau search grows as the cube of their number)", len(series), size, MaxSuperPasses))
	}
	post := series[res.Warmup:]
	plateaus := segmentPlateaus(res.TPOTP50[res.Warmup:], res.TPOTP90[res.Warmup:])
	for _, p := range plateaus {
		res.Plateaus = append(res.Plateaus, [2]int{p[0] + res.Warmup, p[1] + res.Warmup})
	}
	if len(plateaus) == 0 {
		return whole("no admissible steady plateau: TPOT p50 or p90 trends or varies by more than a CoV of 0.08 over every 4 super-passes")
	}
	longest := time.Duration(0)
	var need time.Duration
	for _, p := range plateaus {
		span, min := legacyMinDuration(post[p[0]:p[1]], floor)
		if span >= min {
			res.Found, res.Lo, res.Hi = true, p[0]+res.Warmup, p[1]+res.Warmup
			res.StartNs, res.EndNs = post[p[0]].firstIssue, post[p[1]-1].lastIssue
			res.MinDurationNs = int64(min)
			for _, sp := range post[p[0]:p[1]] {
				res.Samples = append(res.Samples, sp.seqs...)
			}
			return res, nil
		}
		if span > longest {
			longest, need = span, min
		}
	}
	return whole(fmt.Sprintf("all %d steady plateaus are too short: the longest spans %v, under the %v required", len(plateaus), longest.Round(time.Millisecond), need.Round(time.Millisecond)))
}

// minDuration returns the window's issue span and the duration it must
// reach: max(precision, relaxation, floor), where precision is k*·τ (τ
// the median issue span of a super-pass, k* = ⌈(1.96·CoV_b/0.05)²⌉ with
// CoV_b that of the TPOT p50s, counted only when over 4), relaxation
// 5 × the p90 latency of the window's samples.
func legacyMinDuration(w []legacySuperPassT, floor time.Duration) (span, need time.Duration) {
	var p50s, spans, lat []float64
	for _, sp := range w {
		if len(sp.tpot) > 0 {
			p50s = append(p50s, pct(sp.tpot, 0.5))
		}
		if sp.lastIssue > sp.firstIssue && sp.firstIssue >= 0 {
			spans = append(spans, float64(sp.lastIssue-sp.firstIssue))
		}
		lat = append(lat, sp.latency...)
	}
	covB := 0.0
	if len(p50s) >= 2 {
		covB = cov(p50s)
	}
	kstar := max(int(math.Ceil(math.Pow(1.96*covB/minDurEps, 2))), minTrendN)
	prec := 0.0
	if kstar > minTrendN {
		prec = float64(kstar) * median(spans)
	}
	relax := 0.0
	if len(lat) > 0 {
		relax = minDurRelaxMult * pct(lat, 0.9)
	}
	need = time.Duration(max(prec, relax, float64(floor)))
	span = time.Duration(w[len(w)-1].lastIssue - w[0].firstIssue)
	return span, need
}

// pct is percentileLower of an unsorted slice; NaN for none.
func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return percentileLower(s, p)
}
