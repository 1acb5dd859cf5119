package benchmark

import (
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/train/trainbundle"
)

// Regenerated is a bundle whose derived files were written again
// (Regenerate), with the outcome read back from it.
type Regenerated struct {
	// Files are the names of the files written.
	Files []string
	// Outcome is the run's outcome (OutcomeOf), its Derived the set that
	// wrote the files; nil for a training bundle.
	Outcome *Outcome
	// Training is a training bundle's outcome, its Result the training
	// result; nil for a run.
	Training *TrainOutcome
}

// Regenerate writes every derived file of b in dir again
// (derived.Set.Regenerate: what `aimeter report` does) and reads back its
// outcome: a run's (OutcomeOf) or a training run's. Where the files were
// written but the outcome cannot be read back, the Regenerated has Files
// only, beside the error.
func Regenerate(b *bundle.Bundle, dir string) (*Regenerated, error) {
	d := derived.Of(b)
	names, err := d.Regenerate(dir)
	if err != nil {
		return nil, err
	}
	r := &Regenerated{Files: names}
	if trainbundle.Of(b) != nil {
		res, err := d.TrainingResult()
		if err != nil {
			return r, err
		}
		r.Training = &TrainOutcome{Dir: dir, Bundle: b, Derived: d, Result: res}
		return r, nil
	}
	out, err := OutcomeOf(b, dir)
	if err != nil {
		return r, err
	}
	out.Derived = d
	r.Outcome = out
	return r, nil
}

// HasFigures reports whether the outcome has figures to show: a
// performance summary, GB/T metrics or an accuracy check. A bundle of an
// accuracy-only run that kept no check has none.
func (o *Outcome) HasFigures() bool {
	return o.GBT != nil || o.Result.Summary != nil || o.Accuracy != nil
}
