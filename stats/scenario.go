package stats

import (
	"strconv"
)

// PercentileEstimate is the outcome of LoadGen's SingleStream/MultiStream
// early-stopping step at one percentile.
type PercentileEstimate struct {
	// Percentile is the percentile p the step was run at (e.g. 0.90).
	Percentile float64
	// Queries is the number of queries n (the length of the latency slice).
	Queries int64
	// MinQueries is h(1)+1, the fewest queries for which an estimate exists.
	MinQueries int64
	// Satisfied reports Queries >= MinQueries.
	Satisfied bool
	// T is the over-latency count t the estimate allows: the first i in
	// 2..n with n < h(i)+i, minus one (1 if there is none). The estimate is
	// the T-th largest latency; the T-1 larger ones are discarded. T is 0
	// when Satisfied is false.
	T int64
	// Estimate is sorted[Queries-T], or 0 when Satisfied is false.
	Estimate int64
}

// Discarded returns how many of the highest latencies the estimate discards
// (T-1), or 0 when the step was not satisfied.
func (e PercentileEstimate) Discarded() int64 {
	if !e.Satisfied {
		return 0
	}
	return e.T - 1
}

// SingleStreamResult is LoadGen's SingleStream early-stopping result.
type SingleStreamResult struct {
	// Satisfied is LoadGen's early_stopping_met; it equals Target.Satisfied.
	Satisfied bool
	// Target is the estimate at the target latency percentile; its Estimate
	// is early_stopping_latency_ss.
	Target PercentileEstimate
	// P99 is the extra 99th-percentile estimate used to infer MultiStream
	// from SingleStream. It is nil when the target step was not satisfied
	// (LoadGen then skips it); otherwise P99.Estimate is
	// early_stopping_latency_ms if P99.Satisfied (LoadGen leaves that key at
	// 0 when it is not).
	P99 *PercentileEstimate
	// Lines is the "Early Stopping Result:" text of mlperf_log_summary.txt,
	// one element per line, each starting with " * " or (for wrapped
	// continuations) a single space. The detail log's early_stopping_result
	// is strings.Join(Lines, " ").
	Lines []string
}

// MultiStreamResult is LoadGen's MultiStream early-stopping result.
type MultiStreamResult struct {
	// Satisfied is LoadGen's early_stopping_met; it equals Estimate.Satisfied.
	Satisfied bool
	// Estimate is the estimate at the target percentile over per-query
	// latencies; its Estimate field is early_stopping_latency_ms.
	Estimate PercentileEstimate
	// Lines is the summary text, as in SingleStreamResult.Lines.
	Lines []string
}

// ServerResult is LoadGen's Server early-stopping result.
type ServerResult struct {
	// Satisfied is LoadGen's early_stopping_met: Queries >= MinPassing+Overlatency.
	Satisfied bool
	// Percentile is the target latency percentile p.
	Percentile float64
	// Queries is the number of queries issued, n.
	Queries int64
	// Overlatency is t, the number of latencies strictly above the bound.
	Overlatency int64
	// MinPassing is h(t) at p.
	MinPassing int64
	// Lines is the summary text, as in SingleStreamResult.Lines.
	Lines []string
}

// MoreQueriesNeeded returns h(t)+t-n, the number of additional under-latency
// queries LoadGen says the run would have needed, or 0 when it passed.
func (r ServerResult) MoreQueriesNeeded() int64 {
	if r.Satisfied {
		return 0
	}
	return r.MinPassing + r.Overlatency - r.Queries
}

// SingleStream runs LoadGen's SingleStream early-stopping check on the
// ascending-sorted sample latencies (n = len(sorted) queries) at target
// percentile p, with confidence 0.99 and tolerance 0: the target step and,
// only if it is satisfied, the 99th-percentile step (in that order, sharing
// this EarlyStopping's memo, as LoadGen shares one finder). The summary text is
//
//	" * Only processed <n> queries."
//	" * Need to process at least <X> queries for early stopping."
//
// when the target step fails, and otherwise
//
//	" * Processed at least <X> queries (<n>)."
//	" * Would discard <T-1> highest latency queries."
//	" * Early stopping <P>th percentile estimate: <estimate>"
//
// followed by either " * Early stopping 99.0th percentile estimate: <e99>" or
// the three-line " * Not enough queries processed for 99.0th percentile" note.
// <P> is 100*p with one decimal.
func (e *EarlyStopping) SingleStream(sorted []int64, p float64) SingleStreamResult {
	return e.SingleStreamAt(int64(len(sorted)), p, func(i int64) int64 { return sorted[i] })
}

// MultiStream runs LoadGen's MultiStream early-stopping check on the
// ascending-sorted per-query latencies (n = len(sorted) queries) at target
// percentile p. The text is SingleStream's without the 99th-percentile part.
func (e *EarlyStopping) MultiStream(sorted []int64, p float64) MultiStreamResult {
	return e.MultiStreamAt(int64(len(sorted)), p, func(i int64) int64 { return sorted[i] })
}

// Server runs LoadGen's Server early-stopping check: with t = overLatency
// (the count of latencies strictly above the target latency, see CountAbove)
// and n = queriesIssued, one MinPassing(t) query at percentile p; the run
// passes iff n >= h(t)+t. The text is " * Run successful." or
//
//	" * Run unsuccessful."
//	" * Processed <n> queries."
//	" * Would need to run at least <h+t-n> more queries,"
//	" with the run being successful if every additional"
//	" query were under latency."
func (e *EarlyStopping) Server(queriesIssued, overLatency int64, p float64) ServerResult {
	h := e.MinPassing(overLatency, p, EarlyStoppingTolerance, EarlyStoppingConfidence)
	res := ServerResult{
		Satisfied:   queriesIssued >= h+overLatency,
		Percentile:  p,
		Queries:     queriesIssued,
		Overlatency: overLatency,
		MinPassing:  h,
	}
	if res.Satisfied {
		res.Lines = []string{" * Run successful."}
	} else {
		res.Lines = []string{
			" * Run unsuccessful.",
			" * Processed " + itoa(queriesIssued) + " queries.",
			" * Would need to run at least " + itoa(h+overLatency-queriesIssued) + " more queries,",
			" with the run being successful if every additional",
			" query were under latency.",
		}
	}
	return res
}

func notEnoughLines(e PercentileEstimate) []string {
	return []string{
		" * Only processed " + itoa(e.Queries) + " queries.",
		" * Need to process at least " + itoa(e.MinQueries) + " queries for early stopping.",
	}
}

func estimateLines(e PercentileEstimate) []string {
	return []string{
		" * Processed at least " + itoa(e.MinQueries) + " queries (" + itoa(e.Queries) + ").",
		" * Would discard " + itoa(e.T-1) + " highest latency queries.",
		" * Early stopping " + percentLabel(e.Percentile) + "th percentile estimate: " + itoa(e.Estimate),
	}
}

// percentLabel is LoadGen's DoubleToString(p * 100, 1): fixed notation with
// one decimal, correctly rounded (ties to even) like printf("%.1f").
func percentLabel(p float64) string {
	return strconv.FormatFloat(float64(p*100), 'f', 1, 64)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
