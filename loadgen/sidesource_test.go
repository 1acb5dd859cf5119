package loadgen_test

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"aimeter/loadgen"
)

// wholeSource is a tableSource whose records carry sample data, scanned
// whole in blocks of block records.
type wholeSource struct {
	tableSource
	recs []loadgen.Record
}

func (s *wholeSource) HasSampleData() bool {
	return slices.ContainsFunc(s.recs, func(r loadgen.Record) bool {
		return r.RequestBytes != 0 || r.ResponseBytes != 0 || r.Node != 0 || r.Error != 0
	})
}

func (s *wholeSource) ScanRecords(fn func([]loadgen.Record) error) error {
	for at := 0; at < len(s.recs); at += s.block {
		if err := fn(s.recs[at:min(at+s.block, len(s.recs))]); err != nil {
			return err
		}
	}
	return nil
}

// traceSource is a TokenSource over traces, failing with fail after
// failAfter samples when fail is set; the times it passes are a reused
// buffer, as a file's reader passes them.
type traceSource struct {
	traces    []loadgen.TokenTrace
	fail      error
	failAfter int
}

func (s *traceSource) ScanTokens(fn func(uint64, []int64) error) error {
	var buf []int64
	for k, tt := range s.traces {
		if s.fail != nil && k == s.failAfter {
			return s.fail
		}
		buf = append(buf[:0], tt.TimesNs...)
		if err := fn(tt.SeqID, buf); err != nil {
			return err
		}
	}
	return nil
}

// TestSideSourcesEqualTable checks that a Result whose records (with
// sample data) and token times are sources yields what the same Result
// with them in memory yields: whole records, sample data, nodes, token
// times (in slices of their own, though the source reuses its buffer),
// and that an error reading the token times is kept.
func TestSideSourcesEqualTable(t *testing.T) {
	want, _ := twoPasses(t)
	var recs []loadgen.Record
	for r := range want.Records() {
		if r.SeqID%3 == 0 {
			r.RequestBytes, r.ResponseBytes = int64(r.SeqID), 7
		}
		if r.SeqID >= want.Passes[1].FirstSeq && r.SeqID%5 == 0 {
			r.Node = 2 // nodes in the performance pass only
		}
		recs = append(recs, r)
	}
	table := loadgen.NewRecordTable(len(recs))
	table.Append(recs...)
	want.AttachTable(table)
	var traces []loadgen.TokenTrace
	for _, r := range recs[:500] {
		traces = append(traces, loadgen.TokenTrace{SeqID: r.SeqID, TimesNs: []int64{r.IssuedNs + 1, r.IssuedNs + 2}})
	}
	want.AttachTokenTimes(traces)

	got := &loadgen.Result{Passes: want.Passes, Effective: want.Effective}
	got.AttachSource(&wholeSource{tableSource: tableSource{t: table, block: 777}, recs: recs})
	got.AttachTokenSource(&traceSource{traces: traces})
	if !slices.Equal(slices.Collect(got.Records()), recs) {
		t.Error("Records of the source differ from the table's")
	}
	for i := range got.Passes {
		if !slices.Equal(slices.Collect(got.PassRecords(i)), slices.Collect(want.PassRecords(i))) {
			t.Errorf("PassRecords(%d) of the source differ from the table's", i)
		}
		if g, w := got.PassHasNodes(i), want.PassHasNodes(i); g != w {
			t.Errorf("PassHasNodes(%d) = %v, the table's %v", i, g, w)
		}
	}
	if !got.HasSampleData() {
		t.Error("HasSampleData is false with a source of sample data")
	}
	wantToks := maps.Collect(want.TokenTimes())
	gotToks := maps.Collect(got.TokenTimes()) // keeps every slice: each must be its own
	if !maps.EqualFunc(gotToks, wantToks, slices.Equal) {
		t.Error("TokenTimes of the source differ from the traces attached")
	}
	if !got.HasTokenTimes() || got.RecordSourceErr() != nil {
		t.Errorf("HasTokenTimes %v, RecordSourceErr %v: want true, nil", got.HasTokenTimes(), got.RecordSourceErr())
	}

	bad := errors.New("disk gone")
	got.AttachTokenSource(&traceSource{traces: traces, fail: bad, failAfter: 10})
	n := 0
	for range got.TokenTimes() {
		n++
	}
	if n != 10 || !errors.Is(got.RecordSourceErr(), bad) {
		t.Errorf("a failing token source: %d samples, RecordSourceErr %v; want 10, %v", n, got.RecordSourceErr(), bad)
	}
}
