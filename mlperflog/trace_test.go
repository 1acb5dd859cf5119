package mlperflog

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"aimeter/loadgen"
)

func traceFixture(t *testing.T, scenario loadgen.Scenario) (*loadgen.Result, []loadgen.Record) {
	r := &loadgen.Result{StartTime: fixtureStart}
	r.Effective.Scenario = scenario
	// Two passes (say accuracy then performance) that started 1 ms and 5 s
	// after the trace origin.
	r.Passes = []loadgen.PassInfo{
		{Kind: loadgen.PassAccuracy, FirstSeq: 0, EndSeq: 2, StartUnixNs: fixtureStart.UnixNano() + 1_000_000},
		{Kind: loadgen.PassPerformance, FirstSeq: 2, EndSeq: 6, StartUnixNs: fixtureStart.UnixNano() + 5_000_000_000},
	}
	recs := []loadgen.Record{
		{SeqID: 0, QueryID: 0, SampleIndex: 1, ScheduledNs: 0, IssuedNs: 500, FirstTokenNs: loadgen.NoTime, CompletedNs: 1_234_567, Status: loadgen.StatusOK},
		{SeqID: 1, QueryID: 1, SampleIndex: 0, ScheduledNs: 2_000_000, IssuedNs: 2_000_250, FirstTokenNs: loadgen.NoTime, CompletedNs: 3_000_001, Status: loadgen.StatusOK},
		{SeqID: 2, QueryID: 2, SampleIndex: 7, ScheduledNs: 0, IssuedNs: 1000, FirstTokenNs: loadgen.NoTime, CompletedNs: 800_000, Status: loadgen.StatusOK},
		{SeqID: 3, QueryID: 3, SampleIndex: 8, ScheduledNs: 900_000, IssuedNs: 901_000, FirstTokenNs: loadgen.NoTime, CompletedNs: loadgen.NoTime, Status: loadgen.StatusLost},
		{SeqID: 4, QueryID: 4, SampleIndex: 9, ScheduledNs: 1_700_000, IssuedNs: 1_700_100, FirstTokenNs: loadgen.NoTime, CompletedNs: 2_700_000, Status: loadgen.StatusError},
	}
	return r, recs
}

func TestTraceGolden(t *testing.T) {
	for _, sc := range []loadgen.Scenario{loadgen.SingleStream, loadgen.Server} {
		r, recs := traceFixture(t, sc)
		var buf bytes.Buffer
		if err := writeTrace(&buf, r, slices.Values(recs), 4242); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, strings.ToLower(sc.String())+".trace.json", buf.Bytes())

		var doc struct {
			TraceEvents []struct {
				Name string         `json:"name"`
				Ph   string         `json:"ph"`
				ID   uint64         `json:"id"`
				Ts   float64        `json:"ts"`
				Args map[string]any `json:"args"`
			} `json:"traceEvents"`
			DisplayTimeUnit string `json:"displayTimeUnit"`
			OtherData       struct {
				Ts      float64 `json:"ts"`
				Version string  `json:"version"`
			} `json:"otherData"`
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatalf("%v: not JSON: %v", sc, err)
		}
		ev := doc.TraceEvents
		if last := ev[len(ev)-1]; last.Name != "LastTrace" {
			t.Errorf("last event %q", last.Name)
		}
		var begins, ends, counters int
		for _, e := range ev {
			switch e.Ph {
			case "b":
				begins++
			case "e":
				ends++
			case "C":
				counters++
			}
			if e.Ph == "b" && e.ID == 3 {
				t.Error("lost sample traced")
			}
		}
		wantCounters := 0
		if sc == loadgen.Server {
			wantCounters = 4
		}
		if begins != 4 || ends != 4 || counters != wantCounters {
			t.Errorf("%v: %d begins, %d ends, %d counters", sc, begins, ends, counters)
		}
		// Sample 2 is scheduled at 0 in a pass that started 5 s after the origin.
		if !bytes.Contains(buf.Bytes(), []byte(`"ph":"b","pid":4242,"id":2,"ts":5000000.000,"args":{"sample_seq":2,"query_seq":2,"sample_idx":7,"issue_start_ns":1000,"complete_ns":800000}},`)) {
			t.Errorf("%v: sample 2 begin event not as expected:\n%s", sc, buf.Bytes())
		}
		if doc.DisplayTimeUnit != "ns" || doc.OtherData.Version != "aimeter" {
			t.Errorf("footer %+v", doc)
		}
	}
}

func TestTraceEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTrace(&buf, &loadgen.Result{}); err != nil {
		t.Fatal(err)
	}
	want := "{\"traceEvents\":[\n{\"name\":\"LastTrace\"}\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\n\"ts\":0.000,\n\"version\":\"aimeter\"\n}\n}\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}
