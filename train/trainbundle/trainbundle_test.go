package trainbundle

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/gbt"
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
	if err := bundle.Write(dir, bundleOf(tr, "test"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, TrialOutputFile(1, "stderr"))); err == nil {
		t.Error("an empty stream was written")
	}
	b, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Get(b)
	if err != nil {
		t.Fatal(err)
	}
	got := back.TrialOutputs
	if len(got) != 3 || !bytes.Equal(got[1].Stderr, []byte("crash\n")) || !bytes.Equal(got[2].Stdout, []byte("log")) || got[0].Stderr != nil {
		t.Fatalf("trial outputs read back: %+v", got)
	}
	if f := back.Run.Trials[1]; f.Failure != "exited with status 1" || f.Exit == nil || f.Exit.Code != 1 {
		t.Errorf("trial 2 read back: %+v", f)
	}
	// A later run with one trial into the same directory leaves no file of
	// the earlier trials behind.
	tr.Run.Trials, tr.TrialOutputs = tr.Run.Trials[:1], tr.TrialOutputs[:1]
	if err := bundle.Write(dir, bundleOf(tr, "test"), nil); err != nil {
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

func bundleOf(t *Training, version string) *bundle.Bundle {
	b := &bundle.Bundle{Version: version}
	Set(b, t)
	return b
}

// The file names package bundle knows are those of the packages that own
// the files.
func TestFileNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{bundle.TrainingResultFile, train.ResultFileName},
		{bundle.TrainingLogFile, train.LogFile},
		{bundle.GBTTestFile, gbt.TestFileName},
		{bundle.GBTResultFile, gbt.ResultFileName},
		{bundle.GBTLogFile, gbt.InferenceLogFileName},
	} {
		if c.got != c.want {
			t.Errorf("bundle names %q, its owner %q", c.got, c.want)
		}
	}
}

// A malformed training_run.json reads back as a bundle whose training
// part gives an error naming the file.
func TestMalformedRun(t *testing.T) {
	dir := t.TempDir()
	tr := &Training{Run: TrainingRun{Source: SourceGoAPI}, Events: []train.Event{{Kind: train.TrainStart, Trial: 1}}}
	if err := bundle.Write(dir, bundleOf(tr, "test"), nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, TrainingRunFile), []byte(`{"version": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.ReadWith(dir, bundle.ReadOptions{SkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Get(b); err == nil || !strings.Contains(err.Error(), TrainingRunFile) {
		t.Errorf("Get of a malformed %s: %v", TrainingRunFile, err)
	}
	if Of(b) != nil {
		t.Error("Of of a malformed part is not nil")
	}
	if _, err := bundle.ReadWith(dir, bundle.ReadOptions{SkipVerify: true, Parts: []bundle.Part{Part}}); err == nil || !strings.Contains(err.Error(), TrainingRunFile) {
		t.Errorf("ReadWith checking the part: %v", err)
	}
}
