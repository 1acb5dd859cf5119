package parquet

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"aimeter/loadgen"
)

// stagesFixture is records with stage times covering every column's
// extremes: nothing measured (every time null), the SUT's clock, the
// largest node number, negative and the largest times.
func stagesFixture() ([]loadgen.Record, []loadgen.StageTimes) {
	recs := []loadgen.Record{{SeqID: 0}, {SeqID: 1}, {SeqID: 2}, {SeqID: 5}, {SeqID: math.MaxUint64}}
	a := loadgen.NoStages
	a.Received, a.InferenceStart, a.InferenceEnd, a.Node = 100, 110, 150, 2
	b := loadgen.NoStages
	b.Clock, b.Received, b.ResultSent, b.Node = loadgen.SUTClock, 0, 42, math.MaxUint32
	c := loadgen.StageTimes{Received: -5, PreprocessStart: math.MinInt64, PreprocessEnd: math.MaxInt64, InferenceStart: 1,
		InferenceEnd: 2, PostprocessStart: 3, PostprocessEnd: 4, ResultSent: 5}
	d := loadgen.NoStages
	d.Clock = loadgen.SUTClock
	return recs, []loadgen.StageTimes{a, loadgen.NoStages, b, c, d}
}

// samplesFixture is records with bytes, nodes and errors at their
// extremes.
func samplesFixture() []loadgen.Record {
	return []loadgen.Record{
		{SeqID: 0, RequestBytes: 100, ResponseBytes: 7, Node: 1},
		{SeqID: 1},
		{SeqID: 2, RequestBytes: math.MaxInt64, ResponseBytes: -1, Node: math.MaxUint32, Error: 2},
		{SeqID: math.MaxUint64, RequestBytes: math.MinInt64, Error: 1},
	}
}

// tokensFixture is token traces: one of a token, one of five, one empty
// (skipped: no rows), and negative and the largest times.
func tokensFixture() []loadgen.TokenTrace {
	return []loadgen.TokenTrace{
		{SeqID: 3, TimesNs: []int64{10}},
		{SeqID: 4, TimesNs: []int64{-1, 0, 5, 5, math.MaxInt64}},
		{SeqID: 9, TimesNs: []int64{math.MinInt64, 1}},
	}
}

func traceSeq(traces []loadgen.TokenTrace) func(func(uint64, []int64) bool) {
	return func(yield func(uint64, []int64) bool) {
		for _, tr := range traces {
			if !yield(tr.SeqID, tr.TimesNs) {
				return
			}
		}
	}
}

// TestTablesParquetRoundTrip: stages, samples and tokens.parquet read back
// exactly what was written, in row groups of every size (a row group of
// one row, groups that cut a sample's tokens, one group for all).
func TestTablesParquetRoundTrip(t *testing.T) {
	recs, stages := stagesFixture()
	for _, rows := range []int{1, 2, 3, DefaultRowGroupRows} {
		t.Run(fmt.Sprint(rows), func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteStages(&buf, slices.Values(recs), slices.Values(stages), rows); err != nil {
				t.Fatal(err)
			}
			seqs, got, err := ReadStages(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			for i := range recs {
				if seqs[i] != recs[i].SeqID || got[i] != stages[i] {
					t.Errorf("stages row %d: %d %+v, want %d %+v", i, seqs[i], got[i], recs[i].SeqID, stages[i])
				}
			}
			if len(got) != len(stages) {
				t.Errorf("%d stage rows, want %d", len(got), len(stages))
			}

			buf.Reset()
			want := samplesFixture()
			if err := WriteSamples(&buf, slices.Values(want), rows); err != nil {
				t.Fatal(err)
			}
			back := make([]loadgen.Record, len(want))
			for i := range back {
				back[i].SeqID = want[len(want)-1-i].SeqID // matched by seq_id, not position
			}
			tab := loadgen.NewRecordTable(len(back))
			tab.Append(back...)
			if err := ReadSamples(bytes.NewReader(buf.Bytes()), tab, 2); err != nil {
				t.Fatal(err)
			}
			back = slices.Collect(tab.All())
			slices.Reverse(back)
			if !slices.Equal(back, want) {
				t.Errorf("samples read back as %+v, want %+v", back, want)
			}

			buf.Reset()
			traces := tokensFixture()
			if err := WriteTokens(&buf, traceSeq(append(traces, loadgen.TokenTrace{SeqID: 20})), rows); err != nil {
				t.Fatal(err)
			}
			gotTraces, err := ReadTokens(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(gotTraces) != fmt.Sprint(traces) {
				t.Errorf("tokens read back as %v, want %v", gotTraces, traces)
			}
		})
	}
}

// TestTablesParquetEmpty: a file of no rows (a header and footer) reads
// back as no rows.
func TestTablesParquetEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTokens(&buf, traceSeq(nil), 10); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTokens(&buf)
	if err != nil || len(got) != 0 {
		t.Fatalf("read %v, %v; want nothing", got, err)
	}
}

// stageRow is stages.parquet as the Parquet library's own reader returns
// it: nulls as nil.
type stageRow struct {
	SeqID              uint64 `parquet:"seq_id"`
	Clock              string `parquet:"clock"`
	Node               uint32 `parquet:"node"`
	ReceivedNs         *int64 `parquet:"received_ns"`
	PreprocessStartNs  *int64 `parquet:"preprocess_start_ns"`
	PreprocessEndNs    *int64 `parquet:"preprocess_end_ns"`
	InferenceStartNs   *int64 `parquet:"inference_start_ns"`
	InferenceEndNs     *int64 `parquet:"inference_end_ns"`
	PostprocessStartNs *int64 `parquet:"postprocess_start_ns"`
	PostprocessEndNs   *int64 `parquet:"postprocess_end_ns"`
	ResultSentNs       *int64 `parquet:"result_sent_ns"`
}

// TestTablesParquetReadByLibrary: the Parquet library's own page readers
// (not aimeter's decoder) read the files as written, worked out by hand:
// the second stage row is all nulls on the test clock, the third is on
// the SUT clock at node 4294967295.
func TestTablesParquetReadByLibrary(t *testing.T) {
	recs, stages := stagesFixture()
	var buf bytes.Buffer
	if err := WriteStages(&buf, slices.Values(recs), slices.Values(stages), 2); err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.Read[stageRow](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	show := func(p *int64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%d %s %d %s %s %s %s %s %s %s %s", r.SeqID, r.Clock, r.Node, show(r.ReceivedNs),
			show(r.PreprocessStartNs), show(r.PreprocessEndNs), show(r.InferenceStartNs), show(r.InferenceEndNs),
			show(r.PostprocessStartNs), show(r.PostprocessEndNs), show(r.ResultSentNs)))
	}
	want := []string{
		"0 test 2 100 null null 110 150 null null null",
		"1 test 0 null null null null null null null null",
		"2 sut 4294967295 0 null null null null null null 42",
		"5 test 0 -5 -9223372036854775808 9223372036854775807 1 2 3 4 5",
		"18446744073709551615 sut 0 null null null null null null null null",
	}
	if !slices.Equal(got, want) {
		t.Errorf("the library read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	buf.Reset()
	if err := WriteSamples(&buf, slices.Values(samplesFixture()), 3); err != nil {
		t.Fatal(err)
	}
	type sampleRow struct {
		SeqID         uint64 `parquet:"seq_id"`
		RequestBytes  int64  `parquet:"request_bytes"`
		ResponseBytes int64  `parquet:"response_bytes"`
		Node          uint32 `parquet:"node"`
		Error         uint32 `parquet:"error"`
	}
	srows, err := parquet.Read[sampleRow](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	wantS := []sampleRow{{0, 100, 7, 1, 0}, {1, 0, 0, 0, 0}, {2, math.MaxInt64, -1, math.MaxUint32, 2}, {math.MaxUint64, math.MinInt64, 0, 0, 1}}
	if !slices.Equal(srows, wantS) {
		t.Errorf("the library read samples %v, want %v", srows, wantS)
	}

	buf.Reset()
	if err := WriteTokens(&buf, traceSeq(tokensFixture()), 4); err != nil {
		t.Fatal(err)
	}
	type tokenRow struct {
		SeqID  uint64 `parquet:"seq_id"`
		Token  uint32 `parquet:"token"`
		TimeNs int64  `parquet:"time_ns"`
	}
	trows, err := parquet.Read[tokenRow](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	wantT := []tokenRow{{3, 0, 10}, {4, 0, -1}, {4, 1, 0}, {4, 2, 5}, {4, 3, 5}, {4, 4, math.MaxInt64}, {9, 0, math.MinInt64}, {9, 1, 1}}
	if !slices.Equal(trows, wantT) {
		t.Errorf("the library read tokens %v, want %v", trows, wantT)
	}
}

// TestTablesParquetBadInput: damaged files and rows that break the
// files' rules are refused with an error naming where.
func TestTablesParquetBadInput(t *testing.T) {
	recs, stages := stagesFixture()
	var stagesBuf bytes.Buffer
	if err := WriteStages(&stagesBuf, slices.Values(recs), slices.Values(stages), 2); err != nil {
		t.Fatal(err)
	}
	good := stagesBuf.Bytes()
	flipped := slices.Clone(good)
	hlen, _, _, err := pageHeader(good[len("PAR1"):])
	if err != nil {
		t.Fatal(err)
	}
	flipped[len("PAR1")+hlen+2] ^= 0x5a // inside the first page of row group 0, past its header
	// A clock the reader does not know: the same file written with
	// another value in place of "sut".
	moon := *stagesTable
	moon.cols = slices.Clone(moon.cols)
	moon.cols[stClock].enum = []string{"test", "moon"}
	tw := newTableWriter(new(bytes.Buffer), &moon, 10)
	mb := tw.w.(*bytes.Buffer)
	for c := range tw.cols {
		tw.cols[c] = append(tw.cols[c], 1)
	}
	if err := tw.close(); err != nil {
		t.Fatal(err)
	}
	tokens := func(rows ...[3]int64) []byte {
		tw := newTableWriter(new(bytes.Buffer), tokensTable, 10)
		for _, r := range rows {
			for c := range r {
				tw.cols[c] = append(tw.cols[c], r[c])
			}
		}
		if err := tw.close(); err != nil {
			t.Fatal(err)
		}
		return tw.w.(*bytes.Buffer).Bytes()
	}
	var samplesBuf bytes.Buffer
	if err := WriteSamples(&samplesBuf, slices.Values(samplesFixture()), 2); err != nil {
		t.Fatal(err)
	}
	var recordsBuf bytes.Buffer
	if err := WriteRecords(&recordsBuf, parquetFixture(), RecordWriterOptions{}); err != nil {
		t.Fatal(err)
	}
	readStages := func(d []byte) error { _, _, err := ReadStages(bytes.NewReader(d)); return err }
	readTok := func(d []byte) error { _, err := ReadTokens(bytes.NewReader(d)); return err }
	cases := []struct {
		name, why string
		read      func() error
		want      []string
	}{
		{"empty", "no magic, no footer", func() error { return readStages(nil) }, []string{"not a Parquet file"}},
		{"cut", "a file cut mid-row-group says where", func() error { return readStages(good[:len(good)/2]) },
			[]string{"not a whole Parquet file", "the file ends in row group ", "without its footer"}},
		{"flipped byte", "the page's CRC names the row group and column", func() error { return readStages(flipped) },
			[]string{"row group 0: column seq_id", "checksum mismatch"}},
		{"records as stages", "another table's file has another schema", func() error { return readStages(recordsBuf.Bytes()) },
			[]string{"schema is"}},
		{"unknown clock", "a clock other than test or sut", func() error { return readStages(mb.Bytes()) },
			[]string{"row group 0: column clock", `"moon" is none of`}},
		{"sample not in the records", "every row joins a record", func() error {
			return ReadSamples(bytes.NewReader(samplesBuf.Bytes()), tableOf([]loadgen.Record{{SeqID: 0}}), 2)
		}, []string{"row group 0", "row 2: seq_id 1 is not in the records"}},
		{"error index past the table", "an error names an entry of errors.json", func() error {
			return ReadSamples(bytes.NewReader(samplesBuf.Bytes()), tableOf(samplesFixture()), 1)
		}, []string{"row group 1", "row 3: field error: 2", "errors.json has 1 entries"}},
		{"tokens out of order", "samples come in sequence order", func() error { return readTok(tokens([3]int64{5, 0, 1}, [3]int64{4, 0, 1})) },
			[]string{"row 2: seq_id 4 after 5"}},
		{"token skipped", "tokens count from 0 without a gap", func() error { return readTok(tokens([3]int64{5, 0, 1}, [3]int64{5, 2, 1})) },
			[]string{"row 2: token 2 of seq_id 5, want token 1"}},
		{"first token not 0", "a sample's tokens start at 0", func() error { return readTok(tokens([3]int64{5, 1, 1})) },
			[]string{"row 1: token 1 of seq_id 5, want token 0"}},
	}
	for _, c := range cases {
		err := c.read()
		if err == nil {
			t.Errorf("%s (%s): read without an error", c.name, c.why)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s (%s): error does not say %q: %v", c.name, c.why, w, err)
			}
		}
	}
}

// TestTablesParquetEveryByteFlipped: whatever byte of stages.parquet is
// changed, the reader returns an error or rows, never panics.
func TestTablesParquetEveryByteFlipped(t *testing.T) {
	recs, stages := stagesFixture()
	var buf bytes.Buffer
	if err := WriteStages(&buf, slices.Values(recs), slices.Values(stages), 2); err != nil {
		t.Fatal(err)
	}
	for i := range buf.Len() {
		d := slices.Clone(buf.Bytes())
		d[i] ^= 0xff
		_, _, _ = ReadStages(bytes.NewReader(d))
	}
}

// FuzzReadStagesParquet, FuzzReadSamplesParquet, FuzzReadTokensParquet:
// any input is read or refused, never a panic, and what is read writes
// back to a file that reads the same.
func FuzzReadStagesParquet(f *testing.F) {
	recs, stages := stagesFixture()
	var buf bytes.Buffer
	if err := WriteStages(&buf, slices.Values(recs), slices.Values(stages), 2); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		seqs, got, err := ReadStages(bytes.NewReader(data))
		if err != nil {
			return
		}
		recs := make([]loadgen.Record, len(seqs))
		for i, s := range seqs {
			recs[i].SeqID = s
		}
		var out bytes.Buffer
		if err := WriteStages(&out, slices.Values(recs), slices.Values(got), DefaultRowGroupRows); err != nil {
			t.Fatal(err)
		}
		seqs2, again, err := ReadStages(&out)
		if err != nil || !slices.Equal(seqs, seqs2) || !slices.Equal(got, again) {
			t.Fatalf("accepted stages do not round-trip: %v", err)
		}
	})
}

func FuzzReadSamplesParquet(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteSamples(&buf, slices.Values(samplesFixture()), 2); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes(), 2)
	f.Fuzz(func(t *testing.T, data []byte, nErrors int) {
		if nErrors < 0 || nErrors > 1<<20 {
			return
		}
		recs := samplesFixture()
		for i := range recs {
			recs[i] = loadgen.Record{SeqID: recs[i].SeqID}
		}
		tab := tableOf(recs)
		if err := ReadSamples(bytes.NewReader(data), tab, nErrors); err != nil {
			return
		}
		for r := range tab.All() {
			if int(r.Error) > nErrors {
				t.Fatalf("error index %d accepted with %d entries", r.Error, nErrors)
			}
		}
	})
}

func FuzzReadTokensParquet(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteTokens(&buf, traceSeq(tokensFixture()), 3); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		traces, err := ReadTokens(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i := 1; i < len(traces); i++ {
			if traces[i].SeqID <= traces[i-1].SeqID {
				t.Fatalf("traces out of order: %d after %d", traces[i].SeqID, traces[i-1].SeqID)
			}
		}
		var out bytes.Buffer
		if err := WriteTokens(&out, traceSeq(traces), DefaultRowGroupRows); err != nil {
			t.Fatal(err)
		}
		again, err := ReadTokens(&out)
		if err != nil || fmt.Sprint(again) != fmt.Sprint(traces) {
			t.Fatalf("accepted tokens do not round-trip: %v", err)
		}
	})
}

// TestTablesParquetOtherWriter: stages, samples and tokens.parquet written
// by the Parquet library's own writer (DATA_PAGE v1, PLAIN and dictionary
// encodings: what another tool rewriting the files might give) read back
// the same rows through the library's row reader.
func TestTablesParquetOtherWriter(t *testing.T) {
	recs, stages := stagesFixture()
	ptr := func(v int64) *int64 {
		if v == loadgen.NoTime {
			return nil
		}
		return &v
	}
	var rows []stageRow
	for i, st := range stages {
		rows = append(rows, stageRow{SeqID: recs[i].SeqID, Clock: clockNames[st.Clock], Node: st.Node, ReceivedNs: ptr(st.Received),
			PreprocessStartNs: ptr(st.PreprocessStart), PreprocessEndNs: ptr(st.PreprocessEnd), InferenceStartNs: ptr(st.InferenceStart),
			InferenceEndNs: ptr(st.InferenceEnd), PostprocessStartNs: ptr(st.PostprocessStart), PostprocessEndNs: ptr(st.PostprocessEnd),
			ResultSentNs: ptr(st.ResultSent)})
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[stageRow](&buf, stagesTable.schema, parquet.DataPageVersion(1))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	seqs, got, err := ReadStages(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if i >= len(got) || seqs[i] != recs[i].SeqID || got[i] != stages[i] {
			t.Fatalf("row %d of another writer's stages.parquet: %v %+v, want %d %+v", i, seqs, got, recs[i].SeqID, stages[i])
		}
	}

	buf.Reset()
	tw := parquet.NewGenericWriter[pqToken](&buf, tokensTable.schema, parquet.DataPageVersion(1))
	var trows []pqToken
	for _, tr := range tokensFixture() {
		for k, v := range tr.TimesNs {
			trows = append(trows, pqToken{SeqID: tr.SeqID, Token: uint32(k), TimeNs: v})
		}
	}
	if _, err := tw.Write(trows); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	traces, err := ReadTokens(&buf)
	if err != nil || fmt.Sprint(traces) != fmt.Sprint(tokensFixture()) {
		t.Errorf("another writer's tokens.parquet read as %v, %v; want %v", traces, err, tokensFixture())
	}
}

// tableOf is a table of recs.
func tableOf(recs []loadgen.Record) *loadgen.RecordTable {
	t := loadgen.NewRecordTable(len(recs))
	t.Append(recs...)
	return t
}
