// Package null provides the null system under test and a null sample
// library: they do no work, so a run measures aimeter's own overhead, like
// LoadGen's perftests_null_sut.
package null

import (
	"sync"

	"aimeter/loadgen"
)

// SUT completes every sample inside IssueQuery, one call per sample.
type SUT struct{}

var _ loadgen.SUT = SUT{}

// Name returns "NullSUT".
func (SUT) Name() string { return "NullSUT" }

// IssueQuery completes each sample at once with an empty response.
func (SUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	for i := range samples {
		r.Complete(samples[i].ID, nil, 0)
	}
}

// FlushQueries does nothing.
func (SUT) FlushQueries() {}

// AsyncSUT completes samples from a worker goroutine, one call per sample,
// as an asynchronous server would. Create it with NewAsync and Close it.
type AsyncSUT struct {
	queue chan work
	wg    sync.WaitGroup
}

type work struct {
	r       *loadgen.Responder
	samples []loadgen.QuerySample
}

var _ loadgen.SUT = (*AsyncSUT)(nil)

// NewAsync starts the worker goroutine.
func NewAsync() *AsyncSUT {
	s := &AsyncSUT{queue: make(chan work, 4096)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for w := range s.queue {
			for i := range w.samples {
				w.r.Complete(w.samples[i].ID, nil, 0)
			}
		}
	}()
	return s
}

// Name returns "NullAsyncSUT".
func (*AsyncSUT) Name() string { return "NullAsyncSUT" }

// IssueQuery queues the samples for the worker. The slice is not copied:
// loadgen keeps it unchanged until the test ends.
func (s *AsyncSUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	s.queue <- work{r: r, samples: samples}
}

// FlushQueries does nothing.
func (*AsyncSUT) FlushQueries() {}

// Close stops the worker after it has completed everything queued.
func (s *AsyncSUT) Close() {
	close(s.queue)
	s.wg.Wait()
}

// QSL is a sample library of Total samples with nothing to load.
type QSL struct {
	Total       uint64
	Performance uint64 // 0 means Total
}

var _ loadgen.QSL = QSL{}

// Name returns "NullQSL".
func (QSL) Name() string { return "NullQSL" }

// TotalSampleCount returns Total.
func (q QSL) TotalSampleCount() uint64 { return q.Total }

// PerformanceSampleCount returns Performance, or Total when it is 0.
func (q QSL) PerformanceSampleCount() uint64 {
	if q.Performance == 0 {
		return q.Total
	}
	return q.Performance
}

// LoadSamples does nothing.
func (QSL) LoadSamples([]uint64) error { return nil }

// UnloadSamples does nothing.
func (QSL) UnloadSamples([]uint64) error { return nil }
