package mllog

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"aimeter/train"
)

// TestLLMLogWithoutEpochs reads a llama2_70b_lora-style log: evaluations
// and blocks carry samples_count and no epoch_num. Every evaluation is its
// own, keyed by its samples count; nothing contradicts; time to train is
// run_stop − run_start; throughput uses train_samples.
func TestLLMLogWithoutEpochs(t *testing.T) {
	f, err := os.Open("testdata/llama2_70b_lora.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, st, err := ParseAll(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Problems != 0 || st.Malformed != 0 {
		t.Fatalf("stats = %+v", st)
	}
	if st.Info["submission_benchmark"] != `"llama2_70b_lora"` {
		t.Errorf("info = %v", st.Info)
	}
	m, err := train.Compute(evs, train.Config{Target: &train.Target{Metric: "eval loss", Value: 0.925, LowerIsBetter: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Problems) != 0 {
		t.Fatalf("problems = %v", m.Problems)
	}
	if len(m.Trials) != 1 {
		t.Fatalf("%d trials", len(m.Trials))
	}
	tm := m.Trials[0]
	wantAcc := []float64{0.9512, 0.9361, 0.9287, 0.9240}
	if len(tm.Validations) != len(wantAcc) {
		t.Fatalf("validations = %+v", tm.Validations)
	}
	for i, v := range tm.Validations {
		if v.Index != i+1 || v.Samples != int64(3072*(i+1)) || v.Accuracy == nil || *v.Accuracy != wantAcc[i] || v.TVMs != 20000 {
			t.Errorf("validation %d = %+v", i, v)
		}
	}
	if tm.TTRMs == nil || *tm.TTRMs != 1220000 || tm.TimeToTrainMin == nil || math.Abs(*tm.TimeToTrainMin-1220000.0/60000) > 1e-12 {
		t.Errorf("T_TR = %v, time to train = %v", tm.TTRMs, tm.TimeToTrainMin)
	}
	if tm.Status != "success" || tm.ReachedTarget == nil || !*tm.ReachedTarget {
		t.Errorf("status %q, reached %v", tm.Status, tm.ReachedTarget)
	}
	if tm.TrainingSetSize != 3901 || tm.TrainingSetFrom != "train_samples" || !tm.TEPFromSamples {
		t.Errorf("set %d from %q, T_EP from samples %v", tm.TrainingSetSize, tm.TrainingSetFrom, tm.TEPFromSamples)
	}
	// T_EP = 1220 s × 3901 / 12288; Th = 3901 / T_EP = 12288 / 1220 s.
	if tm.Throughput == nil || math.Abs(*tm.Throughput-12288.0/1220) > 1e-9 {
		t.Errorf("Th = %v", tm.Throughput)
	}
	if m.Throughput == nil || m.MLPerf.OlympicAverageMin != nil || m.MLPerf.Reason == "" {
		t.Errorf("run Th %v, MLPerf %+v", m.Throughput, m.MLPerf)
	}
	for k, why := range tm.NotAvailable {
		if k == "th" || k == "t_tr_ms" || k == "time_to_train_min" || k == "final_accuracy" || k == "reached_target" {
			t.Errorf("%s not available although it is: %s", k, why)
		}
	}
	// The result file gives each evaluation with its key; the log line
	// carries the samples count.
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"index":4,"samples":12288,`) {
		t.Errorf("JSON lacks the samples key: %s", b)
	}
	lines := train.LogLines(evs, train.LogOptions{})
	if len(lines) != 4 || !strings.HasSuffix(lines[3], "-[1]-[12288 samples]-[0.9240]") {
		t.Errorf("log = %q", lines)
	}
}

// TestEvaluationKeys checks the three keys of an evaluation: epoch_num,
// else samples_count, else order.
func TestEvaluationKeys(t *testing.T) {
	in := `:::MLLOG {"time_ms":1,"key":"eval_start"}
:::MLLOG {"time_ms":2,"key":"eval_stop"}
:::MLLOG {"time_ms":3,"key":"eval_accuracy","value":0.5}
:::MLLOG {"time_ms":4,"key":"eval_start"}
:::MLLOG {"time_ms":5,"key":"eval_stop"}
:::MLLOG {"time_ms":6,"key":"eval_start","metadata":{"samples_count":64}}
:::MLLOG {"time_ms":7,"key":"eval_accuracy","value":0.7,"metadata":{"samples_count":64}}
:::MLLOG {"time_ms":8,"key":"eval_stop","metadata":{"samples_count":64}}
:::MLLOG {"time_ms":9,"key":"eval_stop","metadata":{"samples_count":128}}`
	evs, st, err := ParseAll(strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Problems != 1 || !strings.Contains(st.FirstProblems[0].Reason, "evaluation at 128 samples ends before it starts") {
		t.Errorf("problems = %+v", st.FirstProblems)
	}
	var got []string
	for _, e := range evs {
		if e.Kind == train.ValidationEnd {
			s := string(rune('0'+e.Epoch)) + "/" + string(rune('0'+e.Samples/64))
			if e.Value != nil {
				s += "v"
			}
			got = append(got, s)
		}
	}
	if strings.Join(got, " ") != "1/0v 2/0 0/1v 0/2" {
		t.Errorf("validation ends (epoch/samples÷64) = %v", got)
	}
	m, _ := train.Compute(evs, train.Config{})
	if len(m.Trials[0].Validations) != 3 {
		t.Errorf("validations = %+v", m.Trials[0].Validations)
	}
}
