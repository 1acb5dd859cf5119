package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/bundle"
	"aimeter/train"
	"aimeter/train/trainbundle"
)

// readTrainingRun reads training_run.json of the bundle in dir.
func readTrainingRun(t *testing.T, dir string) trainbundle.TrainingRun {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, bundle.TrainingRunFile))
	if err != nil {
		t.Fatal(err)
	}
	var run trainbundle.TrainingRun
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatal(err)
	}
	return run
}

// TestTrainCommandMLLOG: the flags of the training information reach the
// result, and the console shows the summary and the log but not, with -q,
// the child's output. benchmark's TestTrainCommandMLLOG checks the bundle.
func TestTrainCommandMLLOG(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r := runCLI(t, "", "train", "-q", "--trials", "1", "--output-dir", out, "--training-set-mb", "150", "--scenario-id", "T1-1", "--optimizer", "LARS", "--parallelism", "2", "--", "sh", "../../benchmark/testdata/train/child.sh")
	if r.code != ExitOK {
		t.Fatalf("exit %d, want 0: %v", r.code, r)
	}
	run := readTrainingRun(t, out)
	if run.Training.Optimizer != "LARS" || run.Training.Parallelism == nil || *run.Training.Parallelism != train.ParallelData {
		t.Errorf("training information %+v, want LARS and data parallelism from the flags", run.Training)
	}
	if run.Scenario == nil || run.Scenario.ID != "T1-1" || run.Config.TrainingSetMB != 150 {
		t.Errorf("scenario %v, training set %v MB: want T1-1 and 150 MB from the flags", run.Scenario, run.Config.TrainingSetMB)
	}
	if !strings.Contains(r.stdout, "[2023:11:1") || !strings.Contains(r.stdout, "T_TR 4.501 s") {
		t.Errorf("console summary lacks the log lines or T_TR:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "launching 2 ranks") {
		t.Error("-q showed the child's output")
	}
}

func TestTrainCommandShowsOutputLive(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r := runCLI(t, "", "train", "--trials", "1", "--output-dir", out, "--", "sh", "../../benchmark/testdata/train/child.sh")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %v", r.code, r)
	}
	if !strings.Contains(r.stdout, "0: launching 2 ranks") || !strings.Contains(r.stderr, "training done") {
		t.Errorf("the child's stdout and stderr are not shown:\n%v", r)
	}
}

func TestTrainCommandChildFails(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r := runCLI(t, "", "train", "-q", "--output-dir", out, "--", "sh", "../../benchmark/testdata/train/train_fail.sh")
	if r.code != ExitFailure {
		t.Fatalf("exit %d, want %d (the child failed): %v", r.code, ExitFailure, r)
	}
	if !strings.Contains(r.stderr, "exited with status 3") {
		t.Errorf("stderr does not give the child's exit status:\n%s", r.stderr)
	}
}

func TestTrainCommandIncomplete(t *testing.T) {
	// A child that exits 0 but never ends training: exit 3.
	dir := t.TempDir()
	script := filepath.Join(dir, "t.sh")
	line := `:::MLLOG {"time_ms": 1700000000000, "key": "run_start", "value": null, "metadata": {}}`
	if err := os.WriteFile(script, []byte("echo '"+line+"'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "train", "-q", "--output-dir", filepath.Join(dir, "out"), "--", "sh", script)
	if r.code != ExitInvalid || !strings.Contains(r.stderr, "incomplete") {
		t.Fatalf("exit %d, want %d naming the result incomplete: %v", r.code, ExitInvalid, r)
	}
}

func TestTrainCommandInterrupted(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "t.sh")
	line := `:::MLLOG {"time_ms": 1700000000000, "key": "run_start", "value": null, "metadata": {}}`
	if err := os.WriteFile(script, []byte("echo '"+line+"'\nexec sleep 60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	tw := newTwin(t, "train", "--output-dir", out, "--", "sh", script)
	done := make(chan int, 1)
	go func() { done <- tw.main() }()
	select {
	case <-tw.notified:
	case <-time.After(20 * time.Second):
		t.Fatal("aimeter train never asked for interrupts")
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(tw.stdout.String(), "run_start") {
		if time.Now().After(deadline) {
			t.Fatal("the child's output never came")
		}
		time.Sleep(10 * time.Millisecond)
	}
	tw.mu.Lock()
	tw.interrupt(fmt.Errorf("interrupted by Ctrl-C (SIGINT)"))
	tw.mu.Unlock()
	select {
	case code := <-done:
		if code != ExitInterrupted {
			t.Errorf("exit %d, want %d", code, ExitInterrupted)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("aimeter train did not end after the interrupt")
	}
}

func TestTrainUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing to measure", nil, "nothing to measure: give --workload, --listen, --logs, --ais-bench or a training command after --"},
		{"two ways in at once", []string{"--workload", "reference", "--listen", "127.0.0.1:0"}, "--workload, --listen, --logs, --ais-bench and a training command after -- are five ways in; give one"},
		{"an unknown workload", []string{"--workload", "bert"}, "--workload"},
		{"--ranks needs --listen", []string{"--ranks", "2", "--", "true"}, "--ranks needs --listen"},
		{"--trials: --logs takes one trial a file", []string{"--trials", "2", "--logs", "../../benchmark/testdata/train/child.sh"}, "--trials"},
		{"--timeout applies to a command", []string{"--timeout", "1s", "--workload", "reference"}, "--timeout"},
		{"a negative --timeout", []string{"--timeout", "-1s", "--", "true"}, "--timeout"},
		{"--logs of a file that is not there", []string{"--logs", "testdata/no-such-result.txt"}, "no such file"},
		{"--logs of a file with no MLLOG record", []string{"--logs", "root.go"}, "not an MLPerf Training log"},
		{"--logs and a command are two ways in", []string{"--logs", "../../benchmark/testdata/train/child.sh", "--", "true"}, "ways in"},
		{"an unknown scenario row", []string{"--scenario-id", "T9-9", "--", "true"}, "--scenario-id"},
		{"a target given in percent", []string{"--target", "85", "--", "true"}, "--target"},
		{"a baseline without a value", []string{"--baseline", "T1-1", "--", "true"}, "--baseline"},
		{"a bad listen address", []string{"--listen", "9400"}, "--listen"},
		{"zero trials", []string{"--workload", "reference", "--trials", "0"}, "--trials"},
		{"a missing --info file", []string{"--info", "no-such.yaml", "--", "true"}, "--info"},
		{"a missing power replay", []string{"--power", "replay:no-such.csv", "--", "true"}, "no-such.csv"},
		{"a power replay without its header", []string{"--power", "replay:testdata/train_bad_replay.csv", "--", "true"}, "time,node,watts"},
		{"the deprecated --power-replay without its header", []string{"--power-replay", "testdata/train_bad_replay.csv", "--", "true"}, "time,node,watts"},
		{"a parallelism code out of range", []string{"--parallelism", "7", "--", "true"}, "--parallelism"},
		{"other parallelism without its algorithm", []string{"--parallelism", "4", "--", "true"}, "--parallel-algorithm"},
		{"arguments before --", []string{"python", "--", "train.py"}, "before --"},
	} {
		r := runCLI(t, "", append([]string{"train", "--output-dir", t.TempDir()}, tc.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d naming %q", tc.name, r.code, r.stderr, ExitUsage, tc.want)
		}
	}
}

func TestTrainCommandNotFound(t *testing.T) {
	r := runCLI(t, "", "train", "--output-dir", t.TempDir(), "--", "no-such-trainer-xyz")
	if r.code != ExitFailure || !strings.Contains(r.stderr, "no-such-trainer-xyz") {
		t.Errorf("exit %d, stderr %q: want 1 naming the command", r.code, r.stderr)
	}
}

// TestTrainPowerReplay: --power replay:FILE and the deprecated
// --power-replay FILE (which says so) both give the plan the replay:
// training_run.json names it. benchmark's TestTrainPowerReplay checks what
// the replay measures.
func TestTrainPowerReplay(t *testing.T) {
	dir := t.TempDir()
	replay := filepath.Join(dir, "meter.csv")
	if err := os.WriteFile(replay, []byte("time,node,watts\n"+time.Now().UTC().Format(time.RFC3339Nano)+",,500\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, form := range [][]string{{"--power", "replay:" + replay}, {"--power-replay", replay}} {
		out := filepath.Join(dir, form[0])
		// A child that logs nothing: the result is incomplete, exit 3.
		r := runCLI(t, "", append([]string{"train", "-q", "--output-dir", out}, append(form, "--", "true")...)...)
		if r.code != ExitInvalid {
			t.Fatalf("%v", r)
		}
		if deprecated := strings.Contains(r.stderr, "use --power replay:FILE"); deprecated != (form[0] == "--power-replay") {
			t.Errorf("%s: the deprecation notice shown %v:\n%s", form[0], deprecated, r.stderr)
		}
		if run := readTrainingRun(t, out); run.PowerReplay != "meter.csv" {
			t.Errorf("%s: training_run.json names the replay %q, want meter.csv", form[0], run.PowerReplay)
		}
	}
}

// TestTrainPowerWithLogs: --power of a live meter with --logs is refused,
// naming the flags.
func TestTrainPowerWithLogs(t *testing.T) {
	dir := t.TempDir()
	smi := filepath.Join(dir, "nvidia-smi")
	if err := os.WriteFile(smi, []byte("#!/bin/sh\necho '0, 300.00, 50'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := runCLI(t, "", "train", "--logs", "../../benchmark/testdata/train/child.sh", "--power", "nvidia-smi:"+smi, "--output-dir", filepath.Join(dir, "bad"))
	if bad.code != ExitUsage || !strings.Contains(bad.stderr, "--power samples the meters") || !strings.Contains(bad.stderr, "replay:FILE") {
		t.Errorf("--power of a live meter with --logs: %v", bad)
	}
}

// TestTrainNoScoreExit: trials with no MLPerf score (more did not converge
// than the olympic average may drop) exit 3 saying why. benchmark's trials
// tests check when a result has no score.
func TestTrainNoScoreExit(t *testing.T) {
	log, err := os.ReadFile("../../train/mllog/testdata/llama2_70b_lora.log")
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(log), "\n") {
		if !strings.Contains(l, `"run_stop"`) {
			kept = append(kept, l)
		}
	}
	dir := t.TempDir()
	// The first trial complete, two cut before their run_stop.
	for i, text := range []string{string(log), strings.Join(kept, ""), strings.Join(kept, "")} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("result_%d.txt", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLI(t, "", "train", "-q", "--logs", dir, "--output-dir", filepath.Join(dir, "out"))
	if r.code != ExitInvalid || !strings.Contains(r.stderr, "no MLPerf score") {
		t.Errorf("exit %d, want %d saying there is no MLPerf score: %v", r.code, ExitInvalid, r)
	}
}
