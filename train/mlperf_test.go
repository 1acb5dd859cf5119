package train

import (
	"strings"
	"testing"
)

func TestTargetReached(t *testing.T) {
	for _, c := range []struct {
		why    string
		target Target
		a      float64
		want   bool
	}{
		{"GB/T thresholds are strict: equal is not reached", Target{Value: 0.8}, 0.8, false},
		{"higher is better, above", Target{Value: 0.8}, 0.81, true},
		{"MLPerf targets are met at equality (resnet ≥ 0.759)", Target{Value: 0.759, Inclusive: true}, 0.759, true},
		{"MLPerf, below the target", Target{Value: 0.759, Inclusive: true}, 0.7589, false},
		{"lower is better, strict, equal", Target{Value: 0.925, LowerIsBetter: true}, 0.925, false},
		{"lower is better, inclusive, equal (llama2_70b_lora ≤ 0.925)", Target{Value: 0.925, LowerIsBetter: true, Inclusive: true}, 0.925, true},
		{"lower is better, above the target", Target{Value: 0.925, LowerIsBetter: true, Inclusive: true}, 0.9251, false},
	} {
		if got := c.target.Reached(c.a); got != c.want {
			t.Errorf("%s: %v.Reached(%v) = %v, want %v", c.why, c.target, c.a, got, c.want)
		}
	}
	if s := (Target{Metric: "eval loss", Value: 0.925, LowerIsBetter: true, Inclusive: true}).String(); s != "eval loss ≤ 0.925" {
		t.Errorf("String = %q", s)
	}
	if s := (Target{Value: 0.8}).String(); s != "accuracy > 0.8" {
		t.Errorf("String = %q", s)
	}
}

func TestLookupMLPerf(t *testing.T) {
	// The figures of mlperf-logging 4.1.68 (benchmark_meta.py, the
	// closed-division eval_accuracy checks, result_summarizer).
	for _, c := range []struct {
		name       string
		runs, drop int
		target     float64
		lower      bool
	}{
		{"resnet", 5, 1, 0.759, false},
		{"llama2_70b_lora", 10, 1, 0.925, true},
		{"gpt3", 3, 1, 2.69, true},
		{"unet3d", 40, 4, 0.908, false},
		{"bert", 10, 1, 0.72, false},
	} {
		b, ok := LookupMLPerf(c.name)
		if !ok {
			t.Fatalf("%s unknown", c.name)
		}
		if b.Name != c.name || b.Runs != c.runs || b.Drop != c.drop || b.Target == nil || b.Target.Value != c.target || b.Target.LowerIsBetter != c.lower || !b.Target.Inclusive {
			t.Errorf("%s: %+v (target %+v)", c.name, b, b.Target)
		}
	}
	if b, ok := LookupMLPerf("maskrcnn"); !ok || b.Target != nil || b.Runs != 5 {
		t.Errorf("maskrcnn (two-part target): %+v, %v", b, ok)
	}
	if _, ok := LookupMLPerf("not_a_benchmark"); ok {
		t.Error("an unknown benchmark was found")
	}
	// The table's targets are copies: changing one does not change the next
	// lookup.
	b, _ := LookupMLPerf("resnet")
	b.Target.Value = 0
	if b2, _ := LookupMLPerf("resnet"); b2.Target.Value != 0.759 {
		t.Error("LookupMLPerf shares its table's targets")
	}
	if n := len(MLPerfBenchmarks()); n < 20 {
		t.Errorf("%d benchmarks listed", n)
	}
}

// trialRun is one trial of the MLPerf score test: run_start at 0, run_stop
// at stopMs, a final evaluation, the given statuses.
func trialRun(trial int, stopMs, acc float64, runStatus, trialStatus string) []Event {
	evs := []Event{
		ev(TrialStart, 0, inTrial(trial)),
		ev(TrainStart, 0, inTrial(trial)),
		ev(ValidationStart, stopMs-10, inTrial(trial), num(1)),
		ev(ValidationEnd, stopMs-1, inTrial(trial), num(1), val(acc)),
		ev(TrainEnd, stopMs, inTrial(trial), status(runStatus)),
		ev(TrialEnd, stopMs+1, inTrial(trial), status(trialStatus)),
	}
	base := int64(trial) * 1e12 // trials an hour or more apart
	for i := range evs {
		evs[i].Time += base
	}
	return evs
}

func TestComputeMLPerfFailures(t *testing.T) {
	target := &Target{Metric: "top-1", Value: 0.759, Inclusive: true}
	var evs []Event
	evs = append(evs, trialRun(1, 60000, 0.76, "success", "success")...)
	evs = append(evs, trialRun(2, 120000, 0.759, "success", "success")...) // equal: met
	evs = append(evs, trialRun(3, 90000, 0.70, "aborted", "success")...)
	evs = append(evs, trialRun(4, 30000, 0.80, "success", "failed: the program exited with status 1")...)
	evs = append(evs, trialRun(5, 180000, 0.77, "success", "success")...)
	m, err := Compute(evs, Config{Target: target})
	if err != nil {
		t.Fatal(err)
	}
	wantFail := map[int]string{
		3: `run_stop status "aborted"`,
		4: "the trial failed: the program exited with status 1",
	}
	for _, tm := range m.Trials {
		if tm.MLPerfFailure != wantFail[tm.Trial] {
			t.Errorf("trial %d: MLPerfFailure %q, want %q", tm.Trial, tm.MLPerfFailure, wantFail[tm.Trial])
		}
	}
	// Two failed, one may be dropped: no score, and the reason names both.
	if m.MLPerf.OlympicAverageMin != nil || m.MLPerf.Failed != 2 {
		t.Fatalf("score %+v", m.MLPerf)
	}
	for _, want := range []string{"2 of 5 trials did not converge", "trial 3: run_stop status", "trial 4: the trial failed"} {
		if !strings.Contains(m.MLPerf.Reason, want) {
			t.Errorf("reason %q lacks %q", m.MLPerf.Reason, want)
		}
	}
	// Without trial 4's failure: 1 failed, dropped as the slowest; of 1, 2
	// and 3 minutes the fastest is dropped: (2 + 3) / 2.
	evs = append(evs[:18], evs[24:]...)
	m, _ = Compute(evs, Config{Target: target})
	checkF(t, "olympic average", m.MLPerf.OlympicAverageMin, 2.5)
	if m.MLPerf.Reason != "" {
		t.Errorf("reason %q with a score", m.MLPerf.Reason)
	}
}

func TestMLPerfTimeToTrainRanks(t *testing.T) {
	// Two ranks log run_start and run_stop a little apart: mlperf-logging
	// takes the last run_start before the first run_stop, and that run_stop;
	// T_TR spans the earliest start and the latest end.
	evs := []Event{
		ev(TrainStart, 0, onRank(0)),
		ev(TrainStart, 5, onRank(1)),
		ev(TrainEnd, 60005, onRank(0), status("success")),
		ev(TrainEnd, 60010, onRank(1), status("success")),
	}
	m, _ := Compute(evs, Config{})
	tm := m.Trials[0]
	checkF(t, "T_TR", tm.TTRMs, 60010)
	checkF(t, "time to train", tm.TimeToTrainMin, 60000.0/60/1000)
}

func TestComputeBlocksOfEpochs(t *testing.T) {
	// A ResNet-50 log evaluates every 4 epochs and logs blocks, not epochs:
	// two blocks of 4 epochs, 40 s and 44 s, with a 2 s evaluation between.
	// T_EP = 84 s / 8 epochs; Th = 1 281 167 samples (train_samples) ÷ T_EP.
	block := func(k Kind, tms float64, first int, epochs int64) Event {
		return ev(k, tms, num(first), count(epochs))
	}
	evs := []Event{
		ev(TrainSamples, 0, count(1281167)),
		ev(TrainStart, 1000),
		block(BlockStart, 1000, 1, 4),
		block(BlockEnd, 41000, 1, 4),
		ev(ValidationStart, 41000, num(4)),
		ev(ValidationEnd, 43000, num(4), val(0.6)),
		block(BlockStart, 43000, 5, 4),
		block(BlockEnd, 87000, 5, 4),
		ev(ValidationStart, 87000, num(8)),
		ev(ValidationEnd, 89000, num(8), val(0.76)),
		ev(TrainEnd, 89000, status("success")),
	}
	m, err := Compute(evs, Config{})
	if err != nil {
		t.Fatal(err)
	}
	tm := m.Trials[0]
	checkF(t, "T_EP", tm.TEPMeanMs, 84000.0/8)
	checkF(t, "Th", tm.Throughput, 1281167/(84.0/8))
	if !tm.TEPFromBlocks || tm.TEPFromSamples || tm.TrainingSetFrom != "train_samples" {
		t.Errorf("from blocks %v, from samples %v, set size from %q", tm.TEPFromBlocks, tm.TEPFromSamples, tm.TrainingSetFrom)
	}
	// Blocks that count samples (LLM logs) are not blocks of epochs.
	for i := range evs {
		if evs[i].Kind == BlockEnd {
			evs[i].Samples = evs[i].Count
		}
	}
	m, _ = Compute(evs, Config{})
	if m.Trials[0].TEPFromBlocks {
		t.Error("blocks counting samples were read as epochs")
	}
}
