package train_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/dataset"
	"aimeter/model"
	"aimeter/train"
)

// A Go training loop marks the timing points of Table 6 on a Recorder;
// Compute turns them into the metrics and WriteLog into the training log.
func ExampleRecorder() {
	rec := train.NewRecorder(train.RecorderOptions{})
	const trial, samples = 1, 1000
	rec.DataReadStart(trial)
	rec.DataReadEnd(trial)
	rec.TrainStart(trial)
	rec.AcceleratorStart(trial, 0)
	for epoch := 1; epoch <= 2; epoch++ {
		rec.EpochStart(trial, epoch)
		// … one pass over the training set …
		rec.EpochEnd(trial, epoch, samples)
		rec.ValidationStart(trial, epoch)
		rec.Validation(trial, epoch, 0.5+0.2*float64(epoch))
	}
	rec.TrainEnd(trial, "success")
	rec.PersistStart(trial)
	rec.PersistEnd(trial)

	m, err := train.Compute(rec.Events(), train.Config{TrainingSetSize: samples})
	if err != nil {
		fmt.Println(err)
		return
	}
	tr := m.Trials[0]
	fmt.Println("epochs:", len(tr.Epochs), "validations:", len(tr.Validations))
	fmt.Println("T_T and T_TR measured:", tr.TTMs != nil, tr.TTRMs != nil, "Th in", m.Unit)
	fmt.Println("final accuracy:", train.FormatAccuracy(tr.FinalAccuracy))
	fmt.Println("T_CV:", train.FormatAccuracy(tr.TCVMs), "(not measured)")
	fmt.Println("problems:", len(m.Problems))
	for _, l := range train.LogLines(rec.Events(), train.LogOptions{}) {
		fmt.Println(l[22:]) // without the timestamp
	}
	// Output:
	// epochs: 2 validations: 2
	// T_T and T_TR measured: true true Th in samples/s
	// final accuracy: 0.9000
	// T_CV: -- (not measured)
	// problems: 0
	// [1]-[1]-[0.7000]
	// [1]-[2]-[0.9000]
}

// TestReferenceModelEndToEnd trains the reference model for 2 epochs on a
// small synthetic data set through TrainWithHooks and a Recorder, persists
// it, and computes the metrics, the log and the result file.
func TestReferenceModelEndToEnd(t *testing.T) {
	const trial, n, test = 1, 600, 200
	rec := train.NewRecorder(train.RecorderOptions{Node: "local"})
	rec.TrialStart(trial)
	rec.DataReadStart(trial)
	data := dataset.Synthetic(n+test, 3)
	x := data.Floats()
	rec.DataReadEnd(trial)

	m := model.New([]int{784, 32, 10}, 1)
	cfg := model.DefaultTrainConfig()
	cfg.Epochs = 2
	hooks := model.TrainHooks{
		EpochStart: func(epoch int) { rec.EpochStart(trial, epoch) },
		EpochEnd: func(epoch, samples int, _, _ float64) {
			rec.EpochEnd(trial, epoch, int64(samples))
			rec.ValidationStart(trial, epoch)
			rec.Validation(trial, epoch, m.Evaluate(x[n*784:], data.Labels[n:], test))
		},
	}
	rec.TrainStart(trial)
	rec.AcceleratorStart(trial, 0)
	if err := m.TrainWithHooks(context.Background(), x[:n*784], data.Labels[:n], n, cfg, hooks); err != nil {
		t.Fatal(err)
	}
	rec.TrainEnd(trial, "success")
	rec.PersistStart(trial)
	f, err := os.Create(filepath.Join(t.TempDir(), "model.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Save(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	rec.PersistEnd(trial)
	rec.TrialEnd(trial, "success")

	s, _ := train.LookupScenario("T1-1")
	met, err := train.Compute(rec.Events(), train.Config{Epochs: 2, Target: &train.Target{Metric: "Top1 accuracy", Value: 0.2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(met.Problems) != 0 {
		t.Errorf("problems %v", met.Problems)
	}
	tr := met.Trials[0]
	if len(tr.Epochs) != 2 || tr.Epochs[0].Samples != n || tr.Epochs[1].Samples != n {
		t.Fatalf("epochs %+v", tr.Epochs)
	}
	for name, v := range map[string]*float64{"T_T": tr.TTMs, "T_L": tr.TLMs, "T_w": tr.TWMs, "T_TR": tr.TTRMs, "T_P": tr.TPMs, "Th": tr.Throughput, "accuracy": tr.FinalAccuracy} {
		if v == nil || !(*v >= 0) {
			t.Errorf("%s = %v", name, v)
		}
	}
	// T_T covers T_L, T_TR and T_P, which do not overlap here.
	if *tr.TTMs < *tr.TLMs+*tr.TTRMs+*tr.TPMs {
		t.Errorf("T_T %v < T_L %v + T_TR %v + T_P %v", *tr.TTMs, *tr.TLMs, *tr.TTRMs, *tr.TPMs)
	}
	// Th = n / mean epoch time.
	if want := n / (*tr.TEPMeanMs / 1e3); *tr.Throughput != want {
		t.Errorf("Th %v, want %v", *tr.Throughput, want)
	}
	// Two short epochs do better than chance (0.1); the weights are
	// deterministic, so this does not depend on the machine.
	if *tr.FinalAccuracy <= 0.2 || tr.ReachedTarget == nil || !*tr.ReachedTarget {
		t.Errorf("accuracy %v after 2 epochs on the synthetic set", *tr.FinalAccuracy)
	}
	lines := train.LogLines(rec.Events(), train.LogOptions{})
	if len(lines) != 2 || !strings.HasSuffix(lines[1], "-[1]-[2]-["+train.FormatAccuracy(tr.FinalAccuracy)+"]") {
		t.Errorf("log %q", lines)
	}

	res := &train.ResultFile{Scenario: &s, Config: train.Config{Epochs: 2}, Metrics: met}
	var b strings.Builder
	if err := train.WriteResult(&b, res); err != nil {
		t.Fatal(err)
	}
	back, err := train.ReadResult(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if back.Metrics == nil || len(back.Metrics.Trials) != 1 || *back.Metrics.Trials[0].TTRMs != *tr.TTRMs || back.Scenario.ID != "T1-1" {
		t.Errorf("result round trip lost data: %+v", back)
	}
}
