package benchmark_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/internal/mllogtest"
)

// TestTrainMatchesMLPerfLogging writes sets of MLPerf Training result logs
// that MLCommons' tools accept, scores each set with mlperf-logging's own
// compute_score (PyPI mlperf-logging 4.1.68, closed division, ruleset
// 4.0.0), and checks that Train gives the same per-run times to
// train and the same final score, to the microsecond, both running a
// program once per log (TrainPlan.Command) and reading the logs
// (TrainPlan.Logs).
func TestTrainMatchesMLPerfLogging(t *testing.T) {
	python := mllogtest.Python(t)
	day := 24 * time.Hour
	at := func(i int) time.Time { return mllogtest.DefaultStart.Add(time.Duration(i) * day) }
	min := func(m float64) time.Duration { return time.Duration(m * float64(time.Minute)) }
	sets := []struct {
		name  string
		specs []mllogtest.LogSpec
	}{
		{"resnet: one run did not converge, one of 4 ranks with skewed clocks, one with fractional time_ms", []mllogtest.LogSpec{
			{Benchmark: "resnet", Start: at(0), TimeToTrain: min(50), Converged: true},
			{Benchmark: "resnet", Start: at(1), TimeToTrain: min(48.25), Converged: true, Ranks: 4, RankSkew: 1500 * time.Millisecond},
			{Benchmark: "resnet", Start: at(2), TimeToTrain: min(30), Converged: false},
			{Benchmark: "resnet", Start: at(3).Add(375 * time.Microsecond), TimeToTrain: min(52) + 250*time.Microsecond, Converged: true, Fractional: true},
			{Benchmark: "resnet", Start: at(4), TimeToTrain: min(49.5), Converged: true},
		}},
		{"resnet: five converged runs, the fastest and the slowest dropped", []mllogtest.LogSpec{
			{Benchmark: "resnet", Start: at(0), TimeToTrain: min(41), Converged: true},
			{Benchmark: "resnet", Start: at(1), TimeToTrain: min(39.5), Converged: true},
			{Benchmark: "resnet", Start: at(2), TimeToTrain: min(44), Converged: true, Ranks: 2},
			{Benchmark: "resnet", Start: at(3), TimeToTrain: min(40.25), Converged: true},
			{Benchmark: "resnet", Start: at(4), TimeToTrain: min(47), Converged: true},
		}},
		{"llama2_70b_lora: ten runs evaluated at samples counts, one did not converge", func() []mllogtest.LogSpec {
			var s []mllogtest.LogSpec
			for i := range 10 {
				s = append(s, mllogtest.LogSpec{Benchmark: "llama2_70b_lora", Start: at(i), TimeToTrain: min(25 + float64(i%4)*1.5 + float64(i)/8), Converged: i != 6, Evals: 3 + i%3})
			}
			return s
		}()},
	}
	for i, set := range sets {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			tmp := t.TempDir()
			logs := filepath.Join(tmp, "logs")
			if err := os.Mkdir(logs, 0o755); err != nil {
				t.Fatal(err)
			}
			names, err := mllogtest.WriteSet(logs, set.specs)
			if err != nil {
				t.Fatal(err)
			}
			score, err := mllogtest.ComputeScore(python, logs, "4.0.0")
			if err != nil {
				t.Fatal(err)
			}
			if score.Final == nil || score.OlympicSkipped {
				t.Fatalf("%s: mlperf-logging gave no olympic score:\n%s", set.name, score.Output)
			}
			r, err := trainInto(t, benchmark.TrainPlan{Command: nextLog(logs, filepath.Join(tmp, "counter"), len(names))})
			r2, err2 := trainInto(t, benchmark.TrainPlan{Logs: []string{logs}})
			for _, c := range []struct {
				how string
				out *benchmark.TrainOutcome
				err error
			}{{"TrainPlan.Command, Trials " + fmt.Sprint(len(names)), r, err}, {"TrainPlan.Logs DIR", r2, err2}} {
				if c.err != nil || c.out.Incomplete != "" || c.out.NoScore != "" {
					t.Fatalf("%s: %s: error %v, incomplete %q, no score %q", set.name, c.how, c.err, c.out.Incomplete, c.out.NoScore)
				}
				m := readTrainingResult(t, c.out.Dir).Metrics
				got := m.MLPerf.OlympicAverageMin
				if got == nil || math.Abs(*got-*score.Final) > 1e-6/60 {
					t.Errorf("%s: %s: olympic average %v min, mlperf-logging %v min\n%s", set.name, c.how, got, *score.Final, score.Output)
				} else {
					t.Logf("%s: %s: %.9f min (mlperf-logging %.9f)", set.name, c.how, *got, *score.Final)
				}
				if m.MLPerf.Failed != len(score.Dropped) {
					t.Errorf("%s: %s: %d runs did not converge, mlperf-logging dropped %v", set.name, c.how, m.MLPerf.Failed, score.Dropped)
				}
				for j, tm := range m.Trials {
					want, ok := score.PerFile[filepath.Base(names[j])]
					switch {
					case !ok && tm.MLPerfFailure == "":
						t.Errorf("%s: %s: trial %d counted, mlperf-logging dropped %s", set.name, c.how, tm.Trial, names[j])
					case ok && tm.MLPerfFailure != "":
						t.Errorf("%s: %s: trial %d did not converge (%s), mlperf-logging scored %s", set.name, c.how, tm.Trial, tm.MLPerfFailure, names[j])
					case ok && (tm.TimeToTrainMin == nil || math.Abs(*tm.TimeToTrainMin-want) > 1e-6/60):
						t.Errorf("%s: %s: trial %d time to train %v min, mlperf-logging %v", set.name, c.how, tm.Trial, tm.TimeToTrainMin, want)
					}
				}
			}
			if !strings.Contains(noticeText(r), "trial 5 of") {
				t.Errorf("the trials were not run one by one:\n%s", noticeText(r))
			}
		})
	}
}
