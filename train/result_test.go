package train

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"aimeter/gbt/testinfo"
)

func testResult(t *testing.T) *ResultFile {
	t.Helper()
	s, ok := LookupScenario("T1-1")
	if !ok {
		t.Fatal("no T1-1")
	}
	cfg := Config{TrainingSetMB: 70, Target: s.Target(), Epochs: 2}
	m, err := Compute(singleNode(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	data := ParallelData
	return &ResultFile{
		Info: testinfo.Info{OrgName: "Example Lab", TestID: "T-0001", TestMode: testinfo.TestClosed, ScenarioClass: testinfo.ScenarioGeneral,
			ModelNo: "T1-1", SubmitTime: testinfo.NewTimestamp(time.Date(2024, 11, 28, 9, 30, 0, 0, time.UTC))},
		Training:  TrainingInfo{Optimizer: "SGD+Momentum", MixedPrecision: testinfo.Used, Precisions: testinfo.PrecisionList{testinfo.FP16, testinfo.FP32}, AutoML: testinfo.NotUsed, Parallelism: &data, AsyncUpdate: testinfo.NotUsed},
		Scenario:  &s,
		Config:    cfg,
		UTCOffset: "+00:00",
		Metrics:   m,
		Log:       LogLines(singleNode(), LogOptions{Location: time.UTC, Origin: origin}),
	}
}

func TestResultGoldenAndRoundTrip(t *testing.T) {
	res := testResult(t)
	var buf bytes.Buffer
	if err := WriteResult(&buf, res); err != nil {
		t.Fatal(err)
	}
	if res.Version != "" || res.Info.TaskType != 0 {
		t.Error("WriteResult modified its argument")
	}
	checkGolden(t, ResultFileName, buf.Bytes())
	back, err := ReadResult(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if back.Version != ResultVersion || back.Info.TaskType != testinfo.TaskTraining || back.ThroughputMethod != ThroughputMethod {
		t.Errorf("filled-in fields: %q %v %q", back.Version, back.Info.TaskType, back.ThroughputMethod)
	}
	var again bytes.Buffer
	if err := WriteResult(&again, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Errorf("round trip changed the file:\n%s\n---\n%s", buf.Bytes(), again.Bytes())
	}
	// Absent metrics stay absent: no T_CV key would read as zero.
	if strings.Contains(buf.String(), `"t_nc_ms"`) || !strings.Contains(buf.String(), `"t_t_ms": 3000`) {
		t.Errorf("absent or present metrics misencoded")
	}
}

func TestUTCOffset(t *testing.T) {
	cases := []struct {
		reason string
		loc    *time.Location
		want   string
	}{
		{"UTC", time.UTC, "+00:00"},
		{"China Standard Time", time.FixedZone("CST", 8*3600), "+08:00"},
		{"half-hour offset west", time.FixedZone("X", -(3*3600 + 1800)), "-03:30"},
	}
	for _, c := range cases {
		if got := UTCOffset(origin.In(c.loc)); got != c.want {
			t.Errorf("%s: %q, want %q", c.reason, got, c.want)
		}
	}
}

func TestReadResultErrors(t *testing.T) {
	cases := []struct{ reason, in, want string }{
		{"not JSON", "{", "reading gbt_training.json"},
		{"another file's layout", `{"version":"other/1"}`, `version "other/1"`},
		{"no version", `{}`, `version ""`},
		{"a field of the wrong type", `{"version":"aimeter-gbt-training/1","metrics":{"trials":3}}`, "cannot unmarshal"},
	}
	for _, c := range cases {
		_, err := ReadResult(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.reason, err, c.want)
		}
	}
	if err := WriteResult(&bytes.Buffer{}, nil); err == nil {
		t.Error("nil result written")
	}
	if err := WriteResult(failWriter{}, testResult(t)); err == nil || !errors.Is(err, err) || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("write error %v", err)
	}
}

func TestTrainingInfoValidate(t *testing.T) {
	p := func(v Parallelism) *Parallelism { return &v }
	cases := []struct {
		reason string
		ti     TrainingInfo
		want   string // "" valid
	}{
		{"nothing given is valid", TrainingInfo{}, ""},
		{"complete", TrainingInfo{Optimizer: "Adam", MixedPrecision: testinfo.Used, Precisions: testinfo.PrecisionList{testinfo.BF16}, AutoML: testinfo.Used, AutoMLAlgorithm: "ENAS", Parallelism: p(ParallelOther), ParallelAlgorithm: "ZeRO-3", AsyncUpdate: testinfo.NotUsed}, ""},
		{"mixed precision without the list", TrainingInfo{MixedPrecision: testinfo.Used}, "precisions: missing"},
		{"AutoML without the algorithm", TrainingInfo{AutoML: testinfo.Used}, "automl_algorithm"},
		{"parallelism out of range", TrainingInfo{Parallelism: p(5)}, "parallelism: 5"},
		{"other parallelism without a name", TrainingInfo{Parallelism: p(ParallelOther)}, "parallel_algorithm"},
		{"unknown precision", TrainingInfo{Precisions: testinfo.PrecisionList{"FP8"}}, "precisions"},
		{"flag code out of range", TrainingInfo{AsyncUpdate: 9}, "must be 0 or 1"},
	}
	for _, c := range cases {
		err := c.ti.Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.reason, err, c.want)
		}
	}
}
