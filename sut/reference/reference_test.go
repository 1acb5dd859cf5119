package reference

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"aimeter/dataset"
	"aimeter/loadgen"
)

// firstPixelPredictor "classifies" by the first input, so the expected
// response of every sample is known.
type firstPixelPredictor struct{}

func (firstPixelPredictor) Predict(x []float32, batch int, classes []uint8) {
	in := len(x) / batch
	for i := 0; i < batch; i++ {
		classes[i] = uint8(x[i*in]*255) % 10
	}
}

func newTestSUT(t *testing.T, q *dataset.QSL, opts Options) *SUT {
	t.Helper()
	opts.InputSize = 784
	opts.NewPredictor = func() Predictor { return firstPixelPredictor{} }
	opts.Samples = q
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestReferenceSUTAnswersEverySample(t *testing.T) {
	set := dataset.Synthetic(500, 3)
	q := dataset.NewQSL(set, 200)
	sut := newTestSUT(t, q, Options{MaxBatch: 32, Workers: 2})
	for _, sc := range []loadgen.Scenario{loadgen.SingleStream, loadgen.MultiStream, loadgen.Server, loadgen.Offline} {
		t.Run(sc.String(), func(t *testing.T) {
			s := loadgen.DefaultSettings()
			s.Scenario, s.Mode = sc, loadgen.AccuracyOnly
			s.ServerTargetQPS = 20000
			res, err := loadgen.Run(context.Background(), sut, q, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[uint64]bool{}
			for _, e := range res.Accuracy {
				want := set.Image(int(e.QSLIndex))[0] % 10
				if len(e.Data) != 1 || e.Data[0] != want {
					t.Fatalf("sample %d answered %v, want [%d]", e.QSLIndex, e.Data, want)
				}
				seen[e.QSLIndex] = true
			}
			if len(seen) != 500 || res.LostSamples+res.FailedSamples != 0 {
				t.Errorf("%d of 500 samples answered, %d lost, %d failed", len(seen), res.LostSamples, res.FailedSamples)
			}
		})
	}
}

func TestReferenceSUTBatchesOfflineAndTimesStages(t *testing.T) {
	set := dataset.Synthetic(256, 4)
	q := dataset.NewQSL(set, 256)
	sut := newTestSUT(t, q, Options{MaxBatch: 64})
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 0
	s.MinQueryCount = 4096
	res, err := loadgen.Run(context.Background(), sut, q, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := sut.Stats()
	if st.Samples != 4096 || st.MeanBatch() < 32 {
		t.Errorf("%d samples in %d batches: Offline must batch", st.Samples, st.Batches)
	}
	for _, stage := range []Stage{Preprocess, Inference, Postprocess} {
		if st.Total[stage] <= 0 {
			t.Errorf("stage %s was not timed", stage)
		}
	}
	if !res.Summary.MinQueriesMet {
		t.Error(res.Summary.AimeterReasons)
	}
}

func TestReferenceSUTFailsUnloadedSamples(t *testing.T) {
	set := dataset.Synthetic(10, 5)
	q := dataset.NewQSL(set, 10)
	// Serve from a QSL that never loads anything.
	sut := newTestSUT(t, dataset.NewQSL(set, 10), Options{})
	s := loadgen.DefaultSettings()
	s.MinDurationMs = 0
	s.MinQueryCount = 5
	res, err := loadgen.Run(context.Background(), sut, q, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FailedSamples != 5 || res.Summary.Valid {
		t.Errorf("failed %d, valid %v", res.FailedSamples, res.Summary.Valid)
	}
}

func TestReferenceSUTReportsStageTimes(t *testing.T) {
	set := dataset.Synthetic(64, 6)
	q := dataset.NewQSL(set, 64)
	sut := newTestSUT(t, q, Options{MaxBatch: 16})
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 0
	s.MinQueryCount = 256
	res, err := loadgen.Run(context.Background(), sut, q, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.HasStages() {
		t.Fatal("the reference SUT reports its stage times")
	}
	var recs []loadgen.Record
	for r := range res.Records() {
		recs = append(recs, r)
	}
	i := 0
	for st := range res.Stages() {
		r := recs[i]
		i++
		// GB/T 45087 Table 16 order (IN-70): issue ≤ t_ITR ≤ t_IPRS ≤ … ≤ t_IRS ≤ completion.
		seq := []int64{r.IssuedNs, st.Received, st.PreprocessStart, st.PreprocessEnd, st.InferenceStart,
			st.InferenceEnd, st.PostprocessStart, st.PostprocessEnd, st.ResultSent, r.CompletedNs}
		for k := 1; k < len(seq); k++ {
			if seq[k] < seq[k-1] {
				t.Fatalf("sample %d: timing points out of order at %d: %v", r.SeqID, k, seq)
			}
		}
	}
}

// TestReferenceSUTWithoutStageTimes: with NoStageTimes the responses carry
// no stage times, so loadgen keeps none, while Stats still sums each stage.
func TestReferenceSUTWithoutStageTimes(t *testing.T) {
	set := dataset.Synthetic(64, 6)
	q := dataset.NewQSL(set, 64)
	sut := newTestSUT(t, q, Options{MaxBatch: 16, NoStageTimes: true})
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 0
	s.MinQueryCount = 256
	res, err := loadgen.Run(context.Background(), sut, q, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.HasStages() {
		t.Error("stage times were reported with NoStageTimes")
	}
	if st := sut.Stats(); st.Samples != 256 || st.Total[Inference] <= 0 {
		t.Errorf("stats %+v: want 256 samples with a timed inference stage", st)
	}
}

// gatedPredictor blocks each batch until release is closed, counting the
// samples it classified.
type gatedPredictor struct {
	started chan<- int      // receives the batch size when a batch starts
	release <-chan struct{} // closed to let batches through
	served  *atomic.Int64
}

func (g gatedPredictor) Predict(x []float32, batch int, classes []uint8) {
	g.started <- batch
	<-g.release
	g.served.Add(int64(batch))
	firstPixelPredictor{}.Predict(x, batch, classes)
}

// TestDrainEmptiesTheBacklog: a run whose samples time out (GB/T loss)
// ends with the SUT still holding them: one batch in progress, the rest
// queued. Drain discards the queue, waits for the batch in progress, and the
// next run is served from an idle SUT: the SUT classifies none of the
// written-off samples after the drain.
func TestDrainEmptiesTheBacklog(t *testing.T) {
	set := dataset.Synthetic(64, 7)
	q := dataset.NewQSL(set, 64)
	started := make(chan int, 1)
	release := make(chan struct{})
	var served atomic.Int64
	opts := Options{MaxBatch: 4, InputSize: 784, Samples: q,
		NewPredictor: func() Predictor { return gatedPredictor{started, release, &served} }}
	sut, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer sut.Close()

	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Offline
	s.MinDurationMs = 0
	s.MinQueryCount = 40
	res, err := loadgen.Run(context.Background(), sut, q, s, &loadgen.Options{SampleTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.LostSamples != 40 {
		t.Fatalf("%d of 40 samples lost; the gated SUT answers none in time", res.LostSamples)
	}
	first := <-started // the batch in progress
	queued, busy := sut.queue.Pending()
	if queued != 40-first || busy != 1 {
		t.Fatalf("after the run: %d queued and %d batches busy; want %d and 1", queued, busy, 40-first)
	}

	// A drain that ends with its context reports the batch still in progress.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sut.Drain(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("drain with a cancelled context while a batch is in progress: %v", err)
	}

	type drained struct {
		n   int
		err error
	}
	done := make(chan drained, 1)
	go func() {
		n, err := sut.DrainCount(context.Background())
		done <- drained{n, err}
	}()
	// The drain cannot end while the batch is in progress: wait for the
	// queue to be discarded, then release the batch.
	for {
		if queued, _ := sut.queue.Pending(); queued == 0 {
			break
		}
		runtime.Gosched()
	}
	select {
	case d := <-done:
		t.Fatalf("drain returned %+v with a batch in progress", d)
	default:
	}
	close(release)
	d := <-done
	// The first cancelled drain discarded the queue already.
	if d.err != nil || d.n != 0 {
		t.Fatalf("drain: %d discarded, %v", d.n, d.err)
	}
	if got := served.Load(); got != int64(first) {
		t.Fatalf("the SUT classified %d samples of the written-off run, want only the %d in progress", got, first)
	}

	// The next run starts from an idle SUT: every sample answered, and the
	// SUT classified exactly that run's samples.
	served.Store(0)
	go func() {
		for range started {
		}
	}()
	res, err = loadgen.Run(context.Background(), sut, q, s, &loadgen.Options{SampleTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.LostSamples != 0 || served.Load() != 40 {
		t.Errorf("after the drain: %d lost, %d classified; want 0 and 40", res.LostSamples, served.Load())
	}
	if n, err := sut.DrainCount(context.Background()); n != 0 || err != nil {
		t.Errorf("drain of an idle SUT: %d, %v", n, err)
	}
	close(started) // nothing is in progress: ends the goroutine above
}

// TestOnClassifiedSeesEveryAnswer checks that the classification hook gets
// the index and class of every answered sample, matching its response.
func TestOnClassifiedSeesEveryAnswer(t *testing.T) {
	set := dataset.Synthetic(300, 5)
	q := dataset.NewQSL(set, 300)
	var mu sync.Mutex
	got := map[uint64]uint8{}
	sut := newTestSUT(t, q, Options{MaxBatch: 16, Workers: 2, OnClassified: func(i uint64, c uint8) {
		mu.Lock()
		defer mu.Unlock()
		got[i] = c
	}})
	s := loadgen.DefaultSettings()
	s.Scenario, s.Mode = loadgen.Offline, loadgen.AccuracyOnly
	res, err := loadgen.Run(context.Background(), sut, q, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 300 {
		t.Errorf("hook saw %d of 300 samples", len(got))
	}
	for _, e := range res.Accuracy {
		if c, ok := got[e.QSLIndex]; !ok || len(e.Data) != 1 || e.Data[0] != c {
			t.Errorf("sample %d: hook class %d (%v), response %v", e.QSLIndex, c, ok, e.Data)
		}
	}
}
