package benchmark

import (
	"errors"
	"fmt"
	"sync"

	"aimeter/accuracy"
	"aimeter/bundle"
	"aimeter/loadgen"
)

// score scores the accuracy log of res top-1 against the data set's
// labels, where it has both; the result is nil otherwise. Only a log of
// every sample (accuracy and submission runs) is judged against the
// target. A log that
// cannot be scored (a response that is no class byte) is an error joined
// to runErr, never a silent "--".
func score(res *loadgen.Result, o *opened, runErr error) (*bundle.AccuracyCheck, error) {
	if o.scoreLog != nil && len(res.Accuracy) > 0 {
		check, err := o.scoreLog(res.Accuracy)
		if err != nil {
			return nil, errors.Join(runErr, fmt.Errorf("scoring the accuracy log: %w", err))
		}
		if res.Effective.Mode == loadgen.PerformanceOnly {
			// As for top-1 below: shown, judging nothing.
			check.Metric += fmt.Sprintf(" of the %d responses logged", len(res.Accuracy))
			check.Pass = true
		}
		return check, runErr
	}
	if len(res.Accuracy) == 0 || o.labels == nil {
		return nil, runErr
	}
	s, err := accuracy.Top1(res.Accuracy, int(o.qsl.TotalSampleCount()), o.labels)
	if err != nil {
		return nil, errors.Join(runErr, fmt.Errorf("scoring the accuracy log: %w", err))
	}
	if res.Effective.Mode == loadgen.PerformanceOnly {
		// A performance run logs a sample of its responses
		// (accuracy_log_probability or _sampling_target, TEST01): their
		// accuracy is shown, over the responses logged, but it judges
		// nothing, as only an accuracy run answers every sample.
		return &bundle.AccuracyCheck{Metric: fmt.Sprintf("top-1 accuracy of the %d responses logged (%%)", s.Scored),
			Value: 100 * float64(s.Correct) / float64(s.Scored), Pass: true}, runErr
	}
	check := &bundle.AccuracyCheck{Metric: "top-1 accuracy (%)", Value: 100 * s.Value, Target: 100 * o.target, Pass: s.Value >= o.target}
	return check, runErr
}

// subsetScorer returns a scorer of accuracy logs over o's data set: top-1
// over the distinct samples a log holds, each with its first response;
// nil where the data set has no labels.
func subsetScorer(o *opened) func([]loadgen.AccuracyEntry) (*bundle.AccuracyCheck, error) {
	if o.scoreLog != nil {
		return o.scoreLog
	}
	if o.labels == nil {
		return nil
	}
	n, labels, target := o.qsl.TotalSampleCount(), o.labels, o.target
	return func(entries []loadgen.AccuracyEntry) (*bundle.AccuracyCheck, error) {
		seen := make(map[uint64]bool, len(entries))
		correct := 0
		for _, e := range entries {
			if e.QSLIndex >= n {
				return nil, fmt.Errorf("accuracy log entry seq_id %d: qsl_idx %d is outside the data set of %d samples", e.SeqID, e.QSLIndex, n)
			}
			if len(e.Data) != 1 {
				return nil, fmt.Errorf("accuracy log entry seq_id %d: %d bytes of data, want one class byte", e.SeqID, len(e.Data))
			}
			if seen[e.QSLIndex] {
				continue
			}
			seen[e.QSLIndex] = true
			if e.Data[0] == labels(e.QSLIndex) {
				correct++
			}
		}
		if len(seen) == 0 {
			return nil, errors.New("no responses to score")
		}
		v := float64(correct) / float64(len(seen))
		return &bundle.AccuracyCheck{Metric: "top-1 accuracy (%)", Value: 100 * v, Target: 100 * target, Pass: v >= target}, nil
	}
}

// foreignQSL is the sample library of a mixed test's foreign jobs (mode 5,
// IN-50): the first n samples of the main QSL, which the foreign run loads
// and unloads itself. A QSL that counts its loads (as dataset.QSL and the
// prompt sets do) then keeps every sample a foreign job may draw for as
// long as the foreign jobs run, whatever the main jobs unload.
type foreignQSL struct {
	main loadgen.QSL
	n    uint64
	mu   sync.Mutex
}

func newForeignQSL(main loadgen.QSL, n uint64) *foreignQSL {
	return &foreignQSL{main: main, n: min(max(n, 1), main.TotalSampleCount())}
}

func (q *foreignQSL) Name() string                   { return "foreign jobs over " + q.main.Name() }
func (q *foreignQSL) TotalSampleCount() uint64       { return q.n }
func (q *foreignQSL) PerformanceSampleCount() uint64 { return q.n }

func (q *foreignQSL) LoadSamples(indices []uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.main.LoadSamples(indices)
}

func (q *foreignQSL) UnloadSamples(indices []uint64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.main.UnloadSamples(indices)
}
