package steady

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"aimeter/loadgen"
)

// The constants of MLPerf Endpoints' steady-state detector (v1.0 rules,
// section 4.4; mlcommons/endpoints, inference_endpoint/metrics/
// steady_state_diagnostics.py), which SuperPass follows.
const (
	// DefaultCoVBound is the loosest CoV bound of the gate (Endpoints'
	// cov_bounds (0.03, 0.05, 0.08): admissibility uses the loosest).
	DefaultCoVBound = 0.08
	// trendAlpha is the two-sided significance of the trend gate.
	trendAlpha = 0.05
	// trendRelDriftMin is the effect-size floor: a significant trend
	// breaks a window only when the drift end to end is at least 5 %.
	trendRelDriftMin = 0.05
	// warmupBand is how far (fractionally) from the steady TPOT p50 a
	// leading super-pass may be before it is cropped as warm-up.
	warmupBand = 0.05
	// minDurEps, minDurRelaxMult and DefaultMinDuration make the minimum
	// duration of a window: max(k*·τ, 5·p90 latency, 600 s).
	minDurEps          = 0.05
	minDurRelaxMult    = 5.0
	DefaultMinDuration = 600 * time.Second
	// MaxSuperPasses bounds the super-passes SuperPass examines; a run
	// with more falls back to the whole run, saying so.
	MaxSuperPasses = 500
)

// SuperPassOptions are the inputs of SuperPass beyond the records.
type SuperPassOptions struct {
	// DatasetSize is the number of distinct samples one pass over the data
	// set issues (the QSL's performance sample count). Required.
	DatasetSize int
	// Concurrency is the requests kept in flight (the fixed-concurrency
	// mode); a super-pass is the smallest whole number of passes over the
	// data set that holds at least this many samples. 0 means 1.
	Concurrency int
	// MinDuration is the floor of the minimum duration of a steady window
	// (the MLPerf minimum duration, Endpoints' 600 s); 0 means
	// DefaultMinDuration, negative no floor (the window must still be
	// longer than its precision and relaxation terms).
	MinDuration time.Duration
}

// SuperPassResult is the outcome of SuperPass.
type SuperPassResult struct {
	// Size is the samples in one super-pass; SuperPasses how many the run
	// issued (the last may be partial); Warmup how many leading ones were
	// cropped as warm-up.
	Size, SuperPasses, Warmup int
	// Found says a steady window was found; otherwise Reason says why and
	// the window is the whole run (Endpoints' fallback to "total").
	Found  bool
	Reason string
	// Lo and Hi bound the window's super-passes, [Lo, Hi), counted from
	// the first (warm-up included).
	Lo, Hi int
	// StartNs and EndNs are the window on the pass's clock: the first and
	// last issue of its samples (the offered-load span).
	StartNs, EndNs int64
	// MinDurationNs is the duration the window had to reach (0 when none
	// was found).
	MinDurationNs int64
	// Plateaus are every admissible plateau [lo, hi) of the super-passes
	// after the warm-up, counted from the first super-pass.
	Plateaus [][2]int
	// TPOTP50 and TPOTP90 are the gating trajectories: the TPOT
	// percentiles of each super-pass (NaN for one without TPOT), ns.
	TPOTP50, TPOTP90 []float64
	// Samples are the seq ids of the window's samples.
	Samples []uint64
}

// superPass is one super-pass, as the detector needs it: the first and
// last issue of its samples (its samples are positions [k·size,
// (k+1)·size) of the records in issue order).
type superPass struct {
	firstIssue, lastIssue int64
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
// samples give times; failed and lost ones still count as issued. It is
// SuperPassTable of the records.
func SuperPass(recs []loadgen.Record, opts SuperPassOptions) (SuperPassResult, error) {
	return SuperPassTable(tableOf(recs), opts)
}

// SuperPassTable is SuperPass over the records of t. It holds the records'
// positions in issue order (4 bytes a record), the latencies of one
// super-pass or window at a time, and the seq ids of the window's samples.
func SuperPassTable(t loadgen.RecordAccess, opts SuperPassOptions) (SuperPassResult, error) {
	if opts.DatasetSize <= 0 {
		return SuperPassResult{}, fmt.Errorf("steady: data set size %d: want at least 1", opts.DatasetSize)
	}
	if t.Len() > math.MaxInt32 {
		return SuperPassResult{}, fmt.Errorf("steady: %d records: more than the %d SuperPass orders", t.Len(), math.MaxInt32)
	}
	c := max(opts.Concurrency, 1)
	size := opts.DatasetSize * ((c + opts.DatasetSize - 1) / opts.DatasetSize)
	floor := opts.MinDuration
	if floor == 0 {
		floor = DefaultMinDuration
	}
	floor = max(floor, 0)

	// The records in issue order, as positions in t, sorted stably: the
	// same order a stable sort of the records gives.
	order := make([]int32, t.Len())
	for i := range order {
		order[i] = int32(i)
	}
	byIssue := func(i, j int32) int {
		if a, b := t.IssuedNs(int(i)), t.IssuedNs(int(j)); a != b {
			return cmp.Compare(a, b)
		}
		return cmp.Compare(t.SeqID(int(i)), t.SeqID(int(j)))
	}
	if !slices.IsSortedFunc(order, byIssue) {
		slices.SortStableFunc(order, byIssue)
	}
	sp := spTable{t: t, order: order, size: size}
	series := make([]superPass, (len(order)+size-1)/size)
	res := SuperPassResult{Size: size, SuperPasses: len(series)}
	var scratch []float64
	for k := range series {
		pos := sp.positions(k, k+1)
		series[k] = superPass{firstIssue: t.IssuedNs(int(pos[0])), lastIssue: t.IssuedNs(int(pos[len(pos)-1]))}
		scratch = sp.tpots(scratch[:0], k)
		slices.Sort(scratch)
		p50, p90 := math.NaN(), math.NaN()
		if len(scratch) > 0 {
			p50, p90 = percentileLower(scratch, 0.5), percentileLower(scratch, 0.9)
		}
		res.TPOTP50 = append(res.TPOTP50, p50)
		res.TPOTP90 = append(res.TPOTP90, p90)
	}
	scratch = nil
	whole := func(reason string) (SuperPassResult, error) {
		res.Found, res.Reason, res.Lo, res.Hi = false, reason, 0, len(series)
		res.Samples = sp.seqs(0, len(series))
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
	plateaus := segmentPlateaus(res.TPOTP50[res.Warmup:], res.TPOTP90[res.Warmup:])
	for _, p := range plateaus {
		res.Plateaus = append(res.Plateaus, [2]int{p[0] + res.Warmup, p[1] + res.Warmup})
	}
	if len(plateaus) == 0 {
		return whole("no admissible steady plateau: TPOT p50 or p90 trends or varies by more than a CoV of 0.08 over every 4 super-passes")
	}
	longest := time.Duration(0)
	var need time.Duration
	for _, p := range res.Plateaus {
		span, min := sp.minDuration(series, res.TPOTP50, p[0], p[1], floor)
		if span >= min {
			res.Found, res.Lo, res.Hi = true, p[0], p[1]
			res.StartNs, res.EndNs = series[p[0]].firstIssue, series[p[1]-1].lastIssue
			res.MinDurationNs = int64(min)
			res.Samples = sp.seqs(p[0], p[1])
			return res, nil
		}
		if span > longest {
			longest, need = span, min
		}
	}
	return whole(fmt.Sprintf("all %d steady plateaus are too short: the longest spans %v, under the %v required", len(plateaus), longest.Round(time.Millisecond), need.Round(time.Millisecond)))
}

// spTable is the records of SuperPassTable in issue order, cut into
// super-passes.
type spTable struct {
	t     loadgen.RecordAccess
	order []int32 // positions in t, in issue order
	size  int     // samples a super-pass
}

// positions are the positions in t of super-passes [lo, hi).
func (s *spTable) positions(lo, hi int) []int32 {
	return s.order[lo*s.size : min(hi*s.size, len(s.order))]
}

// ok reports whether record i succeeded, with a completion time: only
// those give times.
func (s *spTable) ok(i int) bool {
	return s.t.Status(i) == loadgen.StatusOK && s.t.CompletedNs(i) != loadgen.NoTime
}

// tpots appends the TPOT of each sample of super-pass k that has one:
// (completion − first token)/(tokens − 1), ns.
func (s *spTable) tpots(dst []float64, k int) []float64 {
	t := s.t
	for _, at := range s.positions(k, k+1) {
		i := int(at)
		if !s.ok(i) || t.FirstTokenNs(i) == loadgen.NoTime || t.Tokens(i) <= 1 {
			continue
		}
		dst = append(dst, float64(t.CompletedNs(i)-t.FirstTokenNs(i))/float64(t.Tokens(i)-1))
	}
	return dst
}

// seqs are the seq ids of super-passes [lo, hi), in issue order; nil for
// none.
func (s *spTable) seqs(lo, hi int) []uint64 {
	pos := s.positions(lo, hi)
	if len(pos) == 0 {
		return nil
	}
	out := make([]uint64, len(pos))
	for j, at := range pos {
		out[j] = s.t.SeqID(int(at))
	}
	return out
}

// adaptiveWarmup is the count of leading super-passes whose TPOT p50 is
// more than warmupBand off the steady level, the median of the back half
// of the trajectory (super-passes without TPOT left out); at least 1, at
// most half the trajectory (Endpoints' adaptive_warmup).
func adaptiveWarmup(tpotP50 []float64) int {
	var vals []float64
	for _, v := range tpotP50 {
		if !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	n := len(vals)
	if n < minTrendN {
		return 1
	}
	steadyLevel := median(vals[n/2:])
	if steadyLevel == 0 {
		steadyLevel = 1e-9
	}
	limit := max(1, n/2)
	w := 0
	for w < limit && math.Abs(vals[w]-steadyLevel)/steadyLevel > warmupBand {
		w++
	}
	return max(1, w)
}

// admissible reports whether the gating trajectories (TPOT p50 and p90
// of each super-pass, NaN where a super-pass has none) are, over a window,
// present, trend-free (or drifting under 5 %) and within the CoV bound.
func admissible(p50, p90 []float64) bool {
	if len(p50) < minTrendN {
		return false
	}
	for _, traj := range [][]float64{p50, p90} {
		for _, v := range traj {
			if math.IsNaN(v) {
				return false
			}
		}
		if mannKendallHamedRao(traj, trendAlpha) != Flat && math.Abs(relDrift(traj)) >= trendRelDriftMin {
			return false
		}
		if cov(traj) > DefaultCoVBound {
			return false
		}
	}
	return true
}

// segmentPlateaus grows windows from the left into maximal admissible
// plateaus: from each start, the longest admissible window that every
// shorter one (of at least 4) leading up to it also is; then on past it.
func segmentPlateaus(p50, p90 []float64) [][2]int {
	var out [][2]int
	n := len(p50)
	for start := 0; start <= n-minTrendN; {
		hi := -1
		for end := start + minTrendN; end <= n; end++ {
			if !admissible(p50[start:end], p90[start:end]) {
				break
			}
			hi = end
		}
		if hi < 0 {
			start++
			continue
		}
		out = append(out, [2]int{start, hi})
		start = hi
	}
	return out
}

// minDuration returns the issue span of the window of super-passes
// [lo, hi) and the duration it must reach: max(precision, relaxation,
// floor), where precision is k*·τ (τ the median issue span of a
// super-pass, k* = ⌈(1.96·CoV_b/0.05)²⌉ with CoV_b that of the TPOT p50s
// (tpotP50, NaN for a super-pass without TPOT), counted only when over 4),
// relaxation 5 × the p90 latency of the window's samples.
func (s *spTable) minDuration(series []superPass, tpotP50 []float64, lo, hi int, floor time.Duration) (span, need time.Duration) {
	var p50s, spans []float64
	for k := lo; k < hi; k++ {
		if !math.IsNaN(tpotP50[k]) {
			p50s = append(p50s, tpotP50[k])
		}
		if sp := series[k]; sp.lastIssue > sp.firstIssue && sp.firstIssue >= 0 {
			spans = append(spans, float64(sp.lastIssue-sp.firstIssue))
		}
	}
	var lat []float64
	for _, at := range s.positions(lo, hi) {
		if i := int(at); s.ok(i) {
			lat = append(lat, float64(s.t.CompletedNs(i)-s.t.ScheduledNs(i)))
		}
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
		slices.Sort(lat)
		relax = minDurRelaxMult * percentileLower(lat, 0.9)
	}
	need = time.Duration(max(prec, relax, float64(floor)))
	span = time.Duration(series[hi-1].lastIssue - series[lo].firstIssue)
	return span, need
}
