package gbt

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/gbt/testinfo"
	"aimeter/internal/golden"
)

const goldenResultPath = "testdata/golden/gbt_result.json"

// goldenResult is a complete result of a Poisson-mode run of T11-2.
func goldenResult(t *testing.T) ResultFile {
	t.Helper()
	info := loadExample(t)
	spec, _ := Lookup("T11-2")
	a := spec.Defaults
	a.Mode = ModePoisson
	a.Duration = 600 * time.Second
	a.Timeout, _ = spec.Timeout(ModePoisson)
	a.Seed = 0x2b7e1516

	base := time.Date(2024, 11, 28, 9, 30, 0, 123456789, cst)
	var clock time.Time
	lc := &Lifecycle{Now: func() time.Time { return clock }}
	for _, m := range []struct {
		e LifecycleEvent
		d time.Duration
	}{
		{EventTestStart, 0},
		{EventDatasetLoadStart, 1500 * time.Millisecond},
		{EventDatasetLoadEnd, 42*time.Second + 7},
		{EventTestEnd, 645 * time.Second},
	} {
		clock = base.Add(m.d)
		if _, err := lc.Mark(m.e); err != nil {
			t.Fatal(err)
		}
	}
	var time Breakdown
	time.TTI = TimeStat{Symbol: "T_TI", Side: "tester", GB: true, Available: true, Stat: Stat{N: 2999, Mean: 12.5, P99: 30.25}}
	time.TIN = TimeStat{Symbol: "T_IN", Side: "sut", GB: true, Available: true, Stat: Stat{N: 2999, Mean: 7.125, P99: 9.5}}
	return ResultFile{
		Generator:    "aimeter (test)",
		Info:         info,
		Scenario:     spec.ID,
		Arrival:      a,
		TimeoutClass: spec.TimeoutClass,
		Precision:    testinfo.PrecisionList{testinfo.INT8, testinfo.FP16},
		Accuracy:     []AccuracyResult{spec.AccuracyThresholds[0].Evaluate(0.7612)},
		Metrics: Metrics{
			Time:       time,
			Throughput: Throughput{Samples: 740700, Basis: BasisTDIPUnion, Conformant: true, SamplesPerSecond: 1234.5},
			Loss:       Loss{Lost: 3, Sent: 740703, LossCheck: LossCheck{Rate: 4.05e-06, Threshold: 0.01, Valid: true}, PerSecond: []int{0, 2, 1}},
		},
		Lifecycle:    lc.Events(),
		Schedule:     ScheduleInfo{Seed: a.Seed, Hash: ScheduleHash([]int64{0, 181_000_000, 233_000_000})},
		LogUTCOffset: UTCOffset(base),
		Notes:        []string{"tester and SUT clocks are not synchronised (IN-69)", "scores < thresholds are shown as written"},
	}
}

// gbt_result.json carries 7.3 a)–d), the lifecycle of 7.7.1 j) 1), the
// schedule seed and hash (IN-53) and notes, in a fixed order.
func TestResultGolden(t *testing.T) {
	r := goldenResult(t)
	if err := r.Validate(); err != nil {
		t.Fatalf("golden result is invalid: %v", err)
	}
	var buf bytes.Buffer
	if err := WriteResultFile(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, goldenResultPath, buf.Bytes())
	want, err := os.ReadFile(goldenResultPath)
	if err != nil {
		t.Fatal(err)
	}
	// No HTML escaping: comparators stay readable.
	if !bytes.Contains(want, []byte(`"scores < thresholds`)) || !bytes.Contains(want, []byte(`"Top1 accuracy > 74 %"`)) {
		t.Error("comparators were escaped")
	}
	// The pieces the standard asks for are there under their keys.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(want, &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"format", "test_info", "arrival", "precision", "accuracy", "metrics", "lifecycle", "schedule", "log_utc_offset", "notes"} {
		if _, ok := top[k]; !ok {
			t.Errorf("no %q", k)
		}
	}
	if got := string(top["lifecycle"]); !strings.Contains(got, `"test_start": "2024-11-28T09:30:00.123456789+08:00"`) ||
		!strings.Contains(got, `"dataset_load_end": "2024-11-28T09:30:42.123456796+08:00"`) ||
		strings.Contains(got, "result_upload_complete") {
		t.Errorf("lifecycle = %s", got)
	}
}

// Reading the golden file and writing it back reproduces it byte for byte;
// typed metrics decode from it.
func TestResultRoundTrip(t *testing.T) {
	want, err := os.ReadFile(goldenResultPath)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadResultFile(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteResultFile(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("round trip differs:\n%s", buf.String())
	}
	orig := goldenResult(t)
	if !reflect.DeepEqual(r.Info, orig.Info) || !reflect.DeepEqual(r.Arrival, orig.Arrival) ||
		!reflect.DeepEqual(r.Accuracy, orig.Accuracy) || !r.Lifecycle.TestEnd.Equal(orig.Lifecycle.TestEnd) {
		t.Errorf("read back %+v\nwant %+v", r, orig)
	}
	if r.Metrics.Throughput.SamplesPerSecond != 1234.5 || r.Metrics.Loss.Lost != 3 || !r.Metrics.Loss.Valid ||
		r.Metrics.Time.TIN.Stat.Mean != 7.125 || r.Metrics.Elasticity != nil {
		t.Errorf("typed metrics read back as %+v", r.Metrics)
	}
}

func TestReadResultRejects(t *testing.T) {
	good, err := os.ReadFile(goldenResultPath)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, in, msg string }{
		{"unknown field", strings.Replace(string(good), `"scenario":`, `"scenaro": "x", "scenario":`, 1), "unknown field"},
		{"other format", strings.Replace(string(good), ResultFormat, "aimeter-gbt-result/9", 1), "format"},
		{"unknown lifecycle event", strings.Replace(string(good), `"test_end"`, `"test_stop"`, 1), "unknown lifecycle event"},
		{"two objects", string(good) + "{}", "data after"},
		{"not JSON", "nope", "invalid character"},
	}
	for _, tc := range tests {
		if _, err := ReadResultFile(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.msg)
		}
	}
}

func TestResultValidate(t *testing.T) {
	mixedOK := ModeFixedPeriod
	mixedBad := ModeMixed
	tests := []struct {
		name   string
		mutate func(*ResultFile)
		msg    string
	}{
		{"golden is valid", func(*ResultFile) {}, ""},
		{"GB-7.4.2 mode 6", func(r *ResultFile) { r.Arrival.Mode = 6 }, "not a mode of Table 10"},
		{"GB-7.4.2-T10-mode5 needs the underlying mode", func(r *ResultFile) { r.Arrival.Mode = ModeMixed }, "underlying_mode is missing"},
		{"GB-7.4.2-T10-mode5 with underlying mode", func(r *ResultFile) { r.Arrival.Mode = ModeMixed; r.UnderlyingMode = &mixedOK }, ""},
		{"underlying mixed", func(r *ResultFile) { r.Arrival.Mode = ModeMixed; r.UnderlyingMode = &mixedBad }, "not one of the modes 0–4"},
		{"underlying without mixed", func(r *ResultFile) { r.UnderlyingMode = &mixedOK }, "not mixed"},
		{"GB-7.3-c precision", func(r *ResultFile) { r.Precision = nil }, "precision is missing"},
		{"GB-6.7.1-d precision", func(r *ResultFile) { r.Precision = testinfo.PrecisionList{"fp16"} }, "invalid precision"},
		{"GB-7.7.1-j-1 test end", func(r *ResultFile) { r.Lifecycle.TestEnd = time.Time{} }, "test_start and test_end"},
		{"GB-7.7.1-j-1 order", func(r *ResultFile) {
			r.Lifecycle.DatasetLoadEnd = r.Lifecycle.DatasetLoadStart.Add(-time.Nanosecond)
		}, "dataset_load_end"},
		{"IN-53 Poisson needs the schedule hash", func(r *ResultFile) { r.Schedule.Hash = "" }, "schedule.hash"},
		{"IN-53 continuous mode has no schedule", func(r *ResultFile) { r.Arrival.Mode = ModeContinuous; r.Schedule = ScheduleInfo{} }, ""},
		{"NaN accuracy", func(r *ResultFile) { r.Accuracy[0].Value = f64(math.NaN()) }, "use null"},
	}
	for _, tc := range tests {
		r := goldenResult(t)
		tc.mutate(&r)
		err := r.Validate()
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.msg)
		}
	}
}

func TestWriteResultErrors(t *testing.T) {
	r := goldenResult(t)
	r.Metrics.Throughput.SamplesPerSecond = math.Inf(1)
	if err := WriteResultFile(&bytes.Buffer{}, r); err == nil || !strings.Contains(err.Error(), "unsupported value") {
		t.Errorf("Inf metric: %v", err)
	}
	r = goldenResult(t)
	if err := WriteResultFile(&failWriter{}, r); err == nil {
		t.Error("write error lost")
	}
	var buf bytes.Buffer
	if err := WriteResultFile(&buf, ResultFile{}); err != nil || !strings.Contains(buf.String(), `"format": "`+ResultFormat+`"`) {
		t.Errorf("empty result: %v\n%s", err, buf.String())
	}
}

// IN-53: refuse to compare results whose schedules differ.
func TestSameSchedule(t *testing.T) {
	a, b := goldenResult(t), goldenResult(t)
	if err := SameSchedule(a, b); err != nil {
		t.Fatal(err)
	}
	b.Schedule.Hash = ScheduleHash([]int64{1})
	if err := SameSchedule(a, b); err == nil || !strings.Contains(err.Error(), "different arrival schedules") {
		t.Errorf("different hash: %v", err)
	}
	b = goldenResult(t)
	b.Schedule.Hash = ""
	if err := SameSchedule(a, b); err == nil {
		t.Error("missing hash accepted")
	}
	b = goldenResult(t)
	b.Scenario = "T11-1"
	if err := SameSchedule(a, b); err == nil {
		t.Error("different scenario accepted")
	}
	b = goldenResult(t)
	b.Arrival.Mode = ModePeak
	if err := SameSchedule(a, b); err == nil {
		t.Error("different mode accepted")
	}
	a.Arrival.Mode, b.Arrival.Mode = ModeOffline, ModeOffline
	a.Schedule, b.Schedule = ScheduleInfo{}, ScheduleInfo{}
	if err := SameSchedule(a, b); err != nil {
		t.Errorf("offline: %v", err)
	}
}

// GB-7.7.1-j-1: the Lifecycle helper records the events with its clock.
func TestLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var seen []string
		lc := &Lifecycle{Notify: func(e LifecycleEvent, at time.Time) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, e.String()+"@"+at.UTC().Format(RFC3339Nanos))
		}}
		start := time.Now()
		for i, e := range []LifecycleEvent{EventTestStart, EventDatasetLoadStart, EventDatasetLoadEnd, EventTestEnd, EventResultUploadComplete} {
			if i > 0 {
				time.Sleep(time.Duration(i) * 250 * time.Millisecond)
			}
			at, err := lc.Mark(e)
			if err != nil {
				t.Fatal(err)
			}
			if !at.Equal(time.Now()) || at != at.Round(0) {
				t.Errorf("%s at %v", e, at)
			}
		}
		if _, err := lc.Mark(EventTestEnd); err == nil || !strings.Contains(err.Error(), "already marked") {
			t.Errorf("second test_end: %v", err)
		}
		if _, err := lc.Mark(LifecycleEvent(9)); err == nil {
			t.Error("unknown event accepted")
		}
		ev := lc.Events()
		if err := ev.Validate(); err != nil {
			t.Fatal(err)
		}
		if d := ev.TestEnd.Sub(ev.TestStart); d != 1500*time.Millisecond {
			t.Errorf("test took %v", d)
		}
		if ev.Time(EventResultUploadComplete).Sub(start) != 2500*time.Millisecond || !ev.Time(LifecycleEvent(7)).IsZero() {
			t.Error("Time")
		}
		want := []string{
			"test_start@2000-01-01T00:00:00.000000000Z",
			"dataset_load_start@2000-01-01T00:00:00.250000000Z",
			"dataset_load_end@2000-01-01T00:00:00.750000000Z",
			"test_end@2000-01-01T00:00:01.500000000Z",
			"result_upload_complete@2000-01-01T00:00:02.500000000Z",
		}
		if !reflect.DeepEqual(seen, want) {
			t.Errorf("notified %q\nwant %q", seen, want)
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var back LifecycleEvents
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.TestEnd.UTC(), ev.TestEnd.UTC()) {
			t.Errorf("round trip %s: %v %+v", b, err, back)
		}
	})
	if s := LifecycleEvent(-1).String(); s != "LifecycleEvent(-1)" {
		t.Errorf("String = %q", s)
	}
	var empty LifecycleEvents
	if b, _ := json.Marshal(empty); string(b) != "{}" {
		t.Errorf("empty lifecycle = %s", b)
	}
	if err := json.Unmarshal([]byte(`{"test_start":"yesterday"}`), &empty); err == nil {
		t.Error("bad time accepted")
	}
}
