package stats

// SingleStreamAt is SingleStream of n ascending-sorted latencies that it
// reads through at(i), the i-th smallest (0-based), instead of a slice: a
// caller that streams its latencies from disk (package merge) finds the
// few ranks the check reads and answers them. The estimates it asks for
// depend on n and p alone, so a first call whose at records i and returns
// anything names the ranks a second call reads; each call needs its own
// EarlyStopping for the same answers as SingleStream on a fresh one (the
// memo's bracket steers MinPassing).
func (e *EarlyStopping) SingleStreamAt(n int64, p float64, at func(i int64) int64) SingleStreamResult {
	target := e.estimateAt(n, p, at)
	res := SingleStreamResult{Satisfied: target.Satisfied, Target: target}
	if !target.Satisfied {
		res.Lines = notEnoughLines(target)
		return res
	}
	res.Lines = estimateLines(target)
	p99 := e.estimateAt(n, MultiStreamInferencePercentile, at)
	res.P99 = &p99
	if p99.Satisfied {
		res.Lines = append(res.Lines,
			" * Early stopping "+percentLabel(p99.Percentile)+"th percentile estimate: "+itoa(p99.Estimate))
	} else {
		res.Lines = append(res.Lines,
			" * Not enough queries processed for "+percentLabel(p99.Percentile)+"th percentile",
			" early stopping estimate (would need to process at",
			" least "+itoa(p99.MinQueries)+" total queries).")
	}
	return res
}

// MultiStreamAt is MultiStream of n ascending-sorted per-query latencies
// read through at, as SingleStreamAt.
func (e *EarlyStopping) MultiStreamAt(n int64, p float64, at func(i int64) int64) MultiStreamResult {
	est := e.estimateAt(n, p, at)
	res := MultiStreamResult{Satisfied: est.Satisfied, Estimate: est}
	if est.Satisfied {
		res.Lines = estimateLines(est)
	} else {
		res.Lines = notEnoughLines(est)
	}
	return res
}

// estimateAt runs the SingleStream/MultiStream step at percentile p in
// LoadGen's call order over n sorted latencies read through at:
// MinPassing(1), then MinPassing(2), MinPassing(3), ... until n < h(i)+i.
func (e *EarlyStopping) estimateAt(n int64, p float64, at func(i int64) int64) PercentileEstimate {
	r := PercentileEstimate{Percentile: p, Queries: n}
	r.MinQueries = e.MinPassing(1, p, EarlyStoppingTolerance, EarlyStoppingConfidence) + 1
	if n < r.MinQueries {
		return r
	}
	r.Satisfied = true
	t := int64(1)
	for i := int64(2); i < n+1; i++ {
		if n < e.MinPassing(i, p, EarlyStoppingTolerance, EarlyStoppingConfidence)+i {
			t = i - 1
			break
		}
	}
	r.T = t
	r.Estimate = at(n - t)
	return r
}
