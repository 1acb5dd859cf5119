package loadgen

// ResponseID identifies one issued sample. It is never zero. Pass it back
// unchanged to the Responder when the sample completes.
type ResponseID uint64

// QuerySample is one sample of a query: the ID to complete it with and the
// index of the sample in the QSL.
type QuerySample struct {
	ID    ResponseID
	Index uint64
}

// SUT is the system under test.
//
// IssueQuery is called from the issuing goroutine (or, for Server with
// server_num_issue_query_threads > 0, from one of several). It may complete
// the samples before it returns or later from any goroutine, through r. The
// samples slice stays valid and unchanged until the test ends, so an
// asynchronous SUT may keep it instead of copying; it must not modify it.
//
// A panic inside IssueQuery is recovered, recorded as an error and ends the
// run; the samples it was given are then lost.
type SUT interface {
	// Name is logged as sut_name.
	Name() string
	// IssueQuery hands samples to the SUT.
	IssueQuery(r *Responder, samples []QuerySample)
	// FlushQueries is called once after the last IssueQuery of each series
	// (each accuracy set, the performance run, each find-peak probe).
	FlushQueries()
}

// QSL is the query sample library: the data set the samples come from.
type QSL interface {
	// Name is logged as qsl_name.
	Name() string
	// TotalSampleCount is the size of the data set.
	TotalSampleCount() uint64
	// PerformanceSampleCount is how many samples fit in memory at once.
	PerformanceSampleCount() uint64
	// LoadSamples loads one loadable set. MultiStream sets end with padding
	// copies of their first samples, so an index can appear twice.
	LoadSamples(indices []uint64) error
	// UnloadSamples releases a set loaded by LoadSamples.
	UnloadSamples(indices []uint64) error
}

// Response is what a SUT reports when one sample ends: its output and,
// optionally, what it measured on the way. Responder.Respond and
// RespondBatch take it; Complete, CompleteBatch, CompleteWithStages and Fail
// are shorthands for common cases. Only ID is required; every other field
// may be left at its zero value, and a field left at zero costs nothing: the
// per-sample column that stores it is allocated on the first sample that
// reports it.
type Response struct {
	ID ResponseID
	// Data is the output of the sample. It is copied if the response goes to
	// the accuracy log, so the caller may reuse it after the call.
	Data []byte
	// Tokens is the number of output tokens (LLMs); 0 otherwise.
	Tokens int64
	// Stages, if not nil, are the SUT-side timing points of the sample
	// (GB/T 45087 Table 16); see StageTimes.
	Stages *StageTimes
	// Err, if not nil, says the SUT could not process the sample: it is
	// recorded with status "error", counts as completed for scheduling and
	// makes the result INVALID, as with Fail. Its category and code (see
	// CategoryError, WithCode) group it in Result.Errors. A sample that is
	// never completed is lost, not failed: timeouts of the tester are no
	// errors.
	Err error
	// RequestBytes and ResponseBytes are the bytes the sample took on the
	// wire, each way (network SUTs); 0 when not measured.
	RequestBytes, ResponseBytes int64
	// Node is which node of a dispatcher served the sample. 0 means "not
	// reported", so a dispatcher numbers its nodes from 1.
	Node uint32
	// TokenTimes, if not empty, are the arrival times of every output token
	// of a streaming response, on the run's clock (Responder.Now or At). They
	// are copied. With token latencies on, the first of them is also the
	// first-token time of the sample unless FirstToken reported one already.
	// They must be in order and lie between the query's issue and the
	// completion; otherwise they are dropped and counted as a protocol
	// error (PassInfo.ProtocolErrors), while the completion itself counts.
	TokenTimes []int64
}
