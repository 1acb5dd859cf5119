package benchmark_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/train"
	"aimeter/train/trainbundle"
)

// resnetLog is a small MLPerf Training log of resnet: run_start at startMs,
// one epoch and evaluation a minute, accuracy rising to final, run_stop at
// startMs + ttrMs with the given status.
func resnetLog(benchmark string, startMs, ttrMs int64, final float64, status string) string {
	var b strings.Builder
	line := func(ms int64, kind, key, value, md string) {
		if md != "" {
			md = ", " + md
		}
		fmt.Fprintf(&b, ":::MLLOG {\"namespace\": \"\", \"time_ms\": %d, \"event_type\": \"%s\", \"key\": \"%s\", \"value\": %s, \"metadata\": {\"file\": \"train.py\", \"lineno\": 1%s}}\n", ms, kind, key, value, md)
	}
	line(startMs-2000, "POINT_IN_TIME", "submission_benchmark", `"`+benchmark+`"`, "")
	line(startMs-2000, "POINT_IN_TIME", "submission_platform", `"8xTEST"`, "")
	line(startMs-1000, "INTERVAL_START", "init_start", "null", "")
	line(startMs-1, "INTERVAL_END", "init_stop", "null", "")
	line(startMs, "INTERVAL_START", "run_start", "null", "")
	epochs := int(ttrMs / 60000)
	for e := 1; e <= epochs; e++ {
		t0 := startMs + int64(e-1)*60000
		acc := final - 0.01*float64(epochs-e)
		line(t0+1, "INTERVAL_START", "epoch_start", "null", fmt.Sprintf(`"epoch_num": %d`, e))
		line(t0+50000, "INTERVAL_END", "epoch_stop", "null", fmt.Sprintf(`"epoch_num": %d`, e))
		line(t0+50001, "INTERVAL_START", "eval_start", "null", fmt.Sprintf(`"epoch_num": %d`, e))
		line(t0+59000, "POINT_IN_TIME", "eval_accuracy", fmt.Sprint(acc), fmt.Sprintf(`"epoch_num": %d`, e))
		line(t0+59001, "INTERVAL_END", "eval_stop", "null", fmt.Sprintf(`"epoch_num": %d`, e))
	}
	line(startMs+ttrMs, "INTERVAL_END", "run_stop", "null", fmt.Sprintf(`"status": "%s"`, status))
	return b.String()
}

// writeLogs writes logs as dir/result_N.txt (or the name given).
func writeLogs(t *testing.T, dir string, logs map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range logs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fiveResnetRuns are five runs of resnet a day apart: 3, 5, 4 and 6
// minutes converged, and one of 2 minutes that did not (aborted below the
// target). The olympic average drops the fastest converged run (3) and
// counts the failed one as the dropped slowest: (4 + 5 + 6) / 3 = 5.
func fiveResnetRuns() map[string]string {
	day := int64(86400000)
	base := int64(1700000000000)
	return map[string]string{
		"result_0.txt": resnetLog("resnet", base, 3*60000, 0.7601, "success"),
		"result_1.txt": resnetLog("resnet", base+day, 5*60000, 0.7700, "success"),
		"result_2.txt": resnetLog("resnet", base+2*day, 2*60000, 0.7200, "aborted"),
		"result_3.txt": resnetLog("resnet", base+3*day, 4*60000, 0.7590, "success"),
		"result_4.txt": resnetLog("resnet", base+4*day, 6*60000, 0.7650, "success"),
	}
}

// nextLog is the plan of a training program that prints, at each run, the
// next log of dir (testdata/train/train_next_log.sh), counting its runs in
// counter.
func nextLog(dir, counter string, trials int) *benchmark.TrainCommand {
	return &benchmark.TrainCommand{Argv: []string{"sh", "testdata/train/train_next_log.sh", dir, counter}, Trials: trials}
}

func TestTrainTrialsAndLogsAgree(t *testing.T) {
	tmp := t.TempDir()
	logs := filepath.Join(tmp, "logs")
	writeLogs(t, logs, fiveResnetRuns())
	// The program, run without a trial count: the log names resnet, whose
	// rules ask five runs.
	r, err := trainInto(t, benchmark.TrainPlan{Command: nextLog(logs, filepath.Join(tmp, "counter"), 0)})
	if err != nil || r.Incomplete != "" || r.NoScore != "" {
		t.Fatalf("trials by default: error %v, incomplete %q, no score %q", err, r.Incomplete, r.NoScore)
	}
	if !strings.Contains(noticeText(r), "requires 5 runs: running 4 more") {
		t.Errorf("the default trial count is not explained:\n%s", noticeText(r))
	}
	// The same logs read as files, in the shell's order.
	files, _ := filepath.Glob(filepath.Join(logs, "result_*.txt"))
	slices.Sort(files)
	r2, err := trainInto(t, benchmark.TrainPlan{Logs: files})
	if err != nil || r2.Incomplete != "" || r2.NoScore != "" {
		t.Fatalf("logs: error %v, incomplete %q, no score %q", err, r2.Incomplete, r2.NoScore)
	}
	// And the directory.
	r3, err := trainInto(t, benchmark.TrainPlan{Logs: []string{logs}})
	if err != nil || r3.Incomplete != "" || r3.NoScore != "" {
		t.Fatalf("logs DIR: error %v, incomplete %q, no score %q", err, r3.Incomplete, r3.NoScore)
	}
	byRun, byLogs := r.Dir, r2.Dir
	for _, dir := range []string{byRun, byLogs, r3.Dir} {
		res := readTrainingResult(t, dir)
		m := res.Metrics
		if len(m.Trials) != 5 {
			t.Fatalf("%s: %d trials", dir, len(m.Trials))
		}
		if m.MLPerf.OlympicAverageMin == nil || math.Abs(*m.MLPerf.OlympicAverageMin-5) > 1e-12 || m.MLPerf.Failed != 1 || m.MLPerf.Benchmark != "resnet" || m.MLPerf.RequiredRuns != 5 {
			t.Errorf("%s: MLPerf score %+v, want 5 min with one run that did not converge", dir, m.MLPerf)
		}
		want := []float64{3, 5, 2, 4, 6}
		for i, tm := range m.Trials {
			if tm.TimeToTrainMin == nil || math.Abs(*tm.TimeToTrainMin-want[i]) > 1e-12 {
				t.Errorf("%s: trial %d time to train %v, want %v", dir, tm.Trial, tm.TimeToTrainMin, want[i])
			}
		}
		if f := m.Trials[2].MLPerfFailure; !strings.Contains(f, `run_stop status "aborted"`) {
			t.Errorf("%s: trial 3's failure %q", dir, f)
		}
		// resnet's target ≥ 0.759 is met at equality by trial 4.
		if tg := res.Config.Target; tg == nil || tg.Value != 0.759 || !tg.Inclusive || m.Trials[3].ReachedTarget == nil || !*m.Trials[3].ReachedTarget {
			t.Errorf("%s: target %+v, trial 4 reached %v", dir, res.Config.Target, m.Trials[3].ReachedTarget)
		}
		checkRegenerates(t, dir)
	}
	run := readTrainingRun(t, byRun)
	if len(run.Trials) != 5 || run.Trials[4].Exit == nil || run.Trials[4].Exit.Code != 0 || run.Command == nil {
		t.Errorf("training_run.json of the runs: %+v", run.Trials)
	}
	for i := 1; i <= 5; i++ {
		if _, err := os.Stat(filepath.Join(byRun, trainbundle.TrialOutputFile(i, "stdout"))); err != nil {
			t.Errorf("trial %d's output is not in the bundle: %v", i, err)
		}
	}
	lrun := readTrainingRun(t, byLogs)
	if len(lrun.Trials) != 5 || lrun.Trials[0].Log != files[0] || len(lrun.Trials[0].LogSHA256) != 64 || lrun.Trials[0].Exit != nil {
		t.Errorf("training_run.json of the logs: %+v", lrun.Trials)
	}
	// Times come from the logged time_ms: trial 2 starts a day after
	// trial 1 in both.
	for _, dir := range []string{byRun, byLogs} {
		b, err := bundle.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		var start [6]int64
		for _, e := range trainbundle.Of(b).Events {
			if e.Kind == train.TrainStart {
				start[e.Trial] = e.Time
			}
		}
		if d := start[2] - start[1]; d != 86400000*1e6 {
			t.Errorf("%s: trial 2 starts %d ns after trial 1, want a day", dir, d)
		}
	}
}

func TestTrainTrialsFailuresAreRecorded(t *testing.T) {
	tmp := t.TempDir()
	logs := filepath.Join(tmp, "logs")
	runs := fiveResnetRuns()
	// Trial 2 crashes after its log; trial 3 hangs until --timeout.
	runs["result_1.fail.txt"] = runs["result_1.txt"]
	runs["result_2.hang.txt"] = strings.Split(runs["result_2.txt"], "run_start")[0] + "\n"
	delete(runs, "result_1.txt")
	delete(runs, "result_2.txt")
	writeLogs(t, logs, runs)
	cmd := nextLog(logs, filepath.Join(tmp, "counter"), 5)
	cmd.Timeout = time.Second
	r, err := trainInto(t, benchmark.TrainPlan{Command: cmd})
	out := r.Dir
	// Two runs did not converge, more than the one the olympic average
	// drops: no MLPerf score (the command line's exit 3), saying why.
	if err != nil || !strings.Contains(r.NoScore, "2 of 5 trials did not converge") {
		t.Fatalf("error %v, no score %q: want the two failed trials named", err, r.NoScore)
	}
	run := readTrainingRun(t, out)
	if len(run.Trials) != 5 {
		t.Fatalf("%d trials recorded, want 5 (a failing trial does not stop the next)", len(run.Trials))
	}
	if f := run.Trials[1].Failure; f != "exited with status 1" {
		t.Errorf("trial 2's failure %q", f)
	}
	if f := run.Trials[2].Failure; !strings.Contains(f, "timed out after 1s (the trial timeout)") {
		t.Errorf("trial 3's failure %q", f)
	}
	res := readTrainingResult(t, out)
	if tm := res.Metrics.Trials[1]; !strings.Contains(tm.MLPerfFailure, "the trial failed: exited with status 1") || tm.TimeToTrainMin == nil {
		t.Errorf("trial 2: %q (its log is complete: its time to train %v is still shown)", tm.MLPerfFailure, tm.TimeToTrainMin)
	}
	if tm := res.Metrics.Trials[2]; !strings.Contains(tm.MLPerfFailure, "timed out") {
		t.Errorf("trial 3: %q", tm.MLPerfFailure)
	}
	stderr, err := os.ReadFile(filepath.Join(out, trainbundle.TrialOutputFile(2, "stderr")))
	if err != nil || string(stderr) != "trainer crashed\n" {
		t.Errorf("trial 2's stderr %q, %v", stderr, err)
	}
	checkRegenerates(t, out)
}

func TestTrainTrialsOfDifferentBenchmarks(t *testing.T) {
	tmp := t.TempDir()
	logs := filepath.Join(tmp, "logs")
	runs := fiveResnetRuns()
	runs["result_3.txt"] = resnetLog("bert", 1700000000000, 60000, 0.75, "success")
	writeLogs(t, logs, runs)
	// As logs: refused before anything is written.
	out := filepath.Join(tmp, "out")
	ref, err := benchmark.Train(t.Context(), benchmark.TrainPlan{Logs: []string{logs}, OutputDir: out})
	if ref != nil || !benchmark.IsUsage(err) || !strings.Contains(err.Error(), "different benchmarks") || !strings.Contains(err.Error(), "bert ("+filepath.Join(logs, "result_3.txt")+")") {
		t.Fatalf("outcome %v, error %v: want a usage error naming the odd log", ref, err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("refused logs wrote a bundle")
	}
	// As runs: the run stops at the odd one, recorded, incomplete (the
	// command line's exit 3).
	r, err := trainInto(t, benchmark.TrainPlan{Command: nextLog(logs, filepath.Join(tmp, "counter"), 5), OutputDir: out})
	if err != nil || !strings.Contains(r.Incomplete, "not of one test") {
		t.Fatalf("error %v, incomplete %q: want the trials not of one test", err, r.Incomplete)
	}
	if run := readTrainingRun(t, out); len(run.Trials) != 4 || !strings.Contains(run.Incomplete, "different benchmarks") {
		t.Errorf("trials %d, incomplete %q", len(run.Trials), run.Incomplete)
	}
}

func TestTrainLogsEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	out, err := benchmark.Train(t.Context(), benchmark.TrainPlan{Logs: []string{dir}, OutputDir: filepath.Join(dir, "out")})
	if out != nil || !benchmark.IsUsage(err) || !strings.Contains(err.Error(), "holds no result_*.txt") {
		t.Fatalf("outcome %v, error %v: want a usage error", out, err)
	}
}

func TestTrainLoRALog(t *testing.T) {
	// A llama2_70b_lora log evaluates at samples counts, not epochs.
	r, err := trainInto(t, benchmark.TrainPlan{Logs: []string{"../train/mllog/testdata/llama2_70b_lora.log"}})
	if err != nil || r.Incomplete != "" || r.NoScore != "" {
		t.Fatalf("error %v, incomplete %q, no score %q", err, r.Incomplete, r.NoScore)
	}
	res := readTrainingResult(t, r.Dir)
	tm := res.Metrics.Trials[0]
	want := []struct {
		samples int64
		acc     float64
	}{{3072, 0.9512}, {6144, 0.9361}, {9216, 0.9287}, {12288, 0.924}}
	if len(tm.Validations) != len(want) {
		t.Fatalf("validations %+v", tm.Validations)
	}
	for i, w := range want {
		v := tm.Validations[i]
		if v.Samples != w.samples || v.Accuracy == nil || *v.Accuracy != w.acc {
			t.Errorf("validation %d: %d samples, accuracy %v; want %d, %v", i+1, v.Samples, v.Accuracy, w.samples, w.acc)
		}
	}
	// The eval loss 0.924 meets llama2_70b_lora's target ≤ 0.925.
	if tm.ReachedTarget == nil || !*tm.ReachedTarget || tm.MLPerfFailure != "" {
		t.Errorf("target reached %v, failure %q", tm.ReachedTarget, tm.MLPerfFailure)
	}
	if log := strings.Join(res.Log, "\n"); !strings.Contains(log, "[12288 samples]-[0.9240]") {
		t.Errorf("the log lines do not carry the samples counts:\n%s", log)
	}
}

func TestTrainLogsWithoutRunStop(t *testing.T) {
	// A log cut before its run_stop (a run that crashed, or a file copied
	// while it was written) is a trial that did not converge, said so.
	tmp := t.TempDir()
	logs := filepath.Join(tmp, "logs")
	runs := fiveResnetRuns()
	full := runs["result_4.txt"]
	runs["result_4.txt"] = full[:strings.Index(full, `"key": "run_stop"`)-80]
	runs["result_4.txt"] = runs["result_4.txt"][:strings.LastIndexByte(runs["result_4.txt"], '\n')+1]
	writeLogs(t, logs, runs)
	r, err := trainInto(t, benchmark.TrainPlan{Logs: []string{logs}})
	// Trials 3 and 5 did not converge: no score (the command line's exit 3).
	if err != nil || !strings.Contains(r.NoScore, "trial 5: no run_stop was logged") {
		t.Fatalf("error %v, no score %q", err, r.NoScore)
	}
	tm := readTrainingResult(t, r.Dir).Metrics.Trials[4]
	if tm.TimeToTrainMin != nil || tm.NotAvailable["time_to_train_min"] != "time to train: no run_stop (TrainEnd) was logged" {
		t.Errorf("trial 5: time to train %v, reasons %v", tm.TimeToTrainMin, tm.NotAvailable)
	}
}
