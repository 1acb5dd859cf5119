package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// tableColumnCases are columns of values that exercise every form a
// tableCol takes and every move between them.
var tableColumnCases = []struct {
	name   string
	reason string
	gen    func(i int, r *rand.Rand) int64
	bytes  int // per value, once stored: 0 a line, 4 narrow, 8 wide
}{
	{"constant", "an Offline run's query id or scheduled time: no memory per record", func(int, *rand.Rand) int64 { return 7 }, 0},
	{"NoTime", "first_token_ns of a run without token latencies", func(int, *rand.Rand) int64 { return NoTime }, 0},
	{"counting", "sequence ids counting up by one", func(i int, _ *rand.Rand) int64 { return 1000 + int64(i) }, 0},
	{"line wraps", "a line through the int64 limits is still a line (arithmetic wraps)", func(i int, _ *rand.Rand) int64 { return math.MaxInt64 - 3 + int64(i)*5 }, 0},
	{"narrow", "completion times within a few seconds", func(_ int, r *rand.Rand) int64 { return 1e9 + r.Int64N(3e9) }, 4},
	{"narrow from NoTime", "completion times of a 4.2 s run, NoTime for the lost samples", func(i int, r *rand.Rand) int64 {
		if i%100 == 7 {
			return NoTime
		}
		return r.Int64N(1<<32 - 1)
	}, 4},
	{"narrow below", "values below the first stay narrow when within 2^31 of the middle", func(i int, r *rand.Rand) int64 { return 1e12 - r.Int64N(2e9) }, 4},
	{"line then narrow", "a line broken late moves to 32-bit offsets", func(i int, _ *rand.Rand) int64 {
		if i < 3000 {
			return int64(i)
		}
		return int64(i) % 17
	}, 4},
	{"line then wide", "a line broken by a far value moves to full values", func(i int, _ *rand.Rand) int64 {
		if i == 2500 {
			return math.MinInt64
		}
		return int64(i)
	}, 8},
	{"narrow then wide", "a value out of 32-bit reach after narrow ones", func(i int, r *rand.Rand) int64 {
		if i == 4000 {
			return 1 << 40
		}
		return r.Int64N(100)
	}, 8},
	{"wide", "random 64-bit values", func(_ int, r *rand.Rand) int64 { return int64(r.Uint64()) }, 8},
	{"steep line", "a line whose step is past 2^32 is a line, not narrow", func(i int, _ *rand.Rand) int64 { return int64(i) << 40 }, 0},
	{"one break", "the second value sets the step, the third breaks it", func(i int, _ *rand.Rand) int64 { return []int64{5, 6, 100, 7, 8}[i%5] }, 4},
}

func TestTableColExact(t *testing.T) {
	const n = 5000
	for _, c := range tableColumnCases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			want := make([]int64, n)
			for i := range want {
				want[i] = c.gen(i, r)
			}
			// Whole blocks, blocks of odd sizes, and value by value: the same column.
			for _, block := range []int{n, 1, 7, 1000} {
				var col tableCol
				for lo := 0; lo < n; lo += block {
					hi := min(lo+block, n)
					if block == 1 {
						col.push1(lo, want[lo], n)
					} else {
						col.push(lo, want[lo:hi], n)
					}
				}
				got := make([]int64, n)
				col.fill(got, 0)
				if !slices.Equal(got, want) {
					t.Fatalf("block %d: column differs (mode %d)", block, col.mode)
				}
				for _, i := range []int{0, 1, n / 2, n - 1} {
					if col.at(i) != want[i] {
						t.Fatalf("block %d: at(%d) = %d, want %d", block, i, col.at(i), want[i])
					}
				}
				if got := col.bytes(); got != c.bytes*n {
					t.Errorf("block %d: %d bytes, want %d (%s)", block, got, c.bytes*n, c.reason)
				}
			}
		})
	}
}

func TestTableColSet(t *testing.T) {
	for _, c := range []struct {
		name, reason string
		v            int64
	}{
		{"near", "a small value after a line stores the line narrow", 3},
		{"far", "a far value stores it wide", math.MaxInt64},
		{"same", "the value it already has changes nothing", 10 + 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			var col tableCol
			want := make([]int64, 10)
			for i := range want {
				want[i] = 10 + int64(i)
				col.push1(i, want[i], 10)
			}
			col.set(4, c.v, 10)
			want[4] = c.v
			got := make([]int64, 10)
			col.fill(got, 0)
			if !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v (%s)", got, want, c.reason)
			}
			col.set(7, math.MinInt64, 10) // and then one out of 32-bit reach
			want[7] = math.MinInt64
			col.fill(got, 0)
			if !slices.Equal(got, want) {
				t.Fatalf("after a far value: got %v, want %v", got, want)
			}
		})
	}
}

// tableRecords are records of an Offline-like pass (seq and query ids on a
// line, one scheduled time) with some lost and failed samples and sample
// data on a few.
func tableRecords(n int, r *rand.Rand) []Record {
	recs := make([]Record, n)
	for i := range recs {
		rec := Record{SeqID: 1<<63 + uint64(i), QueryID: 42, SampleIndex: uint64(r.IntN(1024)),
			IssuedNs: 1000, FirstTokenNs: NoTime, CompletedNs: 1000 + r.Int64N(1e9), Tokens: 1, Status: StatusOK}
		switch i % 997 {
		case 3:
			rec.Status, rec.CompletedNs = StatusLost, NoTime
		case 5:
			rec.Status, rec.Error = StatusError, 1
		case 7:
			rec.RequestBytes, rec.ResponseBytes, rec.Node = 100, 1<<40, 2
		}
		recs[i] = rec
	}
	return recs
}

func TestRecordTableRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	want := tableRecords(10000, r)
	viaRecords := NewRecordTable(len(want))
	viaRecords.Append(want...)
	viaColumns := NewRecordTable(len(want))
	for lo := 0; lo < len(want); lo += 333 {
		var c RecordColumns
		c.Append(want[lo:min(lo+333, len(want))]...)
		viaColumns.AppendColumns(&c)
	}
	// The columns only some SUTs fill, set afterwards as samples.parquet is read.
	find := viaColumns.Finder()
	for _, rec := range want {
		if rec.RequestBytes != 0 || rec.ResponseBytes != 0 || rec.Node != 0 || rec.Error != 0 {
			i, ok := find(rec.SeqID)
			if !ok {
				t.Fatalf("seq %d not found", rec.SeqID)
			}
			viaColumns.SetSampleData(i, rec.RequestBytes, rec.ResponseBytes, rec.Node, rec.Error)
		}
	}
	for name, tab := range map[string]*RecordTable{"Append": viaRecords, "AppendColumns+SetSampleData": viaColumns} {
		if got := slices.Collect(tab.All()); !slices.Equal(got, want) {
			t.Errorf("%s: records differ", name)
		}
		for _, i := range []int{0, 7, 5000, len(want) - 1} {
			if got := tab.Record(i); got != want[i] {
				t.Errorf("%s: Record(%d) = %+v, want %+v", name, i, got, want[i])
			}
		}
		if !tab.HasSampleData() {
			t.Errorf("%s: HasSampleData false", name)
		}
		// seq and query ids, scheduled, issued, first token, tokens: no
		// memory per record; sample index and completion 4 bytes;
		// status, request and response bytes, node and error 4 or 8.
		if per := float64(tab.Bytes()) / float64(len(want)); per > 8+5*8 {
			t.Errorf("%s: %.1f bytes a record", name, per)
		}
	}
	var res Result
	res.AttachTable(viaColumns)
	if got := slices.Collect(res.Records()); !slices.Equal(got, want) {
		t.Errorf("Result.Records differs from the attached records")
	}
	if res.RecordCount() != len(want) {
		t.Errorf("RecordCount %d, want %d", res.RecordCount(), len(want))
	}
	var parts []Record
	for _, part := range res.RecordChunks(3) {
		parts = slices.AppendSeq(parts, part)
	}
	if !slices.Equal(parts, want) {
		t.Errorf("RecordChunks differ from the records")
	}
	var cols RecordColumns
	for _, fill := range res.ColumnChunks(4) {
		fill(&cols)
	}
	for i := range want {
		w := want[i]
		w.RequestBytes, w.ResponseBytes, w.Node, w.Error = 0, 0, 0, 0
		if cols.Record(i) != w {
			t.Fatalf("ColumnChunks record %d = %+v, want %+v", i, cols.Record(i), w)
		}
	}
}

func TestRecordTableOffline(t *testing.T) {
	// The columns of a null-SUT Offline run: everything but the sample
	// index and the completion time on a line, and those narrow.
	r := rand.New(rand.NewPCG(5, 6))
	recs := tableRecords(4096, r)
	for i := range recs {
		recs[i].Status, recs[i].CompletedNs, recs[i].Error = StatusOK, 1000+r.Int64N(1e9), 0
		recs[i].RequestBytes, recs[i].ResponseBytes, recs[i].Node = 0, 0, 0
	}
	tab := NewRecordTable(len(recs))
	tab.Append(recs...)
	if got, want := tab.Bytes(), 8*len(recs); got != want {
		t.Errorf("%d bytes, want %d (4 for the sample index, 4 for the completion)", got, want)
	}
	if tab.HasSampleData() {
		t.Errorf("HasSampleData true without sample data")
	}
}

func TestRecordTablePasses(t *testing.T) {
	for _, c := range []struct {
		name, reason string
		seqs         []uint64
	}{
		{"sorted", "passes one after the other, in sequence order", []uint64{0, 1, 2, 3, 10, 11, 12, 20, 21}},
		{"unsorted", "several Server issuers: scheduled order, not sequence order", []uint64{1, 0, 3, 2, 11, 10, 12, 21, 20}},
		{"interleaved", "records of two passes mixed (no run writes this, but the reader must not lose any)", []uint64{0, 10, 1, 11, 2, 12, 3, 20, 21}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tab := &RecordTable{}
			for _, s := range c.seqs {
				tab.Append(Record{SeqID: s, IssuedNs: int64(s), CompletedNs: int64(s) + 5, Status: StatusOK})
			}
			find := tab.Finder()
			for i, s := range c.seqs {
				if k, ok := find(s); !ok || k != i {
					t.Errorf("find(%d) = %d, %v; want %d", s, k, ok, i)
				}
			}
			if _, ok := find(99); ok {
				t.Errorf("find(99) found a record")
			}
			for _, p := range [][2]uint64{{0, 10}, {10, 20}, {20, 30}, {30, 40}} {
				var want []uint64
				for _, s := range c.seqs {
					if s >= p[0] && s < p[1] {
						want = append(want, s)
					}
				}
				var got, gotCols []uint64
				for r := range tab.passRecords(p[0], p[1]) {
					got = append(got, r.SeqID)
				}
				for b := range tab.passBlocks(p[0], p[1], 2) {
					gotCols = append(gotCols, b.SeqID...)
				}
				if !slices.Equal(got, want) || !slices.Equal(gotCols, want) {
					t.Errorf("pass [%d, %d): records %v, blocks %v, want %v", p[0], p[1], got, gotCols, want)
				}
				if _, _, n, _ := tab.passRange(p[0], p[1]); n != len(want) {
					t.Errorf("pass [%d, %d): %d records counted, want %d", p[0], p[1], n, len(want))
				}
			}
		})
	}
}

// checkPassTable checks that res.PassTable(i) holds the records of pass i
// (PassRecords) without the columns only some SUTs fill, and that its
// column accessors give each record's fields.
func checkPassTable(t *testing.T, res *Result, i int) {
	t.Helper()
	var want []Record
	for r := range res.PassRecords(i) {
		r.RequestBytes, r.ResponseBytes, r.Node, r.Error = 0, 0, 0, 0
		want = append(want, r)
	}
	tab := res.PassTable(i)
	if got := slices.Collect(tab.All()); !slices.Equal(got, want) {
		t.Fatalf("pass %d: PassTable holds %d records, PassRecords %d, or they differ", i, len(got), len(want))
	}
	for k, w := range want {
		got := Record{SeqID: tab.SeqID(k), QueryID: w.QueryID, SampleIndex: w.SampleIndex, ScheduledNs: tab.ScheduledNs(k),
			IssuedNs: tab.IssuedNs(k), FirstTokenNs: tab.FirstTokenNs(k), CompletedNs: tab.CompletedNs(k), Tokens: tab.Tokens(k), Status: tab.Status(k)}
		if got != w || tab.Record(k) != w {
			t.Fatalf("pass %d, record %d: accessors give %+v, Record %+v; want %+v", i, k, got, tab.Record(k), w)
		}
	}
	if tab.HasSampleData() {
		t.Errorf("pass %d: PassTable has sample data", i)
	}
	checkAccess(t, fmt.Sprintf("pass %d: PassAccess", i), res.PassAccess(i), want)
	// Its Finder finds every record, whatever their order.
	find := tab.Finder()
	for k, w := range want {
		if j, ok := find(w.SeqID); !ok || j != k {
			t.Errorf("pass %d: find(%d) = %d, %v; want %d", i, w.SeqID, j, ok, k)
		}
	}
}

var _ RecordAccess = (*RecordTable)(nil)

// checkAccess checks that a holds the records want (without the columns
// only some SUTs fill), by position and by column.
func checkAccess(t *testing.T, name string, a RecordAccess, want []Record) {
	t.Helper()
	if a.Len() != len(want) {
		t.Fatalf("%s: %d records, want %d", name, a.Len(), len(want))
	}
	for k, w := range want {
		got := Record{SeqID: a.SeqID(k), QueryID: w.QueryID, SampleIndex: w.SampleIndex, ScheduledNs: a.ScheduledNs(k),
			IssuedNs: a.IssuedNs(k), FirstTokenNs: a.FirstTokenNs(k), CompletedNs: a.CompletedNs(k), Tokens: a.Tokens(k), Status: a.Status(k)}
		if got != w {
			t.Fatalf("%s: record %d = %+v, want %+v", name, k, got, w)
		}
	}
	var got []Record
	for c := range a.Blocks(3) {
		for k := range c.Len() {
			got = append(got, c.Record(k))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: Blocks yield %d records, want %d, or they differ", name, len(got), len(want))
	}
}

// TestPassTable checks Result.PassTable for a run read back from files,
// whose pass is a stretch of its records (a view of them) or not (a
// copy), and for a live run.
func TestPassTable(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		name, reason string
		seqs         []uint64
	}{
		{"sorted", "passes one after the other, in sequence order: views", []uint64{0, 1, 2, 3, 10, 11, 12, 20, 21}},
		{"unsorted", "several Server issuers: each pass a stretch, out of sequence order within it", []uint64{1, 0, 3, 2, 11, 10, 12, 21, 20}},
		{"interleaved", "records of two passes mixed: copies", []uint64{0, 10, 1, 11, 2, 12, 3, 20, 21}},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs := tableRecords(len(c.seqs), r)
			for i, s := range c.seqs {
				recs[i].SeqID, recs[i].QueryID, recs[i].IssuedNs = s, s/2, int64(s)*1e9 // times past 2^32 ns: wide columns
				recs[i].RequestBytes, recs[i].Node = int64(i), uint32(i)
			}
			res := &Result{Passes: []PassInfo{{FirstSeq: 0, EndSeq: 10}, {FirstSeq: 10, EndSeq: 20}, {FirstSeq: 20, EndSeq: 30}, {FirstSeq: 30, EndSeq: 40}}}
			res.AttachRecords(recs)
			for i := range res.Passes {
				checkPassTable(t, res, i)
			}
		})
	}
	for _, c := range []struct {
		name, reason string
		scenario     Scenario
		shard        Shard
		view         bool
	}{
		{"SingleStream", "a query a sample: a view of the pass", SingleStream, Shard{}, true},
		{"Offline", "one query of every sample: a view", Offline, Shard{}, true},
		{"MultiStream", "queries of several samples: a view", MultiStream, Shard{}, true},
		{"Server", "a schedule: scheduled times before the issues", Server, Shard{}, true},
		{"shard", "a shard issues every other query: a table, not a view", SingleStream, Shard{Index: 1, Count: 2}, false},
		{"mixed", "first tokens, failures and lost samples: every status in a view", SingleStream, Shard{}, true},
	} {
		t.Run("live "+c.name, func(t *testing.T) {
			s := DefaultSettings()
			s.Scenario = c.scenario
			s.MinDurationMs = 0
			s.MinQueryCount = 2000
			s.ServerTargetQPS = 1e6
			s.OfflineExpectedQPS = 1
			s.MultiStreamSamplesPerQuery = 4
			var sut SUT = nullSUT{}
			opts := &Options{Shard: c.shard}
			if c.name == "mixed" {
				s.UseTokenLatencies = true
				sut, opts.SampleTimeout = mixedSUT{}, time.Millisecond
			}
			res, err := Run(context.Background(), sut, nullQSL{n: 100}, s, opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range res.Passes {
				checkPassTable(t, res, i)
			}
			pass := res.ReportedPass()
			if c.name == "mixed" {
				seen := map[Status]bool{}
				for r := range res.PassRecords(pass) {
					seen[r.Status] = true
				}
				if len(seen) != 3 {
					t.Errorf("the mixed run's statuses are %v, want ok, error and lost", seen)
				}
			}
			if n := res.PassTable(pass).Len(); n < 1000 {
				t.Errorf("the live pass's table holds %d records, want the 1000 or more the run issued", n)
			}
			if _, view := res.PassAccess(pass).(*passView); view != c.view {
				t.Errorf("PassAccess gives a view: %v, want %v (%s)", view, c.view, c.reason)
			}
		})
	}
}

// mixedSUT answers sample i with a first token and 3 tokens, fails it when
// i % 7 == 3 and never answers it (lost at the timeout) when i % 97 == 5.
type mixedSUT struct{}

func (mixedSUT) Name() string { return "mixedSUT" }
func (mixedSUT) IssueQuery(r *Responder, samples []QuerySample) {
	for _, q := range samples {
		switch q.Index % 97 {
		case 5:
			continue
		}
		r.FirstToken(q.ID, nil)
		if q.ID%7 == 3 {
			r.Fail(q.ID, errors.New("failed"))
			continue
		}
		r.Complete(q.ID, nil, 3)
	}
}
func (mixedSUT) FlushQueries() {}
