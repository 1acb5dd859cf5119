// Package loadgentest holds systems under test, sample libraries and
// settings for tests of code built on package loadgen: SUTs that report
// stage times, failures, bytes on the wire, nodes and token times the way
// real ones do, so that a test gets a real run with every kind of record
// from loadgen.Run in milliseconds. Everything here drives the real
// loadgen; nothing stands in for it.
package loadgentest

import (
	"errors"
	"fmt"
	"sync/atomic"

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
