package report

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"aimeter/gbt/testinfo"
	"aimeter/internal/golden"
	"aimeter/train"
	"aimeter/train/mllog"
)

const trainingGoldenPath = "testdata/training.golden.html"

// trainingFixture is the two-rank MLPerf fixture of train/mllog computed
// under a quality target and a training-set size.
func trainingFixture(t *testing.T) *Training {
	t.Helper()
	f, err := os.Open("../train/mllog/testdata/resnet_2rank.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, _, err := mllog.ParseAll(f, mllog.Options{Node: "node0"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := train.Config{TrainingSetMB: 150, Target: &train.Target{Metric: "Top1 accuracy", Value: 0.7}}
	m, err := train.Compute(events, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := train.LookupScenario("T1-1")
	res := &train.ResultFile{Version: train.ResultVersion, Info: testinfo.Info{OrgName: "Example Lab"}, Scenario: &sc, Config: cfg, Metrics: m,
		Log: []string{"[2023:11:14 22:13:22]-[1]-[1]-[0.4100]"}}
	return &Training{Name: "resnet (2 ranks)", Source: "MLLOG child: sh train.sh, exited with status 0", System: fixedSystem, Result: res, Events: events,
		Notes: []string{"48 lines, 46 MLLOG records, 0 malformed"}}
}

func TestTrainingGolden(t *testing.T) {
	golden.Check(t, trainingGoldenPath, elideAssets(trainingPage(t)))
}

// trainingPage is the page of trainingFixture.
func trainingPage(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteTraining(&buf, trainingFixture(t)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestTrainingPageContent(t *testing.T) {
	tests := []struct {
		name, want string
	}{
		{"the Table 6 times are shown", "<h3>Times (Table 6)</h3>"},
		{"the per-epoch throughput chart is inline SVG", `<svg class="train-chart"`},
		{"the phase timeline is inline SVG", `<svg class="train-timeline"`},
		{"the timeline has the data-read lane", ">data read</text>"},
		{"a power figure from power_reading is shown", " W</td>"},
		{"the log line is shown", "[2023:11:14 22:13:22]-[1]-[1]-[0.4100]"},
		{"the page needs no script", "Charts are inline SVG"},
	}
	var buf bytes.Buffer
	if err := WriteTraining(&buf, trainingFixture(t)); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, tc := range tests {
		if !strings.Contains(page, tc.want) {
			t.Errorf("%s: page lacks %q", tc.name, tc.want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Error("the training page has a script; it should be self-contained without one")
	}
}

func TestTrainingAbsentFiguresAreDashes(t *testing.T) {
	// A run with one epoch and nothing else: every time but T_EP is "--".
	ev := []train.Event{{Kind: train.EpochStart, Epoch: 1, Time: 0}, {Kind: train.EpochEnd, Epoch: 1, Time: 2e9}}
	m, err := train.Compute(ev, train.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteTraining(&buf, &Training{Result: &train.ResultFile{Metrics: m}, Events: ev}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "<td>--</td><td>--</td><td>--</td><td>--</td><td>2.000 s</td>") {
		t.Errorf("absent times are not written --: %s", buf.String())
	}
}

func TestWriteTrainingErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *Training
	}{
		{"nil training", nil},
		{"no result", &Training{}},
		{"no metrics", &Training{Result: &train.ResultFile{}}},
	} {
		if err := WriteTraining(&bytes.Buffer{}, tc.in); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestTrialList(t *testing.T) {
	for _, c := range []struct {
		ts   []int
		n    int
		want string
	}{
		{[]int{1}, 1, "Trial 1"},           // a single trial is named
		{[]int{3}, 5, "Trial 3"},           // one of several
		{[]int{1, 2, 3}, 3, "Every trial"}, // all of them
		{[]int{1, 4}, 5, "Trials 1, 4"},    // some
	} {
		if got := trialList(c.ts, c.n); got != c.want {
			t.Errorf("trialList(%v, %d) = %q, want %q", c.ts, c.n, got, c.want)
		}
	}
}
