// Package accuracy scores the responses of an accuracy run against ground
// truth (bundle.ReadAccuracyLog reads mlperf_log_accuracy.json).
package accuracy

import (
	"errors"
	"fmt"

	"aimeter/loadgen"
)

// Score is the outcome of a scorer.
type Score struct {
	Metric  string  // e.g. "top-1"
	Value   float64 // fraction in [0, 1]
	Correct int
	Scored  int // distinct samples scored
	Missing int // samples of the set without a response
}

// Top1 scores classification responses whose data is the predicted class as
// one byte. Each QSL sample counts once, with its first response (an
// accuracy run issues every sample once; MultiStream padding may repeat
// some). labels gives the ground truth of each of the n samples of the set.
func Top1(entries []loadgen.AccuracyEntry, n int, label func(index uint64) uint8) (Score, error) {
	seen := make([]bool, n)
	s := Score{Metric: "top-1"}
	for _, e := range entries {
		if e.QSLIndex >= uint64(n) {
			return s, fmt.Errorf("accuracy log entry seq_id %d: qsl_idx %d is outside the data set of %d samples", e.SeqID, e.QSLIndex, n)
		}
		if len(e.Data) != 1 {
			return s, fmt.Errorf("accuracy log entry seq_id %d: %d bytes of data, want one class byte", e.SeqID, len(e.Data))
		}
		if seen[e.QSLIndex] {
			continue
		}
		seen[e.QSLIndex] = true
		s.Scored++
		if e.Data[0] == label(e.QSLIndex) {
			s.Correct++
		}
	}
	s.Missing = n - s.Scored
	if s.Scored == 0 {
		return s, errors.New("no responses to score")
	}
	s.Value = float64(s.Correct) / float64(n)
	return s, nil
}
