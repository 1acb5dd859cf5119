package benchmark

import (
	"fmt"
	"io"
	"time"

	"aimeter/aisbench"
	"aimeter/train/trainbundle"
)

// TrainAisBench is an ais-bench workload package run unchanged: its
// code/benchmark.sh, with aimeter's ais_utils.py (package aisbench).
type TrainAisBench struct {
	// Dir is the package folder. Required; it is not modified.
	Dir string
	// Timeout ends a package that runs longer (SIGTERM to its process
	// group, then SIGKILL), recorded as incomplete; 0 is no limit.
	Timeout time.Duration
	// Stdout and Stderr, if set, are shown the package's output as it
	// comes; the bundle keeps the first TrainCaptureLimit bytes anyway.
	Stdout, Stderr io.Writer
}

// aisBench runs the package once and turns its run into events: the
// phases aimeter timed and the intervals the workload stamped. The keys
// it set stay raw in training_run.json; gbt_training.json maps them
// (aisbench.Map).
func (t *trainer) aisBench(run *trainbundle.TrainingRun, tr *trainbundle.Training) error {
	a := t.plan.AisBench
	t.notify(Info, "running the ais-bench package %s (code/benchmark.sh) in a copy, with aimeter's ais_utils.py", a.Dir)
	r, out, err := aisbench.Execute(t.ctx, aisbench.Options{Dir: a.Dir, Timeout: a.Timeout, Stdout: a.Stdout, Stderr: a.Stderr, CaptureLimit: TrainCaptureLimit})
	if err != nil {
		return &startError{err}
	}
	run.Source = trainbundle.SourceAisBench
	run.AisBench = r
	run.Origin = r.Start
	run.SetLocation(time.Local)
	tr.Events = aisbench.Events(r, t.node)
	tr.Stdout, tr.Stderr, tr.AisBenchFiles = out.Stdout, out.Stderr, out.Files
	t.notify(Info, "benchmark.sh %s; %d results set", r.Exit, len(r.Records))
	switch {
	case t.ctx.Err() != nil:
		return nil // interrupted: Train says so
	case r.TimedOut:
		run.Incomplete = "the ais-bench package " + r.Exit
		return fmt.Errorf("the ais-bench package %s; the bundle holds what was measured", r.Exit)
	case r.ExitCode != 0:
		run.Incomplete = "the ais-bench package's benchmark.sh " + r.Exit
		return fmt.Errorf("the ais-bench package's benchmark.sh %s; the bundle holds what was measured", r.Exit)
	}
	return nil
}
