// Package loadgen is aimeter's load generator: a Go port of MLPerf
// Inference's LoadGen with the same semantics, so that a Go program can
// measure a system under test (SUT) the way an MLPerf submission does.
//
// # What it reproduces
//
// Settings, effective settings and validity follow LoadGen's
// TestSettings, its derived settings and its results rules
// (loadgen-reference §2, §9). Queries are generated from std::mt19937
// engines and libstdc++ distributions re-implemented bit for bit (package
// stdrand), so the sample indices and scheduled times of a run are
// identical to those of the C++ LoadGen built with GCC for the same
// settings and seeds (loadgen-reference §3–§5). They are generated before
// issuing starts, except in the closed-loop scenarios (SingleStream,
// MultiStream), whose performance passes are generated a chunk of queries
// at a time as the issuer reaches them: the same queries, drawn in the same
// order, but memory in proportion to the queries issued rather than to the
// twice-the-duration schedule LoadGen generates (millions of queries at a
// tiny expected latency, as in GB/T 45087's continuous arrival mode). The four
// scenarios (SingleStream, MultiStream, Server, Offline), the test modes
// (accuracy, performance, submission, find-peak) and token latencies for
// LLMs behave as LoadGen's do. Run writes no files: package mlperflog turns
// a Result into LoadGen's summary, detail, accuracy and trace files.
//
// # Latency
//
// Every query has a scheduled time on the run's clock (nanoseconds from
// the start of issuing of its pass; Offline queries are scheduled at 0). A
// sample's latency is its completion time minus its scheduled time, never
// minus the moment it was actually handed to the SUT, so an issuer or SUT
// that falls behind is charged for it (loadgen-reference §7). A Record
// keeps both times: ScheduledNs and IssuedNs.
//
// # The contract
//
// A QSL (query sample library) is the data set. Run calls LoadSamples and
// UnloadSamples from its own goroutine, around the passes that use a
// loadable set.
//
// A SUT receives queries through IssueQuery, called from the issuing
// goroutine (for Server with server_num_issue_query_threads > 0, from one
// of several issuing goroutines), and FlushQueries once after each series.
// IssueQuery must not block for long: it may end the samples at once, or
// hand them to its own workers and return. Samples end through the
// *Responder passed in, from any goroutine, exactly once each:
//
//   - Respond(Response) reports everything the SUT knows about one sample:
//     its output, token count, stage times, wire bytes, serving node,
//     token arrival times, or a failure (Response.Err).
//   - RespondBatch([]Response) does so for several samples with one
//     timestamp, like LoadGen's QuerySamplesComplete.
//   - Complete, CompleteBatch, CompleteWithStages and Fail are shorthands
//     for the common cases; FirstToken may precede the completion of an
//     LLM sample to record its time to first token.
//   - Now and At give the run's clock, for stage and token times.
//
// All Responder methods are safe for concurrent use and allocate nothing on
// the plain completion path; a completion for an unknown, not yet issued or
// already ended sample is a protocol error, and so are Response.TokenTimes
// outside the sample's issue-to-completion window or out of order (the
// completion counts, the times are dropped): each is counted
// (Result.UnknownCompletions, DuplicateCompletions, PassInfo.ProtocolErrors),
// makes the run INVALID as MLPerf's checker rejects a log with errors, and is
// otherwise ignored. A sample not ended in time
// (a timeout, a stall, a cancelled context) is lost: it is censored at the
// end of its pass and makes the run INVALID, but it is not an error. With
// Options.SampleTimeout the timestamps decide: a result completed after its
// sample's deadline is lost, whether or not a timer got there first, and is
// counted in Result.LateCompletions, not as a protocol error.
// Failures (Fail, Response.Err) are errors: they invalidate the run and are
// kept in Result.Errors, one group per distinct category and code (see
// ErrorInfo: count, example messages, first and last time).
//
// # A SUT that blocks
//
// IssueQuery and FlushQueries run on goroutines of Run's own, which Run
// watches, so that a SUT blocked inside them cannot keep Options.Timeout,
// the stall timeout or the cancellation of ctx from ending the test. Run
// gives up on a call that has not returned after the stall timeout, or
// after the interrupt grace once the run is cancelled: the call's samples
// are lost, the pass stops with the reason "SUT blocked in IssueQuery
// for …" (or FlushQueries), every Result field is filled, no later pass
// runs, and Run returns an error wrapping ErrSUTBlocked (ErrInterrupted
// when the run was cancelled or timed out). Go cannot stop another
// goroutine: the one that made the blocked call is left behind, one per
// blocked call, and ends without touching the Result when the SUT lets it
// go. A QSL that panics in LoadSamples or UnloadSamples makes Run return an
// error, not crash.
//
// Run returns once every pass has ended; the Responder must not be used
// after that. The Result holds the detail-log events, the accuracy log, the
// pass descriptions, the reported Summary and every per-sample Record
// (Result.Records), stored column by column so that a run of millions of
// samples costs about 32 bytes per sample.
//
// # Shards
//
// A test too large for one load generator runs as Options.Shard of N
// processes, each given the whole test's settings: every shard generates
// the whole schedule and issues its part (query q to shard q mod N; an
// Offline query in contiguous blocks of samples), with the whole test's
// sequence and query ids, so that the union of the shards' records is the
// single-host run's. Counts that bound issuing (a fixed concurrency,
// min_query_count, max_query_count) are split by the same rule
// (Shard.ShardSplit). Options.StartAt starts the reported pass of every
// shard at one moment, after its generation and loading, or refuses
// (ErrMissedStart) when that moment has passed by more than
// Options.StartTolerance. Result.Shard records the schedule's SHA-256.
// See shard.go and docs/sharding.md.
//
// # A minimal program
//
//	type sut struct{}
//
//	func (sut) Name() string { return "EchoSUT" }
//	func (sut) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
//		for _, s := range samples {
//			r.Complete(s.ID, nil, 0)
//		}
//	}
//	func (sut) FlushQueries() {}
//
//	s := loadgen.DefaultSettings()
//	s.Scenario = loadgen.Offline
//	res, err := loadgen.Run(ctx, sut{}, qsl, s, nil)
//	if err != nil { ... }
//	fmt.Println(res.Summary.Valid, res.Summary.SampleCount)
//
// See ExampleRun for a complete, runnable version.
package loadgen
