package loadgen_test

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"aimeter/loadgen"
)

// tableSource is a RecordSource over a table, scanned in blocks of block
// records (none of which need align with a pass), failing with fail after
// failAfter blocks when fail is set. scans counts the Scans.
type tableSource struct {
	t         *loadgen.RecordTable
	block     int
	fail      error
	failAfter int
	scans     int
}

func (s *tableSource) Len() int { return s.t.Len() }

func (s *tableSource) Scan(fn func(*loadgen.RecordColumns) error) error {
	s.scans++
	k := 0
	for c := range s.t.Blocks(s.block) {
		if s.fail != nil && k == s.failAfter {
			return s.fail
		}
		k++
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// twoPasses is a Result of an accuracy pass of 3,000 records and a
// performance pass of 20,000 (synthPass's), by table, and its table.
func twoPasses(t *testing.T) (*loadgen.Result, *loadgen.RecordTable) {
	t.Helper()
	perf, info := synthPass(loadgen.Server, 20_000, 3, true, false, 5)
	acc := loadgen.PassInfo{Kind: loadgen.PassAccuracy, FirstSeq: 0, EndSeq: info.FirstSeq}
	table := loadgen.NewRecordTable(0)
	for i := range info.FirstSeq {
		table.Append(loadgen.Record{SeqID: i, QueryID: i, ScheduledNs: int64(i), IssuedNs: int64(i), FirstTokenNs: loadgen.NoTime,
			CompletedNs: int64(i) + 5, Status: loadgen.StatusOK})
	}
	for r := range perf.Records() {
		r.RequestBytes, r.ResponseBytes, r.Node, r.Error = 0, 0, 0, 0
		table.Append(r)
	}
	e := loadgen.Effective{Scenario: loadgen.Server, TargetLatencyNs: 10_000_000, TargetLatencyPercentile: 0.99, MinDurationMs: 100,
		MinQueryCount: 100, UseTokenLatencies: true, TTFTLatencyNs: 2_000_000, TPOTLatencyNs: 300_000, MaxErrorRate: 0.01}
	res := &loadgen.Result{Passes: []loadgen.PassInfo{acc, info}, Effective: e}
	res.AttachTable(table)
	return res, table
}

func columnsOf(seq func(func(*loadgen.RecordColumns) bool), block int, t *testing.T) []loadgen.Record {
	var out []loadgen.Record
	for c := range seq {
		if c.Len() > block {
			t.Fatalf("a block of %d records, asked for at most %d", c.Len(), block)
		}
		for i := range c.Len() {
			out = append(out, c.Record(i))
		}
	}
	return out
}

// TestAttachSourceEqualsTable checks that a Result whose records are a
// source (read anew at each use, in blocks that straddle the passes)
// yields through every accessor what the same Result with the records in
// a table yields, and summarises the same.
func TestAttachSourceEqualsTable(t *testing.T) {
	want, table := twoPasses(t)
	for _, block := range []int{1, 777, 4096, 100_000} {
		src := &tableSource{t: table, block: block}
		got := &loadgen.Result{Passes: want.Passes, Effective: want.Effective}
		got.AttachSource(src)
		if g, w := got.RecordCount(), want.RecordCount(); g != w {
			t.Fatalf("block %d: RecordCount %d, want %d", block, g, w)
		}
		if g, w := slices.Collect(got.Records()), slices.Collect(want.Records()); !slices.Equal(g, w) {
			t.Fatalf("block %d: Records differ (%d, want %d)", block, len(g), len(w))
		}
		var chunks []loadgen.Record
		for _, ch := range got.RecordChunks(3) {
			chunks = slices.AppendSeq(chunks, ch)
		}
		if !slices.Equal(chunks, slices.Collect(want.Records())) {
			t.Errorf("block %d: RecordChunks differ from Records", block)
		}
		var cc loadgen.RecordColumns
		for _, ch := range got.ColumnChunks(3) {
			ch(&cc)
		}
		if g := columnsOf(func(yield func(*loadgen.RecordColumns) bool) { yield(&cc) }, cc.Len(), t); !slices.Equal(g, slices.Collect(want.Records())) {
			t.Errorf("block %d: ColumnChunks differ from Records", block)
		}
		for i := range want.Passes {
			if g, w := slices.Collect(got.PassRecords(i)), slices.Collect(want.PassRecords(i)); !slices.Equal(g, w) {
				t.Errorf("block %d: pass %d: PassRecords differ (%d, want %d)", block, i, len(g), len(w))
			}
			if g, w := columnsOf(got.PassColumns(i, 500), 500, t), columnsOf(want.PassColumns(i, 500), 500, t); !slices.Equal(g, w) {
				t.Errorf("block %d: pass %d: PassColumns differ (%d, want %d)", block, i, len(g), len(w))
			}
			a, b := got.PassAccess(i), want.PassAccess(i)
			if a.Len() != b.Len() {
				t.Fatalf("block %d: pass %d: PassAccess has %d records, want %d", block, i, a.Len(), b.Len())
			}
			for k := range a.Len() {
				if a.SeqID(k) != b.SeqID(k) || a.CompletedNs(k) != b.CompletedNs(k) || a.FirstTokenNs(k) != b.FirstTokenNs(k) {
					t.Fatalf("block %d: pass %d: PassAccess record %d differs", block, i, k)
				}
			}
		}
		gs, err := got.SummarizeStoredPass(1)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := want.SummarizeStoredPass(1)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gs, ws) {
			t.Errorf("block %d: the summary read from the source differs from the table's", block)
		}
		if got.HasSampleData() || got.PassHasNodes(1) {
			t.Errorf("block %d: a source has no sample data", block)
		}
		if err := got.RecordSourceErr(); err != nil {
			t.Errorf("block %d: RecordSourceErr = %v", block, err)
		}
	}
}

// TestAttachSourceStopsAndFails checks that a consumer that stops early
// ends the source's reading at once, and that an error reading the source
// ends the iteration and is kept for RecordSourceErr.
func TestAttachSourceStopsAndFails(t *testing.T) {
	want, table := twoPasses(t)
	src := &tableSource{t: table, block: 100}
	res := &loadgen.Result{Passes: want.Passes, Effective: want.Effective}
	res.AttachSource(src)
	n := 0
	for range res.Records() {
		if n++; n == 150 {
			break
		}
	}
	if n != 150 || res.RecordSourceErr() != nil {
		t.Fatalf("stopped after %d records, error %v", n, res.RecordSourceErr())
	}
	// The accuracy pass ends within the records: reading it stops there.
	if got := len(slices.Collect(res.PassRecords(0))); got != int(want.Passes[0].EndSeq) {
		t.Fatalf("accuracy pass: %d records, want %d", got, want.Passes[0].EndSeq)
	}

	broken := errors.New("disk gone")
	res.AttachSource(&tableSource{t: table, block: 100, fail: broken, failAfter: 3})
	if got := len(slices.Collect(res.Records())); got != 300 {
		t.Errorf("a source failing after 3 blocks of 100 yielded %d records", got)
	}
	if err := res.RecordSourceErr(); !errors.Is(err, broken) {
		t.Errorf("RecordSourceErr = %v, want %v", err, broken)
	}
	if _, err := res.SummarizeStoredPass(1); !errors.Is(err, broken) {
		t.Errorf("SummarizeStoredPass over a failing source: %v, want %v", err, broken)
	}
	res.AttachTable(table)
	if err := res.RecordSourceErr(); err != nil {
		t.Errorf("after AttachTable, RecordSourceErr = %v", err)
	}
}
