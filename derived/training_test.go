package derived

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"aimeter/bundle"
	"aimeter/gbt/testinfo"
	"aimeter/internal/golden"

	"aimeter/train"
	"aimeter/train/mllog"
	"aimeter/train/trainbundle"
)

// trainingBundle is the two-rank MLPerf fixture of train/mllog as a
// training bundle of a child process, in a fixed time zone.
func trainingBundle(t *testing.T) *bundle.Bundle {
	t.Helper()
	data, err := os.ReadFile("../train/mllog/testdata/resnet_2rank.log")
	if err != nil {
		t.Fatal(err)
	}
	events, stats, err := mllog.ParseAll(bytes.NewReader(data), mllog.Options{Node: "node0"})
	if err != nil {
		t.Fatal(err)
	}
	run := trainbundle.TrainingRun{
		Version: "test", Name: "resnet 2 ranks", Source: trainbundle.SourceMLLOG, Origin: time.UnixMilli(1700000000000),
		Info: testinfo.Info{OrgName: "Example Lab"}, Config: train.Config{TrainingSetMB: 150, Target: &train.Target{Value: 0.6}},
		Command: &trainbundle.TrainingCommand{Argv: []string{"sh", "train.sh"}, Exit: mllog.Exit{Reason: "exited with status 0"}, Stats: stats,
			StdoutBytes: int64(len(data)), CaptureLimit: 1 << 20},
	}
	run.SetLocation(time.FixedZone("CST", 8*3600))
	b := &bundle.Bundle{}
	trainbundle.Set(b, &trainbundle.Training{Run: run, Events: events, Stdout: data, Stderr: []byte{}})
	return b
}

func TestTrainingRegenerateByteIdentical(t *testing.T) {
	orig := t.TempDir()
	if err := Write(orig, trainingBundle(t)); err != nil {
		t.Fatal(err)
	}
	back, err := bundle.Read(orig)
	if err != nil {
		t.Fatal(err)
	}
	if trainbundle.Of(back) == nil || back.Result != nil {
		t.Fatal("bundle.Read did not recognise the training bundle")
	}
	regen := t.TempDir()
	names, err := Regenerate(regen, back)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{bundle.ReportFile, bundle.TrainingResultFile, bundle.TrainingLogFile}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("regenerated %v, want %v", names, want)
	}
	for _, name := range want {
		a, err := os.ReadFile(filepath.Join(orig, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(regen, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs when regenerated: %s", name, golden.Diff(b, a))
		}
	}
	res, err := Of(back).TrainingResult()
	if err != nil {
		t.Fatal(err)
	}
	if res.UTCOffset != "+08:00" || len(res.Log) == 0 || !strings.HasPrefix(res.Log[0], "[2023:11:15 ") {
		t.Errorf("the log is not in the recorded time zone: offset %q, log %q", res.UTCOffset, res.Log)
	}
	for _, name := range []string{bundle.TrainingRunFile, bundle.TrainingEventsFile, bundle.TrainingStdoutFile, bundle.TrainingStderrFile, bundle.TrainingResultFile, bundle.TrainingLogFile, bundle.ReportFile} {
		if _, ok := back.Manifest.Entry(name); !ok {
			t.Errorf("manifest lacks %s", name)
		}
	}
}

func TestTrainingWriteRemovesInferenceFiles(t *testing.T) {
	dir := t.TempDir()
	// A stale file of an inference run that a training bundle does not hold.
	if err := os.WriteFile(filepath.Join(dir, bundle.RecordsFile), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, trainingBundle(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, bundle.RecordsFile)); err == nil {
		t.Error("records.csv of an earlier run was left beside the training bundle")
	}
}

func TestReadTrainingEventsErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a line that is not JSON names its line", `{"kind":"epoch_start","t_ns":1,"wall":"2024-01-01T00:00:00Z","rank":0}` + "\nnot json\n", "line 2"},
		{"an unknown field is refused", `{"kind":"epoch_start","bogus":1,"wall":"2024-01-01T00:00:00Z","rank":0}` + "\n", "bogus"},
		{"an event without a kind is refused", `{"t_ns":1,"wall":"2024-01-01T00:00:00Z","rank":0}` + "\n", "no kind"},
	} {
		_, err := trainbundle.ReadTrainingEvents(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestTrainingEventsRoundTrip(t *testing.T) {
	b := trainingBundle(t)
	var buf bytes.Buffer
	if err := trainbundle.WriteTrainingEvents(&buf, trainbundle.Of(b).Events); err != nil {
		t.Fatal(err)
	}
	back, err := trainbundle.ReadTrainingEvents(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(trainbundle.Of(b).Events) {
		t.Fatalf("%d events back, want %d", len(back), len(trainbundle.Of(b).Events))
	}
	for i := range back {
		a, w := back[i], trainbundle.Of(b).Events[i]
		if a.Kind != w.Kind || a.Time != w.Time || !a.Wall.Equal(w.Wall) || a.Node != w.Node || a.Rank != w.Rank || (a.Value == nil) != (w.Value == nil) {
			t.Fatalf("event %d: %+v back, want %+v", i, a, w)
		}
	}
}

func FuzzReadTrainingEvents(f *testing.F) {
	f.Add([]byte(`{"kind":"epoch_end","t_ns":5,"wall":"2024-01-01T00:00:00Z","rank":1,"count":3,"value":0.5}` + "\n"))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := trainbundle.ReadTrainingEvents(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := trainbundle.WriteTrainingEvents(&buf, ev); err != nil {
			t.Fatal(err)
		}
		if _, err := trainbundle.ReadTrainingEvents(&buf); err != nil {
			t.Fatalf("events read back do not read again: %v", err)
		}
	})
}
