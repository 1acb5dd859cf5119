// Package reference is aimeter's in-process reference SUT: it serves an
// image classifier to loadgen, batching samples dynamically, and measures
// the time of each stage (preprocess, inference, postprocess) for the
// GB/T 45087 time breakdown.
package reference

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"aimeter/loadgen"
	"aimeter/sut/batch"
)

// Predictor classifies a batch of inputs. Each worker of the SUT owns one,
// so it may keep scratch memory between calls.
type Predictor interface {
	// Predict writes the top-1 class of each of the batch rows of x
	// (row-major, batch × input size) to classes.
	Predict(x []float32, batch int, classes []uint8)
}

// SampleSource returns the preprocessed input of a loaded sample: the QSL.
type SampleSource interface {
	Sample(index uint64) ([]float32, bool)
}

// Options configure the SUT. The zero value of each field has a useful default.
type Options struct {
	// Name is the SUT name logged by loadgen (default "ReferenceSUT").
	Name string
	// InputSize is the number of float32 inputs per sample (required).
	InputSize int
	// NewPredictor returns the predictor of one worker (required).
	NewPredictor func() Predictor
	// Samples serves sample inputs (required).
	Samples SampleSource
	// MaxBatch is the largest batch (default 64).
	MaxBatch int
	// BatchWait is how long a worker with a partial batch waits for more
	// samples before running it (default 0: run what is queued).
	BatchWait time.Duration
	// Workers is the number of batching workers (default 1; the predictor
	// may itself use every core for large batches).
	Workers int
	// NoStageTimes leaves the per-sample stage times out of the responses,
	// so that loadgen keeps none and a run bundle has no stages.parquet; Stats
	// still sums the time of each stage. Runs that need the GB/T time
	// breakdown of each sample leave it false.
	NoStageTimes bool
	// OnClassified, if set, is called with the QSL index and predicted
	// class of every sample the SUT classifies, from a worker goroutine,
	// before the sample's response is sent (so a caller that scores
	// online sees the class of every returned sample once the run ends).
	// It must be safe for concurrent use.
	OnClassified func(index uint64, class uint8)
}

// Stage is a processing stage of the SUT.
type Stage int

// The three stages, in processing order.
const (
	Preprocess  Stage = iota // gather the batch inputs
	Inference                // run the model
	Postprocess              // turn outputs into responses (the Responder call is not timed)
	numStages
)

// String names the stage as the GB/T time breakdown does.
func (s Stage) String() string {
	return [...]string{"preprocess", "inference", "postprocess"}[s]
}

// StageStats sums the time spent in each stage.
type StageStats struct {
	Batches uint64
	Samples uint64
	Total   [numStages]time.Duration
}

// MeanPerSample returns the mean time of stage s per sample.
func (st StageStats) MeanPerSample(s Stage) time.Duration {
	if st.Samples == 0 {
		return 0
	}
	return st.Total[s] / time.Duration(st.Samples)
}

// MeanBatch returns the mean batch size.
func (st StageStats) MeanBatch() float64 {
	if st.Batches == 0 {
		return 0
	}
	return float64(st.Samples) / float64(st.Batches)
}

// SUT is the reference system under test. Create it with New and Close it.
type SUT struct {
	opts Options
	// queue holds the issued samples until a worker batches them.
	queue *batch.Queue

	batches atomic.Uint64
	samples atomic.Uint64
	stageNs [numStages]atomic.Int64

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var (
	_ loadgen.SUT     = (*SUT)(nil)
	_ loadgen.Drainer = (*SUT)(nil)
)

// New starts the workers.
func New(opts Options) (*SUT, error) {
	if opts.InputSize <= 0 || opts.NewPredictor == nil || opts.Samples == nil {
		return nil, errors.New("reference.New: InputSize, NewPredictor and Samples are required")
	}
	if opts.Name == "" {
		opts.Name = "ReferenceSUT"
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 64
	}
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	s := &SUT{opts: opts, queue: batch.New(opts.MaxBatch, opts.BatchWait)}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	for w := 0; w < opts.Workers; w++ {
		s.wg.Add(1)
		go s.work(ctx, opts.NewPredictor())
	}
	return s, nil
}

// Name returns the configured name.
func (s *SUT) Name() string { return s.opts.Name }

// IssueQuery queues the samples; it never blocks on inference.
func (s *SUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	s.queue.IssueQuery(r, samples)
}

// FlushQueries does nothing: workers run whatever is queued.
func (s *SUT) FlushQueries() {}

// Drain brings the SUT back to idle between runs (loadgen.Drainer): it
// discards the samples still queued, which loadgen has written off as lost
// when a run ended before the SUT caught up, and waits until the batches
// being processed are complete. It returns ctx's error if ctx ends before
// the workers are idle. Call it only between runs: samples issued during
// Drain may be discarded too.
func (s *SUT) Drain(ctx context.Context) error {
	_, err := s.DrainCount(ctx)
	return err
}

// DrainCount is Drain, also returning how many queued samples it discarded.
func (s *SUT) DrainCount(ctx context.Context) (int, error) {
	dropped, err := s.queue.Drain(ctx)
	if err != nil {
		return dropped, fmt.Errorf("reference SUT: %w", err)
	}
	return dropped, nil
}

// Close stops the workers; queued samples are dropped (loadgen counts them lost).
func (s *SUT) Close() {
	s.queue.Close()
	s.cancel()
	s.wg.Wait()
}

// Stats returns the stage times so far.
func (s *SUT) Stats() StageStats {
	st := StageStats{Batches: s.batches.Load(), Samples: s.samples.Load()}
	for i := range st.Total {
		st.Total[i] = time.Duration(s.stageNs[i].Load())
	}
	return st
}

// ResetStats clears the stage times (between runs).
func (s *SUT) ResetStats() {
	s.batches.Store(0)
	s.samples.Store(0)
	for i := range s.stageNs {
		s.stageNs[i].Store(0)
	}
}

func (s *SUT) work(ctx context.Context, p Predictor) {
	defer s.wg.Done()
	in := s.opts.InputSize
	x := make([]float32, s.opts.MaxBatch*in)
	classes := make([]uint8, s.opts.MaxBatch)
	jobs := make([]batch.Job, 0, s.opts.MaxBatch)
	resp := make([]loadgen.Response, 0, s.opts.MaxBatch)
	stages := make([]loadgen.StageTimes, s.opts.MaxBatch)
	out := make([]byte, s.opts.MaxBatch)
	for ctx.Err() == nil {
		jobs = s.queue.Take(jobs)
		if len(jobs) == 0 {
			return
		}
		t0 := time.Now()
		n := 0
		var missing []batch.Job
		for _, j := range jobs {
			px, ok := s.opts.Samples.Sample(j.S.Index)
			if !ok || len(px) != in {
				missing = append(missing, j)
				continue
			}
			copy(x[n*in:(n+1)*in], px)
			jobs[n] = j
			n++
		}
		for _, j := range missing {
			j.R.Fail(j.S.ID, fmt.Errorf("sample %d is not loaded in the QSL", j.S.Index))
		}
		t1 := time.Now()
		if n > 0 {
			p.Predict(x[:n*in], n, classes[:n])
		}
		t2 := time.Now()
		// One response per sample: the predicted class as one byte, which
		// the accuracy log records and the scorer compares with the label.
		resp = resp[:0]
		for k := 0; k < n; k++ {
			out[k] = classes[k]
			if s.opts.OnClassified != nil {
				s.opts.OnClassified(jobs[k].S.Index, classes[k])
			}
			resp = append(resp, loadgen.Response{ID: jobs[k].S.ID, Data: out[k : k+1]})
			if !s.opts.NoStageTimes {
				resp[k].Stages = &stages[k]
			}
		}
		t3 := time.Now()
		// The jobs's stage boundaries are every sample's (GB/T 45087
		// Table 16), on the clock of the sample's own run: in process, one
		// clock serves tester and SUT.
		for k := 0; k < n; k++ {
			r := jobs[k].R
			stages[k] = loadgen.StageTimes{
				Received:        jobs[k].Received,
				PreprocessStart: r.At(t0), PreprocessEnd: r.At(t1),
				InferenceStart: r.At(t1), InferenceEnd: r.At(t2),
				PostprocessStart: r.At(t2), PostprocessEnd: r.At(t3),
				ResultSent: r.At(t3),
			}
		}
		// Count the jobs before completing it: once the last sample is
		// complete, loadgen may end the run and read the stats.
		s.batches.Add(1)
		s.samples.Add(uint64(n))
		s.stageNs[Preprocess].Add(int64(t1.Sub(t0)))
		s.stageNs[Inference].Add(int64(t2.Sub(t1)))
		s.stageNs[Postprocess].Add(int64(t3.Sub(t2)))
		completeByResponder(resp, jobs[:n])
		s.queue.Done()
	}
}

// completeByResponder completes a jobs with one timestamp per responder
// (a jobs normally has one).
func completeByResponder(resp []loadgen.Response, jobs []batch.Job) {
	start := 0
	for k := 1; k <= len(jobs); k++ {
		if k == len(jobs) || jobs[k].R != jobs[start].R {
			jobs[start].R.CompleteBatch(resp[start:k])
			start = k
		}
	}
}
