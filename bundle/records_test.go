package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"aimeter/loadgen"
)

func sampleRecords() []loadgen.Record {
	return []loadgen.Record{
		{SeqID: 0, QueryID: 0, SampleIndex: 3, ScheduledNs: 0, IssuedNs: 1200, FirstTokenNs: loadgen.NoTime, CompletedNs: 2_001_200, Tokens: 0, Status: loadgen.StatusOK},
		{SeqID: 1, QueryID: 1, SampleIndex: 0, ScheduledNs: 10_000_000, IssuedNs: 10_000_900, FirstTokenNs: 10_400_000, CompletedNs: 12_500_000, Tokens: 17, Status: loadgen.StatusOK},
		{SeqID: 2, QueryID: 2, SampleIndex: 2, ScheduledNs: 15_000_000, IssuedNs: 15_000_500, FirstTokenNs: loadgen.NoTime, CompletedNs: 15_900_000, Tokens: 0, Status: loadgen.StatusError},
		{SeqID: 3, QueryID: 3, SampleIndex: math.MaxUint32, ScheduledNs: 20_000_000, IssuedNs: 20_000_700, FirstTokenNs: loadgen.NoTime, CompletedNs: loadgen.NoTime, Tokens: 0, Status: loadgen.StatusLost},
	}
}

func TestRecordsGoldenAndRoundTrip(t *testing.T) {
	recs := sampleRecords()
	var buf bytes.Buffer
	if err := WriteRecords(&buf, recs); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "records.csv", buf.Bytes())
	if !strings.HasPrefix(buf.String(), "seq_id,query_id,sample_index,scheduled_ns,issued_ns,first_token_ns,completed_ns,tokens,status\n") {
		t.Errorf("header: %q", strings.SplitN(buf.String(), "\n", 2)[0])
	}
	if !strings.Contains(buf.String(), "\n3,3,4294967295,20000000,20000700,,,0,lost\n") {
		t.Errorf("lost record: NoTime must be an empty field:\n%s", buf.String())
	}
	got, err := ReadRecords(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, recs) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, recs)
	}
}

func TestReadRecordsHeaderOnlyAndNoFinalNewline(t *testing.T) {
	recs, err := ReadRecords(strings.NewReader(RecordsHeader + "\n"))
	if err != nil || len(recs) != 0 {
		t.Errorf("header only: %v, %v", recs, err)
	}
	recs, err = ReadRecords(strings.NewReader(RecordsHeader + "\n1,2,3,4,5,,7,8,ok"))
	want := []loadgen.Record{{SeqID: 1, QueryID: 2, SampleIndex: 3, ScheduledNs: 4, IssuedNs: 5, FirstTokenNs: loadgen.NoTime, CompletedNs: 7, Tokens: 8, Status: loadgen.StatusOK}}
	if err != nil || !reflect.DeepEqual(recs, want) {
		t.Errorf("missing final newline: %+v, %v", recs, err)
	}
}

func TestReadRecordsErrors(t *testing.T) {
	h := RecordsHeader + "\n"
	ok := "1,2,3,4,5,,7,8,ok\n"
	for _, tc := range []struct {
		in          string
		line        int
		field, want string
	}{
		{"", 1, "", "missing header"},
		{"seq_id,query_id\n", 1, "", "header is"},
		{strings.ToUpper(RecordsHeader) + "\n", 1, "", "header is"},
		{RecordsHeader + "\r\n" + ok, 1, "", "header is"},
		{h + ok + "1,2,3\n", 3, "", "3 fields, want 9"},
		{h + ok + "1,2,3,4,5,6,7,8,ok,extra\n", 3, "", "10 fields, want 9"},
		{h + "\n", 2, "", "blank line"},
		{h + "x,2,3,4,5,,7,8,ok\n", 2, "seq_id", "not an unsigned"},
		{h + "-1,2,3,4,5,,7,8,ok\n", 2, "seq_id", "not an unsigned"},
		{h + "1,,3,4,5,,7,8,ok\n", 2, "query_id", "not an unsigned"},
		{h + "1,2,18446744073709551616,4,5,,7,8,ok\n", 2, "sample_index", "not an unsigned"},
		{h + "1,2,3,4.5,5,,7,8,ok\n", 2, "scheduled_ns", "not a decimal"},
		{h + "1,2,3,4, 5,,7,8,ok\n", 2, "issued_ns", "not a decimal"},
		{h + "1,2,3,4,5,9223372036854775808,7,8,ok\n", 2, "first_token_ns", "not a decimal"},
		{h + "1,2,3,4,5,,7,,ok\n", 2, "tokens", "not a decimal"},
		{h + ok + ok + "1,2,3,4,5,,7,8,OK\n", 4, "status", "unknown status"},
		{h + "1,2,3,4,5,,7,8,ok\r\n", 2, "status", "unknown status"},
		{h + "1,2,3,4,5,,7,8,\n", 2, "status", "unknown status"},
		{h + strings.Repeat("9", 5000) + "\n", 2, "", "longer than"},
	} {
		_, err := ReadRecords(strings.NewReader(tc.in))
		var re *RecordsError
		if !errors.As(err, &re) {
			t.Errorf("%q: error %v, want a *RecordsError", tc.in, err)
			continue
		}
		if re.Line != tc.line || re.Field != tc.field || !strings.Contains(re.Msg, tc.want) {
			t.Errorf("%q: got line %d field %q msg %q; want line %d field %q msg containing %q",
				tc.in, re.Line, re.Field, re.Msg, tc.line, tc.field, tc.want)
		}
		if !strings.Contains(err.Error(), "records.csv line ") {
			t.Errorf("%q: error text %q does not name the file and line", tc.in, err)
		}
	}
}

func TestReadRecordsExtremes(t *testing.T) {
	in := RecordsHeader + "\n18446744073709551615,0,0,-9223372036854775808,9223372036854775807,-1,0,-5,error\n"
	recs, err := ReadRecords(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := loadgen.Record{SeqID: math.MaxUint64, ScheduledNs: math.MinInt64, IssuedNs: math.MaxInt64,
		FirstTokenNs: loadgen.NoTime, Tokens: -5, Status: loadgen.StatusError}
	if len(recs) != 1 || recs[0] != want {
		t.Errorf("got %+v, want %+v", recs, want)
	}
}

// FuzzReadRecords: ReadRecords never panics, and whatever it accepts is
// written back and read again unchanged.
func FuzzReadRecords(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteRecords(&buf, sampleRecords()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(RecordsHeader + "\n"))
	f.Add([]byte(RecordsHeader + "\n1,2,3,4,5,,7,8,ok"))
	f.Add([]byte(RecordsHeader + "\n1,2,3,-4,+5,,007,8,lost\n"))
	f.Add([]byte("seq_id\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadRecords(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteRecords(&out, recs); err != nil {
			t.Fatal(err)
		}
		again, err := ReadRecords(&out)
		if err != nil {
			t.Fatalf("rereading written records: %v\n%s", err, out.Bytes())
		}
		if len(recs) == 0 && len(again) == 0 {
			return
		}
		if !reflect.DeepEqual(recs, again) {
			t.Fatalf("round trip changed the records:\n%+v\n%+v", recs, again)
		}
	})
}

func TestWriteRecordSeqStopsOnWriteError(t *testing.T) {
	recs := slices.Repeat(sampleRecords(), 100_000)
	if err := WriteRecords(&failWriter{n: 1 << 20}, recs); err == nil {
		t.Error("no error from a failing writer")
	}
}

// benchRecords is a million Offline-like records: one query, times of
// typical length, every sample completed.
func benchRecords() []loadgen.Record {
	recs := make([]loadgen.Record, 1_000_000)
	for i := range recs {
		recs[i] = loadgen.Record{SeqID: uint64(i), QueryID: uint64(i), SampleIndex: uint64(i % 24576),
			ScheduledNs: int64(i) * 1_000_000, IssuedNs: int64(i)*1_000_000 + 1234, FirstTokenNs: loadgen.NoTime,
			CompletedNs: int64(i)*1_000_000 + 98_765_432, Tokens: 0, Status: loadgen.StatusOK}
	}
	return recs
}

// BenchmarkWriteRecords reports ns per row and MB/s of records.csv text
// for a million rows; allocations are per call, none per row.
func BenchmarkWriteRecords(b *testing.B) {
	recs := benchRecords()
	var size countWriter
	if err := WriteRecords(&size, recs); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := WriteRecords(io.Discard, recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/row")
}

// countWriter counts the bytes written to it.
type countWriter int

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// BenchmarkReadRecords reads back the million rows of
// BenchmarkWriteRecords.
func BenchmarkReadRecords(b *testing.B) {
	recs := benchRecords()
	var buf bytes.Buffer
	if err := WriteRecords(&buf, recs); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := ReadRecords(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/row")
}

// ---- settings.json

func TestRunInfoGoldenAndRoundTrip(t *testing.T) {
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Server
	s.ServerTargetQPS = 2
	s.UseTokenLatencies = true
	e, err := loadgen.NewEffective(s, 1024, 1024)
	if err != nil {
		t.Fatal(err)
	}
	r := &loadgen.Result{SUTName: "TokenSUT", QSLName: "TokenQSL", QSLTotalCount: 1024, QSLPerformanceCount: 1024,
		Requested: s, Effective: e, StartTime: fixtureStart}
	r.Passes = []loadgen.PassInfo{{Kind: loadgen.PassPerformance, FirstSeq: 0, EndSeq: 700, TargetQPS: 2,
		StartUnixNs: fixtureStart.UnixNano(), EndNs: 330_000_000_000, QueriesIssued: 700, Reported: true}}
	r.Interrupted = "SIGINT"
	r.LostSamples = 1
	ri := RunInfoFromResult(r, "1.2.3")
	var buf bytes.Buffer
	if err := WriteRunInfo(&buf, ri); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "server.settings.json", buf.Bytes())
	for _, want := range []string{`"scenario": "Server"`, `"mode": "PerformanceOnly"`, `"test_mode": "PerformanceOnly"`,
		`"start_time": "2026-08-20T13:04:05.123456789Z"`, `"kind": "performance"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("settings.json lacks %s", want)
		}
	}
	got, err := ReadRunInfo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ri) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, ri)
	}
}

func TestRunInfoEmptyPassesIsList(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteRunInfo(&buf, RunInfoFromResult(&loadgen.Result{}, "v")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"passes": []`) {
		t.Errorf("passes should be [] not null:\n%s", buf.String())
	}
}

func TestReadRunInfoAcceptsNumbersForEnums(t *testing.T) {
	in := `{"requested": {"scenario": 2, "mode": "performance"}, "effective": {"scenario": "offline", "test_mode": 1}}`
	ri, err := ReadRunInfo(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if ri.Requested.Scenario != loadgen.Server || ri.Requested.Mode != loadgen.PerformanceOnly ||
		ri.Effective.Scenario != loadgen.Offline || ri.Effective.Mode != loadgen.AccuracyOnly {
		t.Errorf("got %v %v %v %v", ri.Requested.Scenario, ri.Requested.Mode, ri.Effective.Scenario, ri.Effective.Mode)
	}
}

func TestReadRunInfoErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "empty file"},
		{"{\n  \"version\": \"1\",\n  \"bogus\": 1\n}", `settings.json:3:`},
		{"{\n  \"version\": \"1\",\n  \"bogus\": 1\n}", `unknown field "bogus"`},
		{"{\n  \"version\": 1\n}", "settings.json:2:"},
		{"{\n  \"version\": \"1\",,\n}", "settings.json:2:"},
		{`{"requested": {"scenario": "Cloud"}}`, `unknown scenario "Cloud"`},
		{`{"requested": {"scenario": 7}}`, "unknown scenario 7"},
		{`{"requested": {"mode": true}}`, "want a name or an integer"},
		{"{}\n{}", "unexpected data after the JSON object"},
		{"{}}", "unexpected data after the JSON object"},
	} {
		_, err := ReadRunInfo(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.want)
		}
	}
}

func TestScenarioModeText(t *testing.T) {
	b, err := json.Marshal(struct {
		S loadgen.Scenario
		M loadgen.Mode
		X loadgen.Scenario
	}{loadgen.MultiStream, loadgen.FindPeakPerformance, loadgen.Scenario(9)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"S":"MultiStream","M":"FindPeakPerformance","X":"9"}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}
