package loadgen

// StageTimes are the SUT-side timing points of one sample, as GB/T 45087
// Table 16 defines them (GB-7.6.2-TDIS … GB-7.6.2-TFTOKEN). A SUT reports
// them with Responder.CompleteWithStages. Every field is NoTime when the SUT
// did not measure it.
//
// With Clock == TestClock the times are on the run's own clock, in
// nanoseconds from the start of issuing of the pass (what Responder.Now
// returns), so they can be combined with the tester-side record times:
// in-process SUTs report this way. With Clock == SUTClock they come from the
// SUT's own clock (a server reporting W3C Server-Timing durations); only
// differences between them are meaningful, and metrics that mix them with
// tester times (T_IT, T_IR, the T_DIP interval union) are not computed.
type StageTimes struct {
	Clock ClockKind
	// Received is t_ITR = t_DISS = t_DIPS: the SUT has the whole sample.
	Received int64
	// PreprocessStart/End are t_IPRS and t_IPRE (t_IPRS = t_IPS = t_DISE
	// when there is preprocessing).
	PreprocessStart, PreprocessEnd int64
	// InferenceStart/End are t_INS and t_INE.
	InferenceStart, InferenceEnd int64
	// PostprocessStart/End are t_IPOS and t_IPOE (= t_IPE = t_DIPE).
	PostprocessStart, PostprocessEnd int64
	// ResultSent is t_IRS: immediately before the first byte of the result
	// (for generative models, of the first token) is sent.
	ResultSent int64
	// Node identifies the node that served the sample behind a dispatcher
	// (0 when there is one node), as written in stages.csv. It is separate
	// from Response.Node (Record.Node), where 0 means "not reported".
	Node uint32
}

// ClockKind says which clock StageTimes were taken on.
type ClockKind uint8

// Clock kinds.
const (
	// TestClock: the run's clock (in-process SUTs, Responder.Now).
	TestClock ClockKind = iota
	// SUTClock: the SUT's own clock, not synchronised with the tester.
	SUTClock
)

// NoStages is a StageTimes with nothing measured.
var NoStages = StageTimes{
	Received: NoTime, PreprocessStart: NoTime, PreprocessEnd: NoTime,
	InferenceStart: NoTime, InferenceEnd: NoTime, PostprocessStart: NoTime,
	PostprocessEnd: NoTime, ResultSent: NoTime,
}
