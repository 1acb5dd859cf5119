package bundle

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"aimeter/loadgen"
)

// checkRunInfo refuses settings.json values that no run can have written
// and that would make the summary meaningless or panic (ReadRunInfo
// already refuses an unknown scenario or mode): the effective target
// percentile, samples per query and rates, the requested settings (as
// loadgen.Settings.Validate checked them before the run) and the passes'
// sequence ranges. The error is a *loadgen.FieldError naming the key.
func checkRunInfo(info *RunInfo) error {
	e := &info.Effective
	bad := func(key string, v any, allowed string) error {
		return &loadgen.FieldError{Field: key, Value: v, Allowed: allowed}
	}
	if p := e.TargetLatencyPercentile; !(p > 0 && p < 1) {
		return bad("effective.target_latency_percentile", p, "must be in (0, 1)")
	}
	if e.SamplesPerQuery == 0 {
		return bad("effective.samples_per_query", 0, "must be ≥ 1")
	}
	if q := e.TargetQPS; !(q > 0) || math.IsInf(q, 0) {
		return bad("effective.target_qps", q, "must be a finite number > 0")
	}
	if p := e.AccuracyLogProbability; !(p >= 0 && p <= 1) {
		return bad("effective.accuracy_log_probability", p, "must be in [0, 1]")
	}
	if e.TargetLatencyNs < 0 || e.TTFTLatencyNs < 0 || e.TPOTLatencyNs < 0 {
		return bad("effective.target_latency_ns", e.TargetLatencyNs, "latency bounds must be ≥ 0 ns")
	}
	// The requested settings passed loadgen's validation before the run.
	if err := info.Requested.Validate(); err != nil {
		var fe *loadgen.FieldError
		if errors.As(err, &fe) {
			return bad("requested."+fe.Field, fe.Value, fe.Allowed)
		}
		return fmt.Errorf("requested: %w", err)
	}
	for i, p := range info.Passes {
		key := func(field string) string { return fmt.Sprintf("passes[%d].%s", i, field) }
		if p.EndSeq < p.FirstSeq {
			return bad(key("end_seq"), p.EndSeq, fmt.Sprintf("must be ≥ first_seq (%d)", p.FirstSeq))
		}
		if i > 0 && p.FirstSeq < info.Passes[i-1].EndSeq {
			return bad(key("first_seq"), p.FirstSeq, fmt.Sprintf("must be ≥ the previous pass's end_seq (%d): passes do not overlap", info.Passes[i-1].EndSeq))
		}
		if q := p.TargetQPS; !(q >= 0) || math.IsInf(q, 0) {
			return bad(key("target_qps"), q, "must be a finite number ≥ 0")
		}
		if p.EndNs < 0 {
			return bad(key("end_ns"), p.EndNs, "must be ≥ 0")
		}
	}
	return nil
}

// checkedRecord is the fields of a record that checkRecords checks.
type checkedRecord struct {
	SeqID, SampleIndex                               uint64
	ScheduledNs, IssuedNs, FirstTokenNs, CompletedNs int64
	Status                                           loadgen.Status
}

// checkRecords refuses records that no run can have produced, naming the
// first offending row of the record file (file is RecordsFile or
// RecordsCSVFile; in records.csv line = index + 2, the header being line
// 1, in records.parquet row = index + 1) and its field: a sequence id outside every pass or given twice, a
// sample index outside the QSL, an ok or error row without a completion
// time, a lost row with one, and times out of order (scheduled ≤ issued ≤
// first token ≤ completed).
func checkRecords(recs *loadgen.RecordTable, info *RunInfo, file string) error {
	first, what := 2, "line" // records.csv: the header is line 1
	if file == RecordsFile {
		first, what = 1, "row"
	}
	bad := func(i int, field, format string, args ...any) error {
		return &RecordsError{File: file, Line: i + first, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	passes := info.Passes
	pass := 0 // the pass of the previous record: records usually come in order
	inPass := func(seq uint64) bool {
		if pass < len(passes) && seq >= passes[pass].FirstSeq && seq < passes[pass].EndSeq {
			return true
		}
		j := slices.IndexFunc(passes, func(p loadgen.PassInfo) bool { return seq >= p.FirstSeq && seq < p.EndSeq })
		if j < 0 {
			return false
		}
		pass = j
		return true
	}
	sorted := true
	i := -1
	var prev uint64
	// By column, a block at a time: no loadgen.Record is built.
	for c := range recs.Blocks(0) {
		n := c.Len()
		seqs, index, sched, issued := c.SeqID[:n], c.SampleIndex[:n], c.ScheduledNs[:n], c.IssuedNs[:n]
		firstTok, done, status := c.FirstTokenNs[:n], c.CompletedNs[:n], c.Status[:n]
		for j, seq := range seqs {
			i++
			r := checkedRecord{SeqID: seq, SampleIndex: index[j], ScheduledNs: sched[j], IssuedNs: issued[j],
				FirstTokenNs: firstTok[j], CompletedNs: done[j], Status: status[j]}
			if !inPass(r.SeqID) {
				return bad(i, "seq_id", "%d is in no pass of %s", r.SeqID, SettingsFile)
			}
			if i > 0 && r.SeqID <= prev {
				if r.SeqID == prev {
					return bad(i, "seq_id", "%d appears twice (%s %d)", r.SeqID, what, i-1+first)
				}
				sorted = false
			}
			prev = r.SeqID
			if info.QSLTotalCount > 0 && r.SampleIndex >= info.QSLTotalCount {
				return bad(i, "sample_index", "%d is outside the QSL of %d samples", r.SampleIndex, info.QSLTotalCount)
			}
			if r.ScheduledNs < 0 && r.ScheduledNs != loadgen.NoTime {
				return bad(i, "scheduled_ns", "%d is negative", r.ScheduledNs)
			}
			if r.IssuedNs == loadgen.NoTime {
				return bad(i, "issued_ns", "missing: every recorded sample was issued")
			}
			if r.IssuedNs < r.ScheduledNs {
				return bad(i, "issued_ns", "%d is before scheduled_ns %d", r.IssuedNs, r.ScheduledNs)
			}
			switch r.Status {
			case loadgen.StatusOK, loadgen.StatusError:
				if r.CompletedNs == loadgen.NoTime {
					return bad(i, "completed_ns", "missing for a row with status %s", r.Status)
				}
				if r.CompletedNs < r.IssuedNs {
					return bad(i, "completed_ns", "%d is before issued_ns %d", r.CompletedNs, r.IssuedNs)
				}
			case loadgen.StatusLost:
				if r.CompletedNs != loadgen.NoTime {
					return bad(i, "completed_ns", "%d given for a lost sample, which never completed", r.CompletedNs)
				}
			}
			if r.FirstTokenNs != loadgen.NoTime {
				if r.FirstTokenNs < r.IssuedNs {
					return bad(i, "first_token_ns", "%d is before issued_ns %d", r.FirstTokenNs, r.IssuedNs)
				}
				if r.CompletedNs != loadgen.NoTime && r.FirstTokenNs > r.CompletedNs {
					return bad(i, "first_token_ns", "%d is after completed_ns %d", r.FirstTokenNs, r.CompletedNs)
				}
			}
		}
	}
	if sorted {
		return nil
	}
	// Out of order: find a repeated sequence id through the sorted order.
	order := make([]int, recs.Len())
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(recs.SeqID(a), recs.SeqID(b))
	})
	for k := 1; k < len(order); k++ {
		if a, b := order[k-1], order[k]; recs.SeqID(a) == recs.SeqID(b) {
			return bad(b, "seq_id", "%d appears twice (%s %d)", recs.SeqID(b), what, a+first)
		}
	}
	return nil
}
