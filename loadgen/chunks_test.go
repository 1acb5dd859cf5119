package loadgen

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestRecordChunksCoverRecords: the chunks of RecordChunks, yielded in
// turn, are exactly Records, whatever the split, for a run of one large
// query (Offline), many small ones with unissued tails (a SingleStream run
// cut short), several samples per query (MultiStream) and stored records.
func TestRecordChunksCoverRecords(t *testing.T) {
	offline := runResponding(t, 1000, false, func(_ *Responder, s QuerySample) Response {
		return Response{ID: s.ID, Node: uint32(s.Index%2 + 1)}
	})
	s := DefaultSettings()
	s.Scenario = MultiStream
	s.MinDurationMs = 0
	s.MinQueryCount = 50
	multi, err := Run(context.Background(), funcSUT{issue: func(r *Responder, samples []QuerySample) {
		for _, q := range samples {
			r.Complete(q.ID, nil, 0)
		}
	}}, &testQSL{total: 64, perf: 64}, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	s = DefaultSettings()
	s.Scenario = SingleStream
	s.MinDurationMs = 60_000
	s.MinQueryCount = 10_000
	// The SUT answers 100 queries, then none: the 101st is lost at the
	// timeout and the rest are never issued.
	answered := 0
	cut, _ := Run(context.Background(), funcSUT{issue: func(r *Responder, samples []QuerySample) {
		for _, q := range samples {
			if answered++; answered <= 100 {
				r.Complete(q.ID, nil, 0)
			}
		}
	}}, &testQSL{total: 64, perf: 64}, s, &Options{Timeout: 500 * time.Millisecond, InterruptGrace: time.Millisecond})
	if cut == nil {
		t.Fatal("the cut run returned no result")
	}
	// Token latencies, some failures: first-token times and errors.
	tokens := runResponding(t, 500, true, func(r *Responder, s QuerySample) Response {
		if s.Index%7 == 3 {
			return Response{ID: s.ID, Err: errors.New("failed")}
		}
		r.FirstToken(s.ID, nil)
		return Response{ID: s.ID, Tokens: int64(s.Index % 5)}
	})
	stored := &Result{}
	stored.AttachRecords(slices.Collect(offline.Records()))

	for _, c := range []struct {
		name string
		res  *Result
	}{{"Offline, one query", offline}, {"MultiStream", multi}, {"cut short: unissued queries", cut}, {"stored", stored}, {"token latencies and failures", tokens}} {
		want := slices.Collect(c.res.Records())
		if c.res == cut && len(want) != 101 {
			t.Fatalf("%s: %d records, want 100 answered and 1 lost", c.name, len(want))
		}
		if len(want) == 0 {
			t.Fatalf("%s: no records", c.name)
		}
		if c.res == tokens && !slices.ContainsFunc(want, func(r Record) bool { return r.FirstTokenNs != NoTime }) ||
			c.res == tokens && !slices.ContainsFunc(want, func(r Record) bool { return r.Status == StatusError }) {
			t.Fatalf("%s: no first-token time or no failure among the records", c.name)
		}
		for _, n := range []int{0, 1, 2, 3, 7, 64, len(want) + 5} {
			var got []Record
			for _, chunk := range c.res.RecordChunks(n) {
				got = slices.AppendSeq(got, chunk)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, %d chunks: %d records, want the %d of Records in order", c.name, n, len(got), len(want))
			}
			// ColumnChunks: the same records, column by column, but for
			// the columns only some SUTs fill.
			var cols RecordColumns
			for _, chunk := range c.res.ColumnChunks(n) {
				chunk(&cols)
			}
			if cols.Len() != len(want) {
				t.Errorf("%s, %d column chunks: %d records, want %d", c.name, n, cols.Len(), len(want))
				continue
			}
			for i, w := range want {
				w.RequestBytes, w.ResponseBytes, w.Node, w.Error = 0, 0, 0, 0
				if g := cols.Record(i); g != w {
					t.Errorf("%s, %d column chunks: record %d is %+v, want %+v", c.name, n, i, g, w)
					break
				}
			}
		}
	}
	for i := range offline.Passes {
		want := false
		for rec := range offline.PassRecords(i) {
			want = want || rec.Node != 0
		}
		if got := offline.PassHasNodes(i); got != want {
			t.Errorf("PassHasNodes(%d) of the run = %v, its records say %v", i, got, want)
		}
		// The same records read back from a bundle: the passes' records
		// are read.
		read := &Result{Passes: offline.Passes}
		read.AttachRecords(slices.Collect(offline.Records()))
		if got := read.PassHasNodes(i); got != want {
			t.Errorf("PassHasNodes(%d) of the stored records = %v, they say %v", i, got, want)
		}
	}
	for i := range multi.Passes {
		if multi.PassHasNodes(i) {
			t.Errorf("PassHasNodes(%d) of a run whose SUT names no node", i)
		}
	}
	if !offline.HasSampleData() || !stored.HasSampleData() || multi.HasSampleData() {
		t.Errorf("HasSampleData: %v %v %v, want true true false", offline.HasSampleData(), stored.HasSampleData(), multi.HasSampleData())
	}
}
