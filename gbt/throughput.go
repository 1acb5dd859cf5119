package gbt

import (
	"fmt"
	"math"

	"aimeter/loadgen"
	"aimeter/stats"
)

// Bases of a throughput's time base.
const (
	// BasisTDIPUnion: the measure of the union of the samples' T_DIP
	// intervals [t_DIPS, t_DIPE] on the test clock (GB-7.6.4-T18-samples,
	// IN-74). The conformant basis.
	BasisTDIPUnion = "t_dip_union"
	// BasisTesterSpan: the tester-side span [first issue, last receipt],
	// used when no T_DIP interval is on the test clock. Not GB-conformant.
	BasisTesterSpan = "tester_span"
)

// Name names the figure by its basis, so that one name has one meaning:
// Table 18's inference throughput is the one on the T_DIP union
// (GB-7.6.4-T18-samples, IN-74); the tester-side span's figure, which
// includes the network and the client, is named apart and never as
// Table 18's.
func (th Throughput) Name() string {
	if th.Basis == BasisTDIPUnion {
		return "Inference throughput (Table 18, T_DIP union)"
	}
	return "Tester-side throughput (first issue to last answer; not Table 18)"
}

// ThroughputOptions are the parameters of InferenceThroughput.
type ThroughputOptions struct {
	// ExcludeFirstToken applies Table 18 d) (GB-7.6.4-T18-tokens): each
	// sample's first token is left out of the token count and its
	// first-token interval [t_ITR, t_IRS] out of the token time base
	// (IN-74 (4)). Default false: include it (IN-75).
	ExcludeFirstToken bool
}

// Throughput is the inference actual throughput of a run (Table 18,
// GB-7.6.4-T18-samples and GB-7.6.4-T18-tokens).
type Throughput struct {
	// Samples counts the samples whose result was returned (status ok);
	// Errors and Lost are reported alongside and not counted (IN-74 (3)).
	Samples int `json:"samples"`
	Errors  int `json:"errors"` // status error, not counted
	Lost    int `json:"lost"`   // status lost, not counted
	// Tokens counts the output tokens of the returned samples, less one per
	// sample when FirstTokenExcluded.
	Tokens             int64 `json:"tokens"`
	FirstTokenExcluded bool  `json:"first_token_excluded"` // Table 18 d) applied (IN-75)
	// Basis is BasisTDIPUnion or BasisTesterSpan; Conformant is true for
	// the former.
	Basis      string `json:"basis"`
	Conformant bool   `json:"conformant"`
	Note       string `json:"note,omitempty"` // labels a non-conformant basis
	// Intervals counts the T_DIP intervals in the union (all statuses:
	// a lost sample's reported processing stays in the time base, IN-74 (3)).
	Intervals int `json:"intervals"`
	// CoverNs is the time base of SamplesPerSecond; TokenCoverNs that of
	// TokensPerSecond (the same unless the first token is excluded).
	CoverNs      int64 `json:"cover_ns"`
	TokenCoverNs int64 `json:"token_cover_ns"`
	// SamplesPerSecond is Th_inf = N_samples / T_cover(T_DIP), in the
	// scenario's unit (images/s, sentences/s); TokensPerSecond is Th_tok
	// (tokens/s). Both are 0 when the time base is empty.
	SamplesPerSecond float64 `json:"samples_per_s"`
	TokensPerSecond  float64 `json:"tokens_per_s"`
	// Warnings lists what the caller should know about the basis.
	Warnings []string `json:"warnings,omitempty"`
}

// InferenceThroughput computes the Table 18 inference actual throughput:
// the returned samples (and their tokens) divided by the total time covered
// by the union of the samples' T_DIP intervals [Received, t_IPE] on the test
// clock (IN-74; stats.IntervalUnion). Stage times on the SUT's own clock
// cannot be laid on one time line (IN-69); when no interval is on the test
// clock it falls back to the tester-side span [first issue, last receipt]
// and says so (Basis, Conformant, Note).
//
// stages is parallel to records and may be nil. It panics if it is not nil
// and not as long as records.
func InferenceThroughput(records []loadgen.Record, stages []loadgen.StageTimes, opts ThroughputOptions) Throughput {
	if stages != nil && len(stages) != len(records) {
		panic(fmt.Sprintf("gbt.InferenceThroughput: %d records but %d stage times", len(records), len(stages)))
	}
	th := Throughput{FirstTokenExcluded: opts.ExcludeFirstToken}
	for i := range records {
		r := &records[i]
		switch r.Status {
		case loadgen.StatusOK:
			th.Samples++
			tok := r.Tokens
			if opts.ExcludeFirstToken && tok > 0 {
				tok--
			}
			th.Tokens += tok
		case loadgen.StatusError:
			th.Errors++
		case loadgen.StatusLost:
			th.Lost++
		}
	}

	// Count the intervals first so the union's inputs are allocated once.
	n, otherClock, noFirst := 0, 0, 0
	for i := range stages {
		s := &stages[i]
		if s.Received == loadgen.NoTime || processEnd(s) == loadgen.NoTime {
			continue
		}
		if s.Clock != loadgen.TestClock {
			otherClock++
			continue
		}
		n++
	}
	if n == 0 {
		th.Basis = BasisTesterSpan
		why := ReasonNoStages
		if otherClock > 0 {
			why = "the T_DIP intervals are on the SUT's clock: " + ReasonClocksNotSynchronised
		} else if stages != nil {
			why = "no sample has a measured T_DIP interval"
		}
		th.Note = "not GB-conformant: " + why + "; the tester-side span [first issue, last receipt] is the time base"
		th.CoverNs, th.TokenCoverNs = testerSpan(records, opts.ExcludeFirstToken)
	} else {
		th.Basis, th.Conformant = BasisTDIPUnion, true
		th.Intervals = n
		if otherClock > 0 {
			th.Warnings = append(th.Warnings, fmt.Sprintf(
				"%d T_DIP intervals on the SUT's clock are left out of the union (IN-69)", otherClock))
		}
		// The union is taken over intervals pre-sorted by start with a
		// linear-time radix sort: stats.IntervalUnion then sorts an
		// already-sorted slice, about five times faster on 10 M samples.
		starts, ends := make([]int64, n), make([]int64, n)
		tmpS, tmpE := make([]int64, n), make([]int64, n)
		if opts.ExcludeFirstToken {
			// The token time base leaves out [t_ITR, t_IRS]: the interval
			// becomes [t_IRS, t_DIPE] (IN-74 (4)).
			noFirst = collectTDIP(stages, starts, ends, true)
			sortPairs(starts, ends, tmpS, tmpE)
			th.TokenCoverNs = stats.IntervalUnion(starts, ends)
			if noFirst > 0 {
				th.Warnings = append(th.Warnings, fmt.Sprintf(
					"%d samples have no first-token send time t_IRS: their first-token interval stays in the token time base", noFirst))
			}
		}
		collectTDIP(stages, starts, ends, false)
		sortPairs(starts, ends, tmpS, tmpE)
		th.CoverNs = stats.IntervalUnion(starts, ends)
		if !opts.ExcludeFirstToken {
			th.TokenCoverNs = th.CoverNs
		}
	}
	if th.CoverNs > 0 {
		th.SamplesPerSecond = float64(th.Samples) / (float64(th.CoverNs) / nsPerSecond)
	}
	if th.TokenCoverNs > 0 {
		th.TokensPerSecond = float64(th.Tokens) / (float64(th.TokenCoverNs) / nsPerSecond)
	}
	return th
}

// collectTDIP writes the T_DIP intervals [t_DIPS, t_DIPE] of the stage times
// on the test clock into starts and ends (sized to their number). With
// fromFirstToken the start is t_IRS where measured (no earlier than t_DIPS);
// it returns how many intervals had no t_IRS.
func collectTDIP(stages []loadgen.StageTimes, starts, ends []int64, fromFirstToken bool) (noFirst int) {
	k := 0
	for i := range stages {
		s := &stages[i]
		e := processEnd(s)
		if s.Clock != loadgen.TestClock || s.Received == loadgen.NoTime || e == loadgen.NoTime {
			continue
		}
		starts[k], ends[k] = s.Received, e
		if fromFirstToken {
			if s.ResultSent != loadgen.NoTime {
				starts[k] = max(s.ResultSent, s.Received)
			} else {
				noFirst++
			}
		}
		k++
	}
	return noFirst
}

// testerSpan returns the tester-side span from the first issue (or, for the
// token base with the first token excluded, the first first-token receipt
// where one was recorded) to the last receipt.
func testerSpan(records []loadgen.Record, excludeFirst bool) (span, tokenSpan int64) {
	first, firstTok, last := int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MinInt64)
	for i := range records {
		r := &records[i]
		first = min(first, r.IssuedNs)
		ft := r.IssuedNs
		if excludeFirst && r.FirstTokenNs != loadgen.NoTime {
			ft = r.FirstTokenNs
		}
		firstTok = min(firstTok, ft)
		if r.Status != loadgen.StatusLost && r.CompletedNs != loadgen.NoTime {
			last = max(last, r.CompletedNs)
		}
	}
	if last == math.MinInt64 {
		return 0, 0
	}
	return max(last-first, 0), max(last-firstTok, 0)
}
