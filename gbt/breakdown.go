package gbt

import (
	"fmt"
	"math"
	"time"

	"aimeter/loadgen"
)

// TimeMetric identifies one per-sample time metric of the Table 16 breakdown
// (GB-7.6.2-*), plus the two tester-side, non-GB token metrics that IN-66
// and IN-67 allow as labelled additions.
type TimeMetric int

// The per-sample time metrics, in the order of Table 16. T_I, the total
// latency of the run, is one value per run and lives in Breakdown.TI.
const (
	MetricTTI           TimeMetric = iota // T_TI, tester send → tester receipt (GB-7.6.2-TTI)
	MetricTIT                             // T_IT, tester send → SUT receipt (GB-7.6.2-TIT)
	MetricTIR                             // T_IR, SUT result send → tester receipt (GB-7.6.2-TIR)
	MetricTDIS                            // T_DIS, SUT receipt → processing start (GB-7.6.2-TDIS)
	MetricTIPR                            // T_IPR, preprocessing (GB-7.6.2-TIPR)
	MetricTIN                             // T_IN, inference (GB-7.6.2-TIN)
	MetricTIPO                            // T_IPO, post-processing (GB-7.6.2-TIPO)
	MetricTIP                             // T_IP, whole processing (GB-7.6.2-TIP)
	MetricTDIP                            // T_DIP, SUT receipt → processing end (GB-7.6.2-TDIP)
	MetricTFToken                         // T_ftoken, SUT receipt → first result byte sent (GB-7.6.2-TFTOKEN, IN-66)
	MetricTNToken                         // T_ntoken, SUT-side mean inter-token send time (GB-7.6.2-TNTOKEN, IN-67)
	MetricTesterTTFT                      // tester-side time to first token, non-GB (IN-66)
	MetricTesterTNToken                   // tester-side mean next-token latency, the IN-67 fallback
	numTimeMetrics
)

// Sides of the measurement: who takes the timestamps of a metric.
const (
	SideTester = "tester"     // both points on the test system (load generator)
	SideSUT    = "SUT"        // both points on the tested party's side
	SideCross  = "tester+SUT" // one point on each side: needs synchronised clocks (IN-69)
)

// ReasonClocksNotSynchronised is why T_IT and T_IR are not computed from
// stage times taken on the SUT's own clock (loadgen.SUTClock).
const ReasonClocksNotSynchronised = "tester and SUT clocks are not synchronised (IN-69)"

// ReasonNoStages is why the SUT-side metrics are missing when the SUT
// reported no stage times at all.
const ReasonNoStages = "the SUT reported no stage times"

// ReasonNoTokenTimes is why the GB T_ntoken is not computed: StageTimes
// carries only the first result send time t^1_IRS, not t^n_IRS of every
// token (IN-67); the tester-side fallback is t_ntoken_tester_ms.
const ReasonNoTokenTimes = "the SUT reports no per-token send times t^n_IRS (IN-67); see t_ntoken_tester_ms"

// TimeStat is one per-sample time metric of a run: its summary Stat over the
// absolute values of the per-sample differences (GB-7.6.2-T16-note), how many
// of the signed differences were negative (IN-68), and whether it could be
// computed at all.
type TimeStat struct {
	// Symbol is the standard's symbol, e.g. "T_TI".
	Symbol string `json:"symbol"`
	// Requirement is the requirement ID, "" for the non-GB additions.
	Requirement string `json:"requirement,omitempty"`
	// Side says who takes the two timestamps (SideTester, SideSUT, SideCross).
	Side string `json:"side"`
	// GB is false for the labelled, non-GB additions (IN-66, IN-67).
	GB bool `json:"gb"`
	// Available is false when no completed sample had both timing points.
	Available bool `json:"available"`
	// Reason says why the metric is not available.
	Reason string `json:"reason,omitempty"`
	// Note says how the metric is computed where the standard leaves a choice.
	Note string `json:"note,omitempty"`
	// Stat is over |Δ| of the completed samples that had both points, ms.
	Stat Stat `json:"stat"`
	// Missing counts completed samples without both timing points.
	Missing int `json:"missing"`
	// OtherClock counts completed samples left out because their stage times
	// are on the SUT's clock (cross-clock metrics only, IN-69).
	OtherClock int `json:"other_clock,omitempty"`
	// Negative counts negative signed differences (IN-68); Stat holds their
	// absolute values.
	Negative int `json:"negative"`
	// NegativeFlagged counts negative differences larger in magnitude than
	// the clock uncertainty (cross-clock metrics) or any negative difference
	// (single-clock metrics, where a negative value is a timestamp error).
	NegativeFlagged int `json:"negative_flagged"`
	// MostNegativeMs is the most negative signed difference (0 if none).
	MostNegativeMs float64 `json:"most_negative_ms"`
}

// TotalLatency is T_I, the total latency of the run (GB-7.6.2-TI): from the
// first byte of the first sample sent to the last result byte received or the
// last processing-timeout point, whichever is later (IN-64).
type TotalLatency struct {
	// Available is false when the run has no end point; Reason says why.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	// Ms is t_IE − t_IS in milliseconds.
	Ms float64 `json:"value"`
	// StartNs is t_IS (the first issue); EndNs is t_IE.
	StartNs int64 `json:"start_ns"`
	EndNs   int64 `json:"end_ns"`
	// EndIsDeadline is true when t_IE is a lost sample's deadline T_OUT
	// rather than a receipt.
	EndIsDeadline bool `json:"end_is_deadline"`
}

// Breakdown is the Table 16 time breakdown of a run (GB-7.6.2-*). JSON keys
// keep the standard's symbols with the unit, "t_ti_ms" for T_TI.
type Breakdown struct {
	// Records counts all issued samples; Completed the status-ok ones, over
	// which the per-sample metrics are computed. Errors and Lost samples are
	// counted but left out of the per-sample metrics.
	Records   int `json:"records"`
	Completed int `json:"completed"`
	Errors    int `json:"errors"`
	Lost      int `json:"lost"`

	TI            TotalLatency `json:"t_i_ms"`             // T_I, GB-7.6.2-TI, IN-64
	TTI           TimeStat     `json:"t_ti_ms"`            // T_TI, GB-7.6.2-TTI
	TIT           TimeStat     `json:"t_it_ms"`            // T_IT, GB-7.6.2-TIT (test clock only, IN-69)
	TIR           TimeStat     `json:"t_ir_ms"`            // T_IR, GB-7.6.2-TIR (test clock only, IN-69)
	TDIS          TimeStat     `json:"t_dis_ms"`           // T_DIS, GB-7.6.2-TDIS, IN-62
	TIPR          TimeStat     `json:"t_ipr_ms"`           // T_IPR, GB-7.6.2-TIPR
	TIN           TimeStat     `json:"t_in_ms"`            // T_IN, GB-7.6.2-TIN
	TIPO          TimeStat     `json:"t_ipo_ms"`           // T_IPO, GB-7.6.2-TIPO
	TIP           TimeStat     `json:"t_ip_ms"`            // T_IP, GB-7.6.2-TIP
	TDIP          TimeStat     `json:"t_dip_ms"`           // T_DIP, GB-7.6.2-TDIP
	TFToken       TimeStat     `json:"t_ftoken_ms"`        // T_ftoken, GB-7.6.2-TFTOKEN, IN-66
	TNToken       TimeStat     `json:"t_ntoken_ms"`        // T_ntoken, GB-7.6.2-TNTOKEN: unavailable (IN-67)
	TesterTTFT    TimeStat     `json:"ttft_tester_ms"`     // tester-side TTFT, non-GB (IN-66)
	TesterTNToken TimeStat     `json:"t_ntoken_tester_ms"` // tester-side T_ntoken fallback (IN-67)

	// Warnings lists validity warnings (negative differences, IN-68).
	Warnings []string `json:"warnings,omitempty"`
}

// BreakdownOptions are the parameters of Breakdown.
type BreakdownOptions struct {
	// Timeout is t*_OUT, the timeout-control threshold of Table 10
	// (GB-7.6.2-TOUT, IN-63): a lost sample's deadline is T_OUT = t_TIS +
	// Timeout, its issue time plus Timeout, as loadgen.Options.SampleTimeout
	// applies it. 0 means no timeout (offline mode, IN-51): lost samples then
	// do not move t_IE.
	Timeout time.Duration
	// ClockUncertainty is the measured uncertainty of the tester↔SUT clock
	// offset (IN-69). Negative T_IT or T_IR within it are counted but not
	// flagged (IN-68).
	ClockUncertainty time.Duration
}

// Metric returns the TimeStat of m, or nil for an unknown metric.
func (b *Breakdown) Metric(m TimeMetric) *TimeStat {
	switch m {
	case MetricTTI:
		return &b.TTI
	case MetricTIT:
		return &b.TIT
	case MetricTIR:
		return &b.TIR
	case MetricTDIS:
		return &b.TDIS
	case MetricTIPR:
		return &b.TIPR
	case MetricTIN:
		return &b.TIN
	case MetricTIPO:
		return &b.TIPO
	case MetricTIP:
		return &b.TIP
	case MetricTDIP:
		return &b.TDIP
	case MetricTFToken:
		return &b.TFToken
	case MetricTNToken:
		return &b.TNToken
	case MetricTesterTTFT:
		return &b.TesterTTFT
	case MetricTesterTNToken:
		return &b.TesterTNToken
	}
	return nil
}

// Key returns the JSON key of m ("t_ti_ms"), or "" for an unknown metric.
func (m TimeMetric) Key() string {
	if m < 0 || m >= numTimeMetrics {
		return ""
	}
	return timeMetricDefs[m].key
}

// Delta returns the signed difference, in ns, that m takes from one sample:
// the value IN-68 asks to store (Stat reports |Δ|, GB-7.6.2-T16-note), e.g.
// for a per-sample export. It reports false when the sample lacks one of the
// timing points, when m needs the test clock and s is on the SUT's (IN-69),
// and for T_ntoken, which StageTimes cannot give (IN-67). s may be nil. The
// sample's status is not looked at.
func (m TimeMetric) Delta(r *loadgen.Record, s *loadgen.StageTimes) (int64, bool) {
	if m < 0 || m >= numTimeMetrics || timeMetricDefs[m].extract == nil {
		return 0, false
	}
	d, st := timeMetricDefs[m].extract(r, s)
	return d, st == pointOK
}

// TimeMetrics returns every per-sample time metric in Table 16 order.
func TimeMetrics() []TimeMetric {
	out := make([]TimeMetric, numTimeMetrics)
	for i := range out {
		out[i] = TimeMetric(i)
	}
	return out
}

// pointStatus is what a metric's extractor found for one sample.
type pointStatus uint8

const (
	pointOK         pointStatus = iota
	pointMissing                // a timing point was not measured
	pointOtherClock             // stage times on the SUT clock, metric needs the test clock
)

// timeMetricDef describes how a metric is taken from one sample.
type timeMetricDef struct {
	key, symbol, req, side string
	gb                     bool
	needsStages            bool
	note                   string
	// fixedReason, if set, makes the metric always unavailable.
	fixedReason string
	// extract returns the signed difference in ns. s is nil without stages.
	extract func(r *loadgen.Record, s *loadgen.StageTimes) (int64, pointStatus)
}

// dispatchEnd is t_DISE: the preprocessing start if the SUT measured one,
// else the inference start (GB-7.6.2-T16-FNb, applied to T_DIS per IN-62).
// It is also t_IPS, the start of processing (GB-7.6.2-TIP, IN-70).
func dispatchEnd(s *loadgen.StageTimes) int64 {
	if s.PreprocessStart != loadgen.NoTime {
		return s.PreprocessStart
	}
	return s.InferenceStart
}

// processEnd is t_IPE = t_IPOE = t_DIPE: the post-processing end if the SUT
// measured one, else the inference end (IN-70).
func processEnd(s *loadgen.StageTimes) int64 {
	if s.PostprocessEnd != loadgen.NoTime {
		return s.PostprocessEnd
	}
	return s.InferenceEnd
}

// diff returns end − start, or pointMissing when either is NoTime.
func diff(start, end int64) (int64, pointStatus) {
	if start == loadgen.NoTime || end == loadgen.NoTime {
		return 0, pointMissing
	}
	return end - start, pointOK
}

var timeMetricDefs = [numTimeMetrics]timeMetricDef{
	MetricTTI: {
		key: "t_ti_ms", symbol: "T_TI", req: "GB-7.6.2-TTI", side: SideTester, gb: true,
		note: "t_TIE − t_TIS: completion − issue (the send time); MLPerf latency is measured from the scheduled time instead",
		extract: func(r *loadgen.Record, _ *loadgen.StageTimes) (int64, pointStatus) {
			return diff(r.IssuedNs, r.CompletedNs)
		},
	},
	MetricTIT: {
		key: "t_it_ms", symbol: "T_IT", req: "GB-7.6.2-TIT", side: SideCross, gb: true, needsStages: true,
		note: "t_ITR − t_ITS: SUT receipt (test clock) − issue",
		extract: func(r *loadgen.Record, s *loadgen.StageTimes) (int64, pointStatus) {
			if s == nil {
				return 0, pointMissing
			}
			if s.Clock != loadgen.TestClock {
				return 0, pointOtherClock
			}
			return diff(r.IssuedNs, s.Received)
		},
	},
	MetricTIR: {
		key: "t_ir_ms", symbol: "T_IR", req: "GB-7.6.2-TIR", side: SideCross, gb: true, needsStages: true,
		note: "t_IRR − t_IRS: completion − SUT result send (test clock)",
		extract: func(r *loadgen.Record, s *loadgen.StageTimes) (int64, pointStatus) {
			if s == nil {
				return 0, pointMissing
			}
			if s.Clock != loadgen.TestClock {
				return 0, pointOtherClock
			}
			return diff(s.ResultSent, r.CompletedNs)
		},
	},
	MetricTDIS: {
		key: "t_dis_ms", symbol: "T_DIS", req: "GB-7.6.2-TDIS", side: SideSUT, gb: true, needsStages: true,
		note: "t_DISE − t_DISS; t_DISE = preprocessing start if measured, else inference start (GB-7.6.2-T16-FNb, IN-62)",
		extract: func(_ *loadgen.Record, s *loadgen.StageTimes) (int64, pointStatus) {
			if s == nil {
				return 0, pointMissing
			}
			return diff(s.Received, dispatchEnd(s))
		},
	},
	MetricTIPR: {
		key: "t_ipr_ms", symbol: "T_IPR", req: "GB-7.6.2-TIPR", side: SideSUT, gb: true, needsStages: true,
		extract: func(_ *loadgen.Record, s *loadgen.StageTimes) (int64, pointStatus) {
			if s == nil {
				return 0, pointMissing
			}
			return diff(s.PreprocessStart, s.PreprocessEnd)
		},
	},
	MetricTIN: {
		key: "t_in_ms", symbol: "T_IN", req: "GB-7.6.2-TIN", side: SideSUT, gb: true, needsStages: true,
		extract: func(_ *loadgen.Record, s *loadgen.StageTimes) (int64, pointStatus) {
			if s == nil {
				return 0, pointMissing
			}
			return diff(s.InferenceStart, s.InferenceEnd)
		},
	},
	MetricTIPO: {
		key: "t_ipo_ms", symbol: "T_IPO", req: "GB-7.6.2-TIPO", side: SideSUT, gb: true, needsStages: true,
		extract: func(_ *loadgen.Record, s *loadgen.StageTimes) (int64, pointStatus) {
			if s == nil {
				return 0, pointMissing
			}
			return diff(s.PostprocessStart, s.PostprocessEnd)
		},
	},
	MetricTIP: {
		key: "t_ip_ms", symbol: "T_IP", req: "GB-7.6.2-TIP", side: SideSUT, gb: true, needsStages: true,
		note: "t_IPE − t_IPS; t_IPS = preprocessing start, else inference start; t_IPE = post-processing end, else inference end (IN-70)",
		extract: func(_ *loadgen.Record, s *loadgen.StageTimes) (int64, pointStatus) {
			if s == nil {
				return 0, pointMissing
			}
			return diff(dispatchEnd(s), processEnd(s))
		},
	},
	MetricTDIP: {
		key: "t_dip_ms", symbol: "T_DIP", req: "GB-7.6.2-TDIP", side: SideSUT, gb: true, needsStages: true,
		note: "t_DIPE − t_DIPS = t_IPE − t_ITR (IN-70)",
		extract: func(_ *loadgen.Record, s *loadgen.StageTimes) (int64, pointStatus) {
			if s == nil {
				return 0, pointMissing
			}
			return diff(s.Received, processEnd(s))
		},
	},
	MetricTFToken: {
		key: "t_ftoken_ms", symbol: "T_ftoken", req: "GB-7.6.2-TFTOKEN", side: SideSUT, gb: true, needsStages: true,
		note: "t_IRS − t_ITR on the SUT side (IN-66)",
		extract: func(_ *loadgen.Record, s *loadgen.StageTimes) (int64, pointStatus) {
			if s == nil {
				return 0, pointMissing
			}
			return diff(s.Received, s.ResultSent)
		},
	},
	MetricTNToken: {
		key: "t_ntoken_ms", symbol: "T_ntoken", req: "GB-7.6.2-TNTOKEN", side: SideSUT, gb: true, needsStages: true,
		fixedReason: ReasonNoTokenTimes,
	},
	MetricTesterTTFT: {
		key: "ttft_tester_ms", symbol: "TTFT (tester)", side: SideTester,
		note: "non-GB addition (IN-66): first token received − issue, on the tester",
		extract: func(r *loadgen.Record, _ *loadgen.StageTimes) (int64, pointStatus) {
			return diff(r.IssuedNs, r.FirstTokenNs)
		},
	},
	MetricTesterTNToken: {
		key: "t_ntoken_tester_ms", symbol: "T_ntoken (tester)", side: SideTester,
		note: "tester-side fallback of T_ntoken (IN-67): (completion − first token) / (tokens − 1), samples with ≥ 2 tokens, rounded to the ns",
		extract: func(r *loadgen.Record, _ *loadgen.StageTimes) (int64, pointStatus) {
			if r.Tokens < 2 {
				return 0, pointMissing
			}
			d, st := diff(r.FirstTokenNs, r.CompletedNs)
			if st != pointOK {
				return 0, st
			}
			return divRound(d, r.Tokens-1), pointOK
		},
	},
}

// divRound is a/b rounded to the nearest integer, halves away from zero
// (b > 0).
func divRound(a, b int64) int64 {
	q, r := a/b, a%b
	if 2*absNs(r) >= b {
		if a < 0 {
			q--
		} else {
			q++
		}
	}
	return q
}

// Breakdown computes the Table 16 time breakdown of a run from its records
// and, when the SUT reported them, its stage times (stages parallel to
// records; nil when there are none). Per-sample metrics cover the samples
// with status ok; errors and lost samples are counted only. Each metric's
// signed differences are kept long enough to count negatives (IN-68) and
// summarised over their absolute values (GB-7.6.2-T16-note).
//
// It allocates two scratch slices of len(records) int64 and reuses them for
// every metric; nothing is allocated per sample. It panics if stages is not
// nil and not as long as records.
func ComputeBreakdown(records []loadgen.Record, stages []loadgen.StageTimes, opts BreakdownOptions) Breakdown {
	if stages != nil && len(stages) != len(records) {
		panic(fmt.Sprintf("gbt.ComputeBreakdown: %d records but %d stage times", len(records), len(stages)))
	}
	var b Breakdown
	b.Records = len(records)
	for i := range records {
		switch records[i].Status {
		case loadgen.StatusOK:
			b.Completed++
		case loadgen.StatusError:
			b.Errors++
		case loadgen.StatusLost:
			b.Lost++
		}
	}
	b.TI = totalLatency(records, opts.Timeout)

	// ok[i] marks the completed samples once, so that the SUT-side metrics
	// read only the stage times (the loops are memory-bound).
	ok := make([]bool, len(records))
	for i := range records {
		ok[i] = records[i].Status == loadgen.StatusOK
	}
	buf := make([]int64, b.Completed)
	tmp := make([]int64, b.Completed)
	for m := range numTimeMetrics {
		ts := b.Metric(m)
		computeTimeStat(ts, &timeMetricDefs[m], records, stages, ok, opts, buf, tmp)
		if ts.NegativeFlagged > 0 {
			b.Warnings = append(b.Warnings, fmt.Sprintf(
				"%s: %d negative differences (most negative %.6g ms)%s; reported as absolute values (IN-68)",
				ts.Symbol, ts.NegativeFlagged, ts.MostNegativeMs, flagScope(m)))
		}
	}
	return b
}

// flagScope words the warning of a metric's flagged negatives.
func flagScope(m TimeMetric) string {
	if timeMetricDefs[m].side == SideCross {
		return " beyond the clock uncertainty: tester and SUT clocks disagree"
	}
	return ": the timestamps are out of order"
}

// computeTimeStat fills ts for one metric over the samples marked in ok,
// using buf and tmp as scratch.
func computeTimeStat(ts *TimeStat, def *timeMetricDef, records []loadgen.Record, stages []loadgen.StageTimes,
	ok []bool, opts BreakdownOptions, buf, tmp []int64) {
	*ts = TimeStat{Symbol: def.symbol, Requirement: def.req, Side: def.side, GB: def.gb, Note: def.note}
	if def.fixedReason != "" {
		ts.Reason = def.fixedReason
		return
	}
	if def.needsStages && stages == nil {
		ts.Reason = ReasonNoStages
		return
	}
	tolerance := int64(0)
	if def.side == SideCross {
		tolerance = int64(opts.ClockUncertainty)
	}
	vals := buf[:0]
	mostNeg := int64(0)
	for i, r := range ok {
		if !r {
			continue
		}
		var s *loadgen.StageTimes
		if stages != nil {
			s = &stages[i]
		}
		d, st := def.extract(&records[i], s)
		switch st {
		case pointMissing:
			ts.Missing++
			continue
		case pointOtherClock:
			ts.OtherClock++
			continue
		}
		if d < 0 {
			ts.Negative++
			if -d > tolerance || d == math.MinInt64 {
				ts.NegativeFlagged++
			}
			mostNeg = min(mostNeg, d)
			d = absNs(d)
		}
		vals = append(vals, d)
	}
	ts.MostNegativeMs = float64(mostNeg) / nsPerMs
	if len(vals) == 0 {
		switch {
		case ts.OtherClock > 0:
			ts.Reason = ReasonClocksNotSynchronised
		default:
			ts.Reason = "no completed sample has both timing points"
		}
		return
	}
	ts.Available = true
	sortNonNegative(vals, tmp)
	ts.Stat = statOfSorted(vals)
}

// totalLatency computes T_I (GB-7.6.2-TI): t_IS is the earliest issue; t_IE
// is the latest receipt (status ok or error: a result byte arrived) or, with
// a timeout, the latest deadline T_OUT = issue + timeout of a lost sample
// (IN-63, IN-64).
func totalLatency(records []loadgen.Record, timeout time.Duration) TotalLatency {
	if len(records) == 0 {
		return TotalLatency{Reason: "no sample was issued"}
	}
	t := TotalLatency{StartNs: math.MaxInt64, EndNs: math.MinInt64}
	have := false
	for i := range records {
		r := &records[i]
		t.StartNs = min(t.StartNs, r.IssuedNs)
		end := loadgen.NoTime
		deadline := false
		switch {
		case r.Status == loadgen.StatusLost:
			if timeout > 0 {
				end, deadline = r.IssuedNs+int64(timeout), true
			}
		case r.CompletedNs != loadgen.NoTime:
			end = r.CompletedNs
		}
		if end == loadgen.NoTime {
			continue
		}
		have = true
		if end > t.EndNs || (end == t.EndNs && !deadline) {
			t.EndNs, t.EndIsDeadline = end, deadline
		}
	}
	if !have {
		return TotalLatency{Reason: "no result was received and no lost sample has a deadline (no timeout)", StartNs: t.StartNs, EndNs: loadgen.NoTime}
	}
	t.Available = true
	t.Ms = float64(t.EndNs-t.StartNs) / nsPerMs
	return t
}
