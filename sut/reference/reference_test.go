package reference

import (
	"context"
	"testing"

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
