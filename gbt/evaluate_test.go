package gbt

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"aimeter/internal/golden"
	"aimeter/loadgen"
)

const msNs = int64(time.Millisecond)

// evalRun is a fixed-period test of four jobs with a 1 s timeout: job 0 has
// two samples (returned at 100 and 300 msNs), job 1's sample is lost (issued
// at 500 msNs, deadline 1.5 s), jobs 2 and 3 return at 1.2 s and 2.1 s; the
// run ends at 2.5 s.
func evalRun() RunData {
	lost := loadgen.NoTime
	recs := []loadgen.Record{
		{SeqID: 0, QueryID: 0, ScheduledNs: 0, IssuedNs: 0, CompletedNs: 100 * msNs, FirstTokenNs: loadgen.NoTime, Status: loadgen.StatusOK},
		{SeqID: 1, QueryID: 0, ScheduledNs: 0, IssuedNs: 0, CompletedNs: 300 * msNs, FirstTokenNs: loadgen.NoTime, Status: loadgen.StatusOK},
		{SeqID: 2, QueryID: 1, ScheduledNs: 500 * msNs, IssuedNs: 500 * msNs, CompletedNs: lost, FirstTokenNs: loadgen.NoTime, Status: loadgen.StatusLost},
		{SeqID: 3, QueryID: 2, ScheduledNs: 1000 * msNs, IssuedNs: 1000 * msNs, CompletedNs: 1200 * msNs, FirstTokenNs: loadgen.NoTime, Status: loadgen.StatusOK},
		{SeqID: 4, QueryID: 3, ScheduledNs: 1500 * msNs, IssuedNs: 1500 * msNs, CompletedNs: 2100 * msNs, FirstTokenNs: loadgen.NoTime, Status: loadgen.StatusOK},
	}
	test := &Test{
		Arrival:       Arrival{Mode: ModeFixedPeriod, Period: 500 * time.Millisecond, N: 1, Duration: 2 * time.Second, Timeout: time.Second},
		LossThreshold: 0.25,
		Start:         time.Date(2024, 11, 28, 9, 30, 0, 0, cst),
		EndNs:         2500 * msNs,
	}
	return RunData{Test: test, Main: RunPart{Records: recs}}
}

func TestEvaluateHandWorked(t *testing.T) {
	m, err := Evaluate(evalRun())
	if err != nil {
		t.Fatal(err)
	}
	// Loss: 1 of 5 samples, 0.2 ≤ 0.25 passes (GB-7.7.1-c-2); it is lost at
	// its deadline 1.5 s, in second 1.
	if m.Loss.Lost != 1 || m.Loss.Sent != 5 || m.Loss.Rate != 0.2 || !m.Loss.Valid || m.Loss.Threshold != 0.25 ||
		len(m.Loss.PerSecond) != 3 || m.Loss.PerSecond[1] != 1 {
		t.Errorf("loss %+v", m.Loss)
	}
	// Throughput with no stage times: 4 returned samples over the tester
	// span [0, 2.1 s] (IN-74 fallback).
	if m.Throughput.Samples != 4 || m.Throughput.Lost != 1 || m.Throughput.Basis != BasisTesterSpan ||
		math.Abs(m.Throughput.SamplesPerSecond-4/2.1) > 1e-9 {
		t.Errorf("throughput %+v", m.Throughput)
	}
	// T_TI of the returned samples: 100, 300, 200 and 600 msNs.
	if s := m.Time.TTI.Stat; !m.Time.TTI.Available || s.N != 4 || s.Mean != 300 || s.Min != 100 || s.Max != 600 {
		t.Errorf("T_TI %+v", m.Time.TTI)
	}
	if m.Elasticity != nil || m.PressureTolerance != nil || m.Foreign != nil {
		t.Errorf("a fixed-period run has no peak or foreign metrics: %+v", m)
	}

	// A mixed run reports its foreign jobs apart (IN-50).
	run := evalRun()
	under := ModeFixedPeriod
	run.Test.Arrival.Mode, run.Test.UnderlyingMode = ModeMixed, &under
	run.Foreign = &RunPart{Records: run.Main.Records[3:]}
	if m, err := Evaluate(run); err != nil || m.Foreign == nil || m.Foreign.Loss.Sent != 2 || m.Foreign.Loss.Lost != 0 {
		t.Errorf("foreign metrics %+v, %v", m.Foreign, err)
	}
	// Stage times must be parallel to the records.
	run = evalRun()
	run.Main.Stages = make([]loadgen.StageTimes, 2)
	if _, err := Evaluate(run); err == nil || !strings.Contains(err.Error(), "5 records but 2 stage times") {
		t.Errorf("misaligned stages: %v", err)
	}
	if _, err := Evaluate(RunData{}); err == nil {
		t.Error("no test description accepted")
	}
}

const goldenLogPath = "testdata/golden/gbt_inference.log"

// The inference log of 7.3 f) from the records (GB-7.3-f, IN-43).
func TestWriteInferenceLogGolden(t *testing.T) {
	run := evalRun()
	var buf bytes.Buffer
	if err := WriteInferenceLog(&buf, run.Test, run.Main.Records); err != nil {
		t.Fatal(err)
	}
	// By hand: at 1 s job 0 and its 2 samples have returned; at 2 s jobs 0
	// and 2, 3 samples, and the lost one (deadline 1.5 s; job 1 never
	// returns); the final line at 2.5 s holds everything.
	want := "[2024:11:28 09:30:01]-[--]-[1]-[2]-[0]\n" +
		"[2024:11:28 09:30:02]-[--]-[2]-[3]-[1]\n" +
		"[2024:11:28 09:30:02]-[--]-[3]-[4]-[1]\n"
	if buf.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", buf.String(), want)
	}
	golden.Check(t, goldenLogPath, buf.Bytes())
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if _, err := ParseLogLine(line, cst); err != nil {
			t.Error(err)
		}
	}
}

func TestWriteInferenceLogEdges(t *testing.T) {
	tests := []struct {
		reason string
		mutate func(*RunData)
		want   string
	}{
		{"no records: only the final line", func(r *RunData) { r.Main.Records = nil; r.Test.EndNs = 0 },
			"[2024:11:28 09:30:00]-[--]-[0]-[0]-[0]\n"},
		{"no timeout (offline): a lost sample counts at the end of the run", func(r *RunData) { r.Test.Arrival.Timeout = 0; r.Test.EndNs = 3 * 1000 * msNs },
			"[2024:11:28 09:30:01]-[--]-[1]-[2]-[0]\n[2024:11:28 09:30:02]-[--]-[2]-[3]-[0]\n[2024:11:28 09:30:03]-[--]-[3]-[4]-[1]\n[2024:11:28 09:30:03]-[--]-[3]-[4]-[1]\n"},
		{"unknown end: the last event ends the run", func(r *RunData) { r.Test.EndNs = 0 },
			"[2024:11:28 09:30:01]-[--]-[1]-[2]-[0]\n[2024:11:28 09:30:02]-[--]-[2]-[3]-[1]\n[2024:11:28 09:30:02]-[--]-[3]-[4]-[1]\n"},
		// Hand-worked: indices 0, 1, 3 and 4 return ok at 0.1, 0.3, 1.2 and
		// 2.1 s; Correct marks 0 and 3 right, 1 wrong, and index 4 lies
		// beyond it (wrong). By 1 s: 1 of 2 right; by 2 s: 2 of 3; at the
		// end: 2 of 4. The lost job 1 never counts among the jobs (GB-7.3-f-3):
		// 3 of the 4 jobs returned.
		{"cumulative accuracy from the online score (GB-7.3-f-2)", func(r *RunData) {
			for i := range r.Main.Records {
				r.Main.Records[i].SampleIndex = uint64(i)
			}
			r.Test.Correct = "10-1"
		},
			"[2024:11:28 09:30:01]-[0.5000]-[1]-[2]-[0]\n[2024:11:28 09:30:02]-[0.6667]-[2]-[3]-[1]\n[2024:11:28 09:30:02]-[0.5000]-[3]-[4]-[1]\n"},
		{"a returned error is a returned sample but not a scored one", func(r *RunData) {
			r.Main.Records[1].Status = loadgen.StatusError
			r.Test.Correct = "1"
		},
			"[2024:11:28 09:30:01]-[1.0000]-[1]-[2]-[0]\n[2024:11:28 09:30:02]-[1.0000]-[2]-[3]-[1]\n[2024:11:28 09:30:02]-[1.0000]-[3]-[4]-[1]\n"},
		{"timestamps in the recorded location", func(r *RunData) { r.Test.Start = r.Test.Start.UTC() },
			"[2024:11:28 01:30:01]-[--]-[1]-[2]-[0]\n[2024:11:28 01:30:02]-[--]-[2]-[3]-[1]\n[2024:11:28 01:30:02]-[--]-[3]-[4]-[1]\n"},
	}
	for _, tc := range tests {
		run := evalRun()
		tc.mutate(&run)
		var buf bytes.Buffer
		if err := WriteInferenceLog(&buf, run.Test, run.Main.Records); err != nil || buf.String() != tc.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", tc.reason, err, buf.String(), tc.want)
		}
	}
}

// gbt_test.json round-trips, and gbt_result.json is a function of it and
// the records.
func TestTestRoundTripAndResultFile(t *testing.T) {
	run := evalRun()
	run.Test.Generator = "aimeter (test)"
	run.Test.Notes = []string{"a < b"}
	var buf bytes.Buffer
	if err := WriteTest(&buf, *run.Test); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTest(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := WriteTest(&again, back); err != nil || !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Fatalf("round trip: %v\n%s\n%s", err, buf.String(), again.String())
	}
	result := func(test *Test) []byte {
		r := RunData{Test: test, Main: run.Main}
		m, err := Evaluate(r)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteResultFile(&b, NewResultFile(r, m)); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b := result(run.Test), result(&back)
	if !bytes.Equal(a, b) {
		t.Errorf("gbt_result.json from the read-back description differs:\n%s\n%s", a, b)
	}
	r, err := ReadResultFile(bytes.NewReader(a))
	if err != nil || r.LogUTCOffset != "+08:00" || r.Schedule.Hash != ScheduleHash([]int64{0, 500 * msNs, 1000 * msNs, 1500 * msNs}) {
		t.Errorf("result %+v, %v", r, err)
	}
	for _, tc := range []struct{ reason, in, msg string }{
		{"another version is named", strings.Replace(buf.String(), TestFormat, "aimeter-gbt-test/0", 1), `format "aimeter-gbt-test/0"`},
		{"unknown field", strings.Replace(buf.String(), `"generator"`, `"generatr"`, 1), "unknown field"},
		{"two objects", buf.String() + "{}", "data after"},
	} {
		if _, err := ReadTest(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %q", tc.reason, err, tc.msg)
		}
	}
}
