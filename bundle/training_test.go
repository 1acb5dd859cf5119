package bundle

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"aimeter/train"
	"aimeter/train/mllog"
)

func TestTrainingTrialOutputs(t *testing.T) {
	dir := t.TempDir()
	exit := mllog.Exit{Code: 1, Reason: "exited with status 1"}
	tr := &Training{
		Run: TrainingRun{Source: SourceMLLOG, Trials: []TrainingTrial{
			{Trial: 1, Exit: &mllog.Exit{Reason: "exited with status 0"}, StdoutBytes: 6},
			{Trial: 2, Exit: &exit, StdoutBytes: 4, StderrBytes: 6, Failure: "exited with status 1"},
			{Trial: 3, Log: "result_2.txt", LogSHA256: "00", StdoutBytes: 3},
		}},
		Events:       []train.Event{{Kind: train.TrainStart, Trial: 1}},
		TrialOutputs: []TrialOutput{{Stdout: []byte("first\n")}, {Stdout: []byte("two\n"), Stderr: []byte("crash\n")}, {Stdout: []byte("log")}},
	}
	if err := Write(dir, &Bundle{Training: tr, Version: "test"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, TrialOutputFile(1, "stderr"))); err == nil {
		t.Error("an empty stream was written")
	}
	b, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := b.Training.TrialOutputs
	if len(got) != 3 || !bytes.Equal(got[1].Stderr, []byte("crash\n")) || !bytes.Equal(got[2].Stdout, []byte("log")) || got[0].Stderr != nil {
		t.Fatalf("trial outputs read back: %+v", got)
	}
	if f := b.Training.Run.Trials[1]; f.Failure != "exited with status 1" || f.Exit == nil || f.Exit.Code != 1 {
		t.Errorf("trial 2 read back: %+v", f)
	}
	// A later run with one trial into the same directory leaves no file of
	// the earlier trials behind.
	tr.Run.Trials, tr.TrialOutputs = tr.Run.Trials[:1], tr.TrialOutputs[:1]
	if err := Write(dir, &Bundle{Training: tr, Version: "test"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{TrialOutputFile(2, "stdout"), TrialOutputFile(2, "stderr"), TrialOutputFile(3, "stdout")} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s of the earlier run is still there", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, TrialOutputFile(1, "stdout"))); err != nil {
		t.Error(err)
	}
}
