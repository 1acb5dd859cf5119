package loadgen

import (
	"fmt"
	"math"
)

// DefaultMaxMemory is the memory budget of a run when Options.MaxMemory is
// zero. loadgen does not read the machine's memory size itself: callers that
// want "half of the machine" (aimeter's command line does) pass it.
const DefaultMaxMemory = 8 << 30

// Bytes that a run keeps per generated sample and per generated query; see
// generatedQueries (schedule.go) and pass (pass.go).
const (
	// QuerySample (16) + state (4) + completed (8) + tokens (4).
	bytesPerSample = 32
	// issued (8) + done (8) + remaining (4).
	bytesPerQuery = 20
	// The Server schedule: one int64 per query.
	bytesPerScheduled = 8
	// firstTok (token mode) or accVal (accuracy sampling) per sample.
	bytesPerOptionalColumn = 8
	// The pass's PerformanceResult, built when it ends while its records
	// are still held: a latency per sample, and in token mode its tokens,
	// time to first token and time per output token.
	bytesPerResult      = 8
	bytesPerTokenResult = 24
	// One int or uint64 of the index lists (loadable sets, shuffles).
	bytesPerIndex = 8
	// Beyond preallocCap queries the sample slice grows by append, which
	// holds the old and the new array at once.
	preallocCap = 1 << 26
)

// maxMemory returns the effective budget in bytes, or 0 for no limit.
func (o *Options) maxMemory() uint64 {
	switch {
	case o.MaxMemory < 0:
		return 0
	case o.MaxMemory == 0:
		return DefaultMaxMemory
	}
	return uint64(o.MaxMemory)
}

// MemoryEstimate is the memory a run needs, estimated from its settings
// before anything is generated (Effective.EstimateMemory).
type MemoryEstimate struct {
	// Bytes is the estimated peak of loadgen's own allocations.
	Bytes float64
	// Queries and Samples are the generated queries and samples of one
	// performance pass (+Inf when the schedule never ends).
	Queries, Samples float64
	// AccuracySamples is the number of samples of the accuracy passes.
	AccuracySamples float64

	// The parts of Bytes, for BudgetError's advice.
	fixed    float64 // independent of the query count
	perQuery float64 // per performance query, its samples included
	// grownPerQuery is perQuery beyond preallocCap queries.
	grownPerQuery float64
	perSample     float64 // per performance sample
	durationQ     float64 // queries the duration alone asks for
	minQ          float64 // queries min_query_count alone asks for
	spq           float64
	arrivals      int
	loadedBytes   float64 // per loaded (QSL) sample
	// mustQ is the number of queries whose records are allocated whatever
	// the SUT's speed (all of them, but min_query_count for a closed-loop
	// pass generated on demand); the others cost dirPerQuery until issued.
	mustQ, dirPerQuery float64
	onDemand           bool
}

// EstimateMemory estimates the memory a run with these effective settings
// needs: the generated queries and samples of a performance pass and their
// per-sample and per-query records, the Server schedule, the loadable sets
// and shuffled index lists (the equal-issue list included when it is used),
// and the accuracy passes. qslTotal is the QSL's total sample count and
// arrivals the length of Options.Arrivals (0 for none). Find-peak is
// estimated as two passes at the rate of e (the reported probe and the
// running one); Run checks each probe's rate before it runs. The estimate
// mirrors generateQueries, in floating point so that it cannot overflow.
func (e *Effective) EstimateMemory(qslTotal uint64, arrivals int) MemoryEstimate {
	distEnd := float64(min(e.PerformanceSampleCount, qslTotal))
	spq := float64(e.SamplesPerQuery)
	nLoaded := distEnd
	stride := 1.0
	if e.Scenario == MultiStream {
		nLoaded += spq - 1
		stride = spq
	}
	genDur := float64(e.TargetDurationMs) * 1e6
	if e.Scenario != Server {
		genDur *= 2
	}
	minQ := float64(e.MinQueryCount)
	if e.PerformanceIssueUnique {
		genDur = 0
		minQ = math.Floor(nLoaded / spq)
	}
	if arrivals > 0 && e.Scenario == Server {
		genDur = 0
		minQ = float64(arrivals)
	}
	roundUp := func(x, m float64) float64 {
		if m <= 0 {
			return x
		}
		return math.Ceil(x/m) * m
	}
	equalIssue := e.SampleConcatenatePermutation
	equalList := 0.0
	if equalIssue && (e.Scenario == SingleStream || e.Scenario == Server) {
		equalList = roundUp(minQ, nLoaded)
	}
	if equalIssue {
		if e.Scenario == Offline {
			spq = roundUp(spq, nLoaded)
		} else {
			minQ = roundUp(minQ, nLoaded)
		}
	}
	durQ := 0.0
	if genDur > 0 {
		var perQuery float64
		if e.Scenario == Server {
			perQuery = 1e9 / e.TargetQPS
		} else {
			perQuery = float64(e.period())
		}
		if perQuery > 0 {
			durQ = math.Floor(genDur/perQuery) + 1
		} else {
			// A zero period never advances the clock: the generation
			// loop would not end.
			durQ = math.Inf(1)
		}
		if equalIssue && e.Scenario != Offline {
			durQ = roundUp(durQ, nLoaded)
		}
	}
	queries := max(minQ, durQ)

	paged := float64(bytesPerSample) // the per-sample arrays of the pass
	result := float64(bytesPerResult)
	if e.UseTokenLatencies {
		paged += bytesPerOptionalColumn
		result += bytesPerTokenResult
	}
	if e.AccuracyLogProbability > 0 || e.AccuracyLogSamplingTarget > 0 {
		paged += bytesPerOptionalColumn
	}
	perSample := paged + result
	perQuery := float64(bytesPerQuery) + spq*perSample
	if e.Scenario == Server {
		perQuery += bytesPerScheduled
	}
	// Beyond preallocCap queries the QuerySample array grows by append and
	// is held twice while it is copied.
	grownPerQuery := perQuery + spq*16
	// A closed-loop pass is generated and paged in as it is issued (see
	// generatedQueries): it surely holds the records of the min_query_count
	// queries it must issue, and for the rest of the generated queries only
	// the page directories (one pointer per page of each array) until it
	// issues them; the pages it issues beyond are bounded by the budget
	// while it runs.
	mustQ, dirPerQuery := queries, 0.0
	if e.onDemand() {
		mustQ = min(minQ, queries)
		arrays := math.Round((paged - 16) / 8) // the per-sample arrays besides QuerySample
		dirPerQuery = (4 + spq*arrays) * 8 / pageLen
	}
	passes := 1.0
	if e.Mode == FindPeakPerformance {
		passes = 2
	}
	// The shuffled [0, N) of the loadable sets, the loaded set, the unique
	// list and the equal-issue list.
	loadedBytes := float64(bytesPerIndex) * (2 + 1/stride)
	fixed := bytesPerIndex*(distEnd+nLoaded+distEnd/stride) + bytesPerIndex*equalList

	est := MemoryEstimate{
		Queries: queries, Samples: queries * spq,
		perQuery: passes * perQuery, grownPerQuery: passes * grownPerQuery, perSample: passes * perSample,
		durationQ: durQ, minQ: minQ, spq: spq, arrivals: arrivals, loadedBytes: loadedBytes,
		mustQ: mustQ, dirPerQuery: passes * dirPerQuery, onDemand: e.onDemand(),
	}
	if e.Mode == SubmissionRun || e.Mode == AccuracyOnly {
		acc := float64(min(e.AccuracySampleCount, qslTotal))
		est.AccuracySamples = acc
		// Every accuracy sample is its own query outside Offline; the
		// shuffled [0, N), the set, the main and unique lists.
		perAcc := bytesPerSample + bytesPerQuery + 4*bytesPerIndex
		fixed += acc * float64(perAcc)
	}
	est.fixed = fixed
	est.Bytes = fixed + est.queryBytes(mustQ) + (queries-mustQ)*est.dirPerQuery
	return est
}

// queryBytes is the memory of q performance queries.
func (est *MemoryEstimate) queryBytes(q float64) float64 {
	if q > preallocCap {
		return est.grownPerQuery * q
	}
	return est.perQuery * q
}

// maxQueries is the largest query count whose queries fit in avail bytes.
func (est *MemoryEstimate) maxQueries(avail float64) float64 {
	if q := math.Floor(avail / est.perQuery); q <= preallocCap {
		return q
	}
	return max(preallocCap, math.Floor(avail/est.grownPerQuery))
}

// BudgetError reports a run refused before anything was generated because
// its estimated memory exceeds Options.MaxMemory.
type BudgetError struct {
	// Settings names the settings that drive the estimate, with values.
	Settings string
	// Estimate and Limit are in bytes.
	Estimate, Limit float64
	// Samples is the number of samples the estimate is for.
	Samples float64
	// Fits is the nearest setting that fits the limit, or a hint.
	Fits string
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("%s needs ~%s for %s samples; the memory limit is %s (Options.MaxMemory, --max-memory); %s",
		e.Settings, FormatBytes(e.Estimate), formatCount(e.Samples), FormatBytes(e.Limit), e.Fits)
}

// FormatBytes writes a byte count in GB, MB or kB with three significant
// digits at most ("84.0 GB"); decimal units, as the issue reports use.
func FormatBytes(b float64) string {
	switch {
	case math.IsInf(b, 0) || math.IsNaN(b):
		return "unbounded memory"
	case b >= 1e12:
		return fmt.Sprintf("%.1f TB", b/1e12)
	case b >= 1e9:
		return fmt.Sprintf("%.1f GB", b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	}
	return fmt.Sprintf("%.0f kB", math.Ceil(b/1e3))
}

func formatCount(n float64) string {
	if math.IsInf(n, 0) || n > 1e15 {
		return "unboundedly many"
	}
	if n >= 1e7 {
		return fmt.Sprintf("%.3g", n)
	}
	return fmt.Sprintf("%.0f", n)
}

// checkBudget refuses settings whose estimated memory exceeds the budget of
// opts, naming the setting to change.
func checkBudget(e *Effective, qslTotal uint64, opts *Options) error {
	limit := float64(opts.maxMemory())
	if limit == 0 {
		return nil
	}
	est := e.EstimateMemory(qslTotal, len(opts.Arrivals))
	if est.Bytes <= limit && !math.IsInf(est.Queries, 0) {
		return nil
	}
	be := &BudgetError{Estimate: est.Bytes, Limit: limit, Samples: est.Samples + est.AccuracySamples}
	avail := limit - est.fixed
	dirBytes := (est.Queries - est.mustQ) * est.dirPerQuery
	if avail <= 0 || est.fixed > est.queryBytes(est.mustQ)+dirBytes {
		// The data set drives it: the loadable sets or the accuracy passes.
		perLoaded := est.loadedBytes
		if est.AccuracySamples > 0 {
			perLoaded += bytesPerSample + bytesPerQuery + 4*bytesPerIndex
		}
		n := math.Floor(limit / 2 / perLoaded)
		be.Settings = fmt.Sprintf("a data set of %d samples (QSL size, performance_sample_count = %d, accuracy_sample_count = %d)",
			qslTotal, e.PerformanceSampleCount, e.AccuracySampleCount)
		be.Fits = fmt.Sprintf("a QSL or sample count ≤ %.0f fits", n)
		return be
	}
	maxQ := est.maxQueries(avail)
	if est.onDemand && dirBytes > est.queryBytes(est.mustQ) {
		// The generated queries' page directories dominate: a closed-loop
		// pass of a tiny expected latency over a long duration.
		maxQ = math.Floor((avail - est.queryBytes(est.mustQ)) / est.dirPerQuery)
	}
	switch {
	case est.arrivals > 0 && e.Scenario == Server:
		be.Settings = fmt.Sprintf("an arrival schedule of %d queries", est.arrivals)
		be.Fits = fmt.Sprintf("at most %.0f arrivals fit", maxQ)
	case e.Scenario == Offline:
		maxS := math.Floor((avail - bytesPerQuery) / est.perSample)
		be.Settings = fmt.Sprintf("an Offline query of %d samples (min_query_count, or offline_expected_qps = %g × min_duration = %d ms × 1.1)",
			e.SamplesPerQuery, e.TargetQPS, e.MinDurationMs)
		be.Fits = fmt.Sprintf("at most %.0f samples per query fit", maxS)
	case e.Scenario == MultiStream && est.spq > 1 && est.Queries*(bytesPerQuery+est.perSample) < avail/2:
		maxSPQ := math.Floor((avail/est.Queries - bytesPerQuery) / est.perSample)
		be.Settings = fmt.Sprintf("samples_per_query = %d with %.0f queries", e.SamplesPerQuery, est.Queries)
		be.Fits = fmt.Sprintf("samples_per_query ≤ %.0f fits", maxSPQ)
	case est.minQ >= est.durationQ || (est.onDemand && dirBytes <= est.queryBytes(est.mustQ)):
		be.Settings = fmt.Sprintf("min_query_count = %d", e.MinQueryCount)
		be.Fits = fmt.Sprintf("min_query_count ≤ %.0f fits", maxQ)
	case e.Scenario == Server:
		be.Settings = fmt.Sprintf("target_qps = %g over min_duration = %d ms", e.TargetQPS, e.MinDurationMs)
		be.Fits = fmt.Sprintf("target_qps ≤ %.4g fits (or min_duration ≤ %.3g ms)",
			maxQ/(float64(e.TargetDurationMs)/1e3), maxQ/e.TargetQPS*1e3)
	default:
		period := e.period()
		be.Settings = fmt.Sprintf("min_duration = %d ms at an expected latency of %d ns (twice the duration is generated)", e.MinDurationMs, period)
		if period <= 0 {
			be.Fits = "an expected latency of at least 1 ns is needed"
		} else {
			be.Fits = fmt.Sprintf("min_duration ≤ %.0f ms fits (or a larger expected latency)", math.Floor(maxQ*float64(period)/2/1e6))
		}
	}
	return be
}
