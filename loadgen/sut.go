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

// Response is the completion of one sample.
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
}
