package benchmark

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/sut"
)

// ScoreBundle scores the accuracy log of the run bundle in dir against
// the ground truth of the data set it ran on, as the run itself scored it
// (top-1 against the labels, with the same code): it reloads the reference data set the
// bundle's SUT configuration names (the reference SUT's, or the one a
// KServe server or a dispatcher was sent) and checks that it is the data
// set the run used, by name and size. An accuracy run's log is judged
// against the data set's target; a performance run's sampled log is scored
// over the responses it holds and judges nothing. A bundle without an
// accuracy log, of a run on a data set without labels (prompts, a custom
// SUT's), or whose data set cannot be reloaded gives an error saying so;
// a log entry that is not a class byte of a sample of the set names the
// entry.
//
// The bundle's recorded AccuracyCheck is what the run said; ScoreBundle is
// the independent recomputation from the log (aimeter accuracy log DIR).
func ScoreBundle(ctx context.Context, dir string, notify func(Notice)) (*bundle.AccuracyCheck, error) {
	if _, err := os.Stat(filepath.Join(dir, bundle.ManifestFile)); err != nil {
		return nil, fmt.Errorf("%s: not a run bundle: %w", dir, err)
	}
	b, err := derived.Read(dir)
	if err != nil {
		return nil, err
	}
	if len(b.Result.Accuracy) == 0 {
		return nil, fmt.Errorf("%s: the run logged no responses (%s is empty)", dir, bundle.AccuracyFile)
	}
	var cfg sut.Config
	if invocation.Of(b) != nil {
		cfg = invocation.Of(b).SUT
	}
	switch cfg.KindOrNull() {
	case sut.Reference, sut.KServe, sut.Dispatch:
	default:
		return nil, fmt.Errorf("%s: a run of SUT.Kind %s has no ground truth aimeter knows (score its log with aimeter accuracy log and its labels, or aimeter accuracy score)", dir, cfg.KindOrNull())
	}
	if ctx == nil {
		ctx = context.Background()
	}
	r := &runner{plan: &Plan{SUT: cfg, Notify: notify}, ctx: ctx}
	qsl, target, err := r.referenceData(false)
	if err != nil {
		return nil, fmt.Errorf("reloading the reference data set: %w", err)
	}
	if qsl.Name() != b.Result.QSLName || qsl.TotalSampleCount() != b.Result.QSLTotalCount {
		return nil, fmt.Errorf("%s: the run's samples came from %q (%d samples), not from the reference data set %q (%d samples) this machine has: no ground truth to score against",
			dir, b.Result.QSLName, b.Result.QSLTotalCount, qsl.Name(), qsl.TotalSampleCount())
	}
	// The log is not empty and the data set has labels: score gives a
	// check or an error.
	return score(b.Result, &opened{qsl: qsl, labels: qsl.Label, target: target}, nil)
}
