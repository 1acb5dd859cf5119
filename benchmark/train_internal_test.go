package benchmark

import (
	"errors"
	"strings"
	"testing"

	"aimeter/train"
)

func TestRedactArgv(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want []string
	}{
		{"a secret option's separate value is hidden", []string{"python", "--api-key", "sk-1", "x"}, []string{"python", "--api-key", "REDACTED", "x"}},
		{"a secret option's joined value is hidden", []string{"--token=abc"}, []string{"--token=REDACTED"}},
		{"other options are kept", []string{"--epochs", "3", "--lr=0.1"}, []string{"--epochs", "3", "--lr=0.1"}},
		{"a secret flag followed by another flag keeps the flag", []string{"--use-auth", "--epochs", "3"}, []string{"--use-auth", "--epochs", "3"}},
	} {
		got := redactArgv(tc.in)
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestTrainPlanValidate: each plan that cannot run names its field.
func TestTrainPlanValidate(t *testing.T) {
	ref := func() *TrainReference { return &TrainReference{} }
	for _, tc := range []struct {
		name  string
		plan  TrainPlan
		field string
	}{
		{"nothing to measure", TrainPlan{OutputDir: "o"}, "TrainPlan"},
		{"two ways in", TrainPlan{Reference: ref(), Logs: []string{"x"}, OutputDir: "o"}, "TrainPlan"},
		{"no output directory", TrainPlan{Reference: ref()}, "TrainPlan.OutputDir"},
		{"an empty command", TrainPlan{Command: &TrainCommand{}, OutputDir: "o"}, "TrainPlan.Command.Argv"},
		{"a negative timeout", TrainPlan{Command: &TrainCommand{Argv: []string{"true"}, Timeout: -1}, OutputDir: "o"}, "TrainPlan.Command.Timeout"},
		{"a bad address", TrainPlan{Listen: &TrainListen{Addr: "9400"}, OutputDir: "o"}, "TrainPlan.Listen.Addr"},
		{"an unknown scenario", TrainPlan{Reference: ref(), ScenarioID: "T9-9", OutputDir: "o"}, "TrainPlan.ScenarioID"},
		{"a metric without a target", TrainPlan{Reference: ref(), TargetMetric: "WER", OutputDir: "o"}, "TrainPlan.TargetMetric"},
		{"a workload without a baseline", TrainPlan{Reference: ref(), Workloads: []train.Workload{{Name: "a"}}, OutputDir: "o"}, "TrainPlan.Workloads"},
		{"other parallelism without its algorithm", TrainPlan{Reference: ref(), Training: train.TrainingInfo{Parallelism: new(train.ParallelOther)}, OutputDir: "o"}, "TrainPlan.Training"},
	} {
		err := tc.plan.Validate()
		var ue *UsageError
		if !errors.As(err, &ue) || ue.Field != tc.field || strings.Contains(err.Error(), "--") {
			t.Errorf("%s: %v, want a UsageError of %s naming no flag", tc.name, err, tc.field)
		}
	}
	if err := (&TrainPlan{Reference: ref(), OutputDir: "o"}).Validate(); err != nil {
		t.Errorf("a plan that can run: %v", err)
	}
}
