// Package loadgentest holds systems under test, sample libraries and
// settings for tests of code built on package loadgen: SUTs that report
// stage times, failures, bytes on the wire, nodes and token times the way
// real ones do, so that a test gets a real run with every kind of record
// from loadgen.Run in milliseconds. Everything here drives the real
// loadgen; nothing stands in for it.
//
// What there is:
//
//   - [QSL]: a sample library of Total samples that loads nothing and
//     records every LoadSamples and UnloadSamples call.
//   - [SyncSUT]: completes every sample inside IssueQuery.
//   - [DelaySUT]: completes every sample after a fixed or computed delay,
//     from a timer; under testing/synctest the times are exact.
//   - [StagedSUT]: stage times on every sample, and a failure every n-th.
//   - [WireSUT]: bytes on the wire, nodes, token times and failures.
//   - [SmallSettings]: settings for a run of tens of milliseconds.
//
// Package aimeter/sut/null has the SUT and QSL that do nothing at all, for
// benchmarks of loadgen's own overhead. Tests inside package loadgen
// itself cannot import this package (it imports loadgen) and keep their
// own fakes.
package loadgentest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"aimeter/loadgen"
)

// SmallSettings sizes scenario sc in mode for a SUT that answers at once
// (package sut/null or the SUTs here): each run takes tens of
// milliseconds, issues at least 64 queries, and logs about a tenth of the
// responses in accuracy mode.
func SmallSettings(sc loadgen.Scenario, mode loadgen.Mode) loadgen.Settings {
	s := loadgen.DefaultSettings()
	s.Scenario, s.Mode = sc, mode
	s.MinDurationMs = 20
	s.MinQueryCount = 64
	s.ServerTargetQPS = 20000
	s.ServerTargetLatencyNs = 10_000_000
	s.OfflineExpectedQPS = 5000
	s.SingleStreamExpectedLatencyNs = 10_000
	s.MultiStreamExpectedLatencyNs = 100_000
	s.AccuracyLogProbability = 0.1
	return s
}

// StagedSUT completes every sample inside IssueQuery with all four stage
// times set to the completion time on the run clock, and fails every
// FailEvery-th sample it is sent (7 when FailEvery is 0; negative fails
// none), so that a run holds stages, failures and their error events. Its
// zero value is ready; it is safe for concurrent use.
type StagedSUT struct {
	// FailEvery: see the type's comment.
	FailEvery int64
	n         atomic.Int64
}

// Name returns "StagedSUT".
func (*StagedSUT) Name() string { return "StagedSUT" }

// IssueQuery completes or fails each sample at once.
func (s *StagedSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	every := s.FailEvery
	if every == 0 {
		every = 7
	}
	for _, q := range samples {
		if every > 0 && s.n.Add(1)%every == 0 {
			r.Fail(q.ID, errors.New("synthetic failure"))
			continue
		}
		now := r.Now()
		st := loadgen.NoStages
		st.Received, st.InferenceStart, st.InferenceEnd, st.ResultSent = now, now, now, now
		r.CompleteWithStages(q.ID, []byte{byte(q.Index)}, 1, st)
	}
}

// FlushQueries does nothing.
func (*StagedSUT) FlushQueries() {}

// WireSUT reports what a network SUT would: bytes on the wire, the node of
// three that served each sample, three token times per answer, and
// failures of two kinds (every 11th sample an "http_5xx" 500 or 501, every
// 13th an uncategorised decode error). Its zero value is ready; it is safe
// for concurrent use.
type WireSUT struct{ n atomic.Int64 }

// Name returns "WireSUT".
func (*WireSUT) Name() string { return "WireSUT" }

// IssueQuery answers each sample at once.
func (s *WireSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, q := range samples {
		k := s.n.Add(1)
		resp := loadgen.Response{ID: q.ID, Data: []byte{1}, Tokens: 3, RequestBytes: 100 + k, ResponseBytes: 7, Node: uint32(1 + k%3)}
		switch {
		case k%11 == 0:
			resp.Err = loadgen.WithCode("http_5xx", int(500+k%2), "", fmt.Errorf("status %d", 500+k%2))
		case k%13 == 0:
			resp.Err = errors.New("decode: bad json")
		default:
			now := r.Now()
			resp.TokenTimes = []int64{now - 2, now - 1, now}
		}
		r.Respond(resp)
	}
}

// FlushQueries does nothing.
func (*WireSUT) FlushQueries() {}

// QSL is a sample library that loads nothing and records what it was asked
// to load and unload. Use it by pointer; it is safe for concurrent use.
type QSL struct {
	// Total is the number of samples. Zero makes loadgen refuse the run.
	Total uint64
	// Performance is the number of samples loadable at once; 0 means
	// Total.
	Performance uint64
	// Label is what Name returns; "" means "TestQSL".
	Label string

	mu       sync.Mutex
	loaded   [][]uint64
	unloaded [][]uint64
}

// Name returns Label, or "TestQSL" when it is "".
func (q *QSL) Name() string {
	if q.Label == "" {
		return "TestQSL"
	}
	return q.Label
}

// TotalSampleCount returns Total.
func (q *QSL) TotalSampleCount() uint64 { return q.Total }

// PerformanceSampleCount returns Performance, or Total when it is 0.
func (q *QSL) PerformanceSampleCount() uint64 {
	if q.Performance == 0 {
		return q.Total
	}
	return q.Performance
}

// LoadSamples records a copy of indices and returns nil.
func (q *QSL) LoadSamples(indices []uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.loaded = append(q.loaded, slices.Clone(indices))
	return nil
}

// UnloadSamples records a copy of indices and returns nil.
func (q *QSL) UnloadSamples(indices []uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.unloaded = append(q.unloaded, slices.Clone(indices))
	return nil
}

// Loaded returns the indices of every LoadSamples call so far, in order.
func (q *QSL) Loaded() [][]uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.loaded)
}

// Unloaded returns the indices of every UnloadSamples call so far, in
// order.
func (q *QSL) Unloaded() [][]uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.unloaded)
}

// SyncSUT completes every sample inside IssueQuery with the one-byte
// response byte(Index) and no token count. It has no fields; its zero
// value is ready and safe for concurrent use.
type SyncSUT struct{}

// Name returns "SyncSUT".
func (SyncSUT) Name() string { return "SyncSUT" }

// IssueQuery completes each sample at once.
func (SyncSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, q := range samples {
		r.Complete(q.ID, []byte{byte(q.Index)}, 0)
	}
}

// FlushQueries does nothing.
func (SyncSUT) FlushQueries() {}

// DelaySUT completes every sample from a timer (time.AfterFunc) after a
// delay, with the one-byte response byte(Index) and no token count: a SUT
// with a latency. Under testing/synctest the delays, and so every time in
// the result, are exact. Its zero value completes every sample on a timer
// of zero; it is safe for concurrent use if DelayOf is.
type DelaySUT struct {
	// Delay is the delay of every sample when DelayOf is nil; 0 means a
	// timer of zero, which still completes after IssueQuery returns.
	Delay time.Duration
	// DelayOf, when not nil, gives the delay of the sample with index
	// Index at position pos in its query, instead of Delay.
	DelayOf func(index uint64, pos int) time.Duration
}

// Name returns "DelaySUT".
func (DelaySUT) Name() string { return "DelaySUT" }

// IssueQuery starts a timer for each sample.
func (s DelaySUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for i, q := range samples {
		d := s.Delay
		if s.DelayOf != nil {
			d = s.DelayOf(q.Index, i)
		}
		time.AfterFunc(d, func() { r.Complete(q.ID, []byte{byte(q.Index)}, 0) })
	}
}

// FlushQueries does nothing.
func (DelaySUT) FlushQueries() {}
