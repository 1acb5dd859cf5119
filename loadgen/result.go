package loadgen

import (
	"fmt"
	"time"
)

// NoTime marks a record time that does not apply (no first token, or a
// sample that never completed).
const NoTime int64 = -1

// Status is the outcome of one issued sample.
type Status uint8

// Sample outcomes.
const (
	// StatusOK: the SUT completed the sample.
	StatusOK Status = iota + 1
	// StatusError: the SUT reported a failure for the sample (Responder.Fail).
	StatusError
	// StatusLost: the sample never completed before the run gave up on it
	// (timeout, stall, interruption or a panic in IssueQuery).
	StatusLost
)

// String returns "ok", "error" or "lost", as written in records.csv.
func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusError:
		return "error"
	case StatusLost:
		return "lost"
	}
	return "unknown"
}

// ParseStatus is the inverse of Status.String.
func ParseStatus(s string) (Status, bool) {
	switch s {
	case "ok":
		return StatusOK, true
	case "error":
		return StatusError, true
	case "lost":
		return StatusLost, true
	}
	return 0, false
}

// AppendText appends the status's name ("ok", "error" or "lost", as in
// records.csv) to b; a status outside those is an error.
func (s Status) AppendText(b []byte) ([]byte, error) {
	if s < StatusOK || s > StatusLost {
		return b, fmt.Errorf("loadgen: unknown status %d", uint8(s))
	}
	return append(b, s.String()...), nil
}

// MarshalText returns the status's name: "ok", "error" or "lost".
func (s Status) MarshalText() ([]byte, error) { return s.AppendText(nil) }

// UnmarshalText sets s from its name, "ok", "error" or "lost".
func (s *Status) UnmarshalText(b []byte) error {
	st, ok := ParseStatus(string(b))
	if !ok {
		return fmt.Errorf("unknown status %q (want ok, error or lost)", b)
	}
	*s = st
	return nil
}

// Record is one issued sample. Times are nanoseconds from the start of
// issuing of the pass the sample belongs to; for Server, query 0 is scheduled
// at 0. Latency is CompletedNs − ScheduledNs, never measured from the issue.
type Record struct {
	SeqID        uint64
	QueryID      uint64 // sequence number of the query within the test
	SampleIndex  uint64 // QSL index
	ScheduledNs  int64
	IssuedNs     int64
	FirstTokenNs int64 // NoTime unless token latencies are on
	CompletedNs  int64 // NoTime for lost samples
	Tokens       int64
	Status       Status
	// RequestBytes and ResponseBytes are the bytes on the wire the SUT
	// reported (Response); 0 when not reported.
	RequestBytes  int64
	ResponseBytes int64
	// Node is the dispatcher node that served the sample, from 1; 0 when not
	// reported.
	Node uint32
	// Error indexes Result.Errors from 1 for a failed sample (see
	// Result.ErrorOf); 0 when the sample did not fail.
	Error uint32
}

// PassKind says what a pass (one LoadGen IssueQueries call) was for.
type PassKind string

// Pass kinds.
const (
	PassAccuracy    PassKind = "accuracy"
	PassPerformance PassKind = "performance"
	PassFindPeak    PassKind = "find-peak-probe"
)

// PassInfo describes one pass: which sequence ids it holds and how it ended.
type PassInfo struct {
	Kind PassKind `json:"kind"`
	// FirstSeq and EndSeq bound the sequence ids generated for the pass
	// (EndSeq exclusive); only issued samples appear in the records.
	FirstSeq uint64 `json:"first_seq"`
	EndSeq   uint64 `json:"end_seq"`
	// TargetQPS is the Server rate of the pass (find-peak probes differ).
	TargetQPS float64 `json:"target_qps"`
	// StartUnixNs is the wall-clock time issuing started.
	StartUnixNs int64 `json:"start_unix_ns"`
	// EndNs is when the pass ended, from its start; lost samples are
	// censored at this time.
	EndNs int64 `json:"end_ns"`
	// QueriesIssued counts issued queries (coalesced queries count each).
	QueriesIssued uint64 `json:"queries_issued"`
	// Reported marks the pass whose summary the test reports.
	Reported bool `json:"reported"`
	// StopReason says why issuing ended ("" when it ran to completion).
	StopReason string `json:"stop_reason,omitempty"`
	// ProtocolErrors counts the SUT's protocol errors while the pass ran:
	// completions (or first tokens) for unknown, not yet issued, already
	// ended or already lost samples, and responses whose token times fall
	// outside their sample's issue-to-completion window or go backwards
	// (those times are dropped). Any makes the pass INVALID, as
	// MLPerf's checker rejects a log with errors.
	ProtocolErrors uint64 `json:"protocol_errors,omitempty"`
	// Probe is the outcome of a find-peak probe (nil for other passes). It
	// outlives the probe's records, which are kept for the reported pass
	// only (see Options.KeepProbeRecords).
	Probe *ProbeOutcome `json:"probe,omitempty"`
}

// ProbeOutcome summarises one find-peak probe: enough to list every probe
// of a search without its records.
type ProbeOutcome struct {
	// PerfConstraintsMet is the probe's verdict: whether its latency at the
	// target percentile met the bound (the only check find-peak uses).
	PerfConstraintsMet bool `json:"perf_constraints_met"`
	// TargetPercentileLatencyNs is the sample latency at the target
	// percentile.
	TargetPercentileLatencyNs int64 `json:"target_percentile_latency_ns"`
	// CompletedSamplesPerSecond is the probe's Server metric.
	CompletedSamplesPerSecond float64 `json:"completed_samples_per_second"`
	// Samples is the number of samples the probe issued.
	Samples uint64 `json:"samples"`
	// RecordsDropped says the probe's records were discarded after it was
	// summarised; Result.PassRecords yields nothing for it.
	RecordsDropped bool `json:"records_dropped,omitempty"`
}

// EventKind is the MLLOG event type of a detail-log event.
type EventKind uint8

// Event kinds.
const (
	EventPoint EventKind = iota
	EventIntervalStart
	EventIntervalEnd
)

// eventKindNames are the event kinds' names in events.jsonl: a point in
// time has none (its "kind" is left out).
var eventKindNames = [...]string{EventPoint: "", EventIntervalStart: "interval_start", EventIntervalEnd: "interval_end"}

// String returns the kind's name in events.jsonl: "" for a point in
// time, "interval_start" or "interval_end".
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// AppendText appends the kind's name (String) to b; an unknown kind is an
// error.
func (k EventKind) AppendText(b []byte) ([]byte, error) {
	if int(k) >= len(eventKindNames) {
		return b, fmt.Errorf("loadgen: unknown event kind %d", uint8(k))
	}
	return append(b, eventKindNames[k]...), nil
}

// MarshalText returns the kind's name (String); an unknown kind is an
// error. EventPoint is the zero value, so a JSON field tagged omitempty
// leaves it out.
func (k EventKind) MarshalText() ([]byte, error) { return k.AppendText(nil) }

// UnmarshalText sets k from its name: "" is EventPoint,
// "interval_start" and "interval_end" the intervals' ends.
func (k *EventKind) UnmarshalText(b []byte) error {
	for i, name := range eventKindNames {
		if string(b) == name {
			*k = EventKind(i)
			return nil
		}
	}
	return fmt.Errorf("unknown kind %q", b)
}

// Event is one entry of the detail log recorded during the test. Value is a
// string, bool, int64, uint64, float64 or []uint64.
type Event struct {
	TimeNs  int64 // since the start of the test
	Key     string
	Value   any
	Kind    EventKind
	Error   bool
	Warning bool
}

// AccuracyEntry is one response copied to the accuracy log.
type AccuracyEntry struct {
	SeqID      uint64
	QSLIndex   uint64
	Data       []byte
	TokenData  []byte // first-token data, token mode (non-Offline) only
	TokenCount int64
	HasTokens  bool // write token_count (and token_data when not Offline)
}

// Result is everything a test produced: the detail-log events, the accuracy
// log, the records of every pass and the reported performance summary.
type Result struct {
	SUTName              string
	GetSUTNameDurationNs int64
	QSLName              string
	QSLTotalCount        uint64
	QSLPerformanceCount  uint64
	Requested            Settings
	Effective            Effective
	// StartTime is the wall-clock time the test started (test_datetime).
	StartTime time.Time
	Events    []Event
	Accuracy  []AccuracyEntry
	Passes    []PassInfo
	// Summary is the reported performance summary; nil for accuracy-only
	// tests and tests that ended before a performance pass.
	Summary *Summary
	// Interrupted is why the test ended early ("" if it did not).
	Interrupted string
	// Shard is what a shard of a test (Options.Shard), or a run with a
	// common start (Options.StartAt), recorded of the whole test: its part,
	// the whole schedule's digest and how late it started; nil otherwise.
	Shard *ShardRun
	// Counters of SUT misbehaviour (see Responder).
	UnknownCompletions   uint64
	DuplicateCompletions uint64
	FailedSamples        uint64
	LostSamples          uint64
	// LateCompletions counts the results that arrived after their
	// sample's deadline (issue + Options.SampleTimeout), whether or not a
	// timer had already given up on the sample: those samples are lost
	// (counted in LostSamples), never ok, and the late results are no
	// protocol errors.
	LateCompletions uint64
	// Errors is the table of distinct sample failures, in the order they
	// first occurred; Record.Error indexes it from 1. At most MaxErrorKinds
	// entries.
	Errors []ErrorInfo

	passes     []*passRecord     // columnar per-sample storage behind Records
	stored     *RecordTable      // records read back from files (AttachRecords, AttachTable)
	storedToks []TokenTrace      // token times read back from files (AttachTokenTimes)
	source     *sourceState      // records left in a file (AttachSource)
	tokSource  *tokenSourceState // token times left in a file (AttachTokenSource)
}

// ErrorCount returns the number of error events, as LoadGen's num_errors.
func (r *Result) ErrorCount() int {
	n := 0
	for i := range r.Events {
		if r.Events[i].Error {
			n++
		}
	}
	return n
}

// WarningCount returns the number of warning events.
func (r *Result) WarningCount() int {
	n := 0
	for i := range r.Events {
		if r.Events[i].Warning {
			n++
		}
	}
	return n
}
