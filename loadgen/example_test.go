package loadgen_test

import (
	"context"
	"errors"
	"fmt"

	"aimeter/loadgen"
)

// echoSUT answers every sample at once, inside IssueQuery, with the sample's
// QSL index as its one output byte.
type echoSUT struct{}

func (echoSUT) Name() string { return "EchoSUT" }

func (echoSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, s := range samples {
		r.Complete(s.ID, []byte{byte(s.Index)}, 0)
	}
}

func (echoSUT) FlushQueries() {}

// memQSL is a data set of n samples that are always in memory.
type memQSL struct{ n uint64 }

func (memQSL) Name() string                     { return "MemQSL" }
func (q memQSL) TotalSampleCount() uint64       { return q.n }
func (q memQSL) PerformanceSampleCount() uint64 { return q.n }
func (memQSL) LoadSamples([]uint64) error       { return nil }
func (memQSL) UnloadSamples([]uint64) error     { return nil }

// A whole Offline test of 1000 samples against a SUT that answers at once.
func ExampleRun() {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 0    // no minimum duration, so the test is quick
	s.MinQueryCount = 1000 // Offline: the one query holds this many samples
	res, err := loadgen.Run(context.Background(), echoSUT{}, memQSL{n: 64}, s, nil)
	if err != nil {
		fmt.Println("run failed:", err)
		return
	}
	sum := res.Summary
	fmt.Println("scenario:", sum.Effective.Scenario)
	fmt.Println("valid:", sum.Valid)
	fmt.Println("queries:", sum.QueryCount, "samples:", sum.SampleCount)
	fmt.Println("records:", res.RecordCount(), "lost:", res.LostSamples)
	// Output:
	// scenario: Offline
	// valid: true
	// queries: 1 samples: 1000
	// records: 1000 lost: 0
}

// streamSUT answers like a network client would: every sample with its
// wire sizes, the node that served it and its token arrival times, each
// stamped with the run's clock as the token "arrives"; sample index 3
// fails with a categorised error.
type streamSUT struct{}

func (streamSUT) Name() string { return "StreamSUT" }

func (streamSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for _, s := range samples {
		if s.Index == 3 {
			r.Respond(loadgen.Response{ID: s.ID, Err: loadgen.WithCategory("http", errors.New("503 Service Unavailable"))})
			continue
		}
		var times []int64
		for range 3 {
			times = append(times, r.Now()) // a token arrives
		}
		r.Respond(loadgen.Response{
			ID:            s.ID,
			Data:          []byte("hi!"),
			Tokens:        3,
			RequestBytes:  120,
			ResponseBytes: 480,
			Node:          uint32(s.Index%2 + 1),
			TokenTimes:    times,
		})
	}
}

func (streamSUT) FlushQueries() {}

// Respond reports everything a SUT measured about one sample; failures go
// to a small table of distinct errors that each record indexes.
func ExampleResponder_Respond() {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 0
	s.MinQueryCount = 4
	res, err := loadgen.Run(context.Background(), streamSUT{}, memQSL{n: 4}, s, nil)
	if err != nil {
		fmt.Println("run failed:", err)
		return
	}
	for rec := range res.Records() {
		if e, failed := res.ErrorOf(rec); failed {
			fmt.Printf("sample %d: %s, %s: %s\n", rec.SampleIndex, rec.Status, e.Category, e.Message)
			continue
		}
		fmt.Printf("sample %d: %s, node %d, %d B out, %d B in\n", rec.SampleIndex, rec.Status, rec.Node, rec.RequestBytes, rec.ResponseBytes)
	}
	streams := 0
	for _, times := range res.TokenTimes() {
		if len(times) == 3 {
			streams++
		}
	}
	fmt.Println("samples with token times:", streams)
	fmt.Println("valid:", res.Summary.Valid)
	// Unordered output:
	// sample 0: ok, node 1, 120 B out, 480 B in
	// sample 1: ok, node 2, 120 B out, 480 B in
	// sample 2: ok, node 1, 120 B out, 480 B in
	// sample 3: error, http: 503 Service Unavailable
	// samples with token times: 3
	// valid: false
}
