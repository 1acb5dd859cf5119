package bundle

import (
	"aimeter/internal/golden"
	"bytes"
	"errors"
	"io"
	"iter"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"aimeter/loadgen"
)

// referenceRecords formats records.csv the plain way, one strconv call per
// field; the fast writer must produce exactly these bytes.
func referenceRecords(recs []loadgen.Record) []byte {
	b := []byte(RecordsHeader + "\n")
	field := func(t int64) {
		if t != loadgen.NoTime {
			b = strconv.AppendInt(b, t, 10)
		}
		b = append(b, ',')
	}
	for _, r := range recs {
		b = strconv.AppendUint(b, r.SeqID, 10)
		b = append(b, ',')
		b = strconv.AppendUint(b, r.QueryID, 10)
		b = append(b, ',')
		b = strconv.AppendUint(b, r.SampleIndex, 10)
		b = append(b, ',')
		field(r.ScheduledNs)
		field(r.IssuedNs)
		field(r.FirstTokenNs)
		field(r.CompletedNs)
		b = strconv.AppendInt(b, r.Tokens, 10)
		b = append(b, ',')
		b = append(b, r.Status.String()...)
		b = append(b, '\n')
	}
	return b
}

// randomRecords returns n records mixing small, typical and extreme
// values, NoTime times and every status.
func randomRecords(rng *rand.Rand, n int) []loadgen.Record {
	u := func() uint64 {
		switch rng.IntN(4) {
		case 0:
			return uint64(rng.IntN(100))
		case 1:
			return rng.Uint64()
		case 2:
			return []uint64{0, 9, 10, 99, 100, 999_999_999_999_999_999, 1e18, math.MaxUint64, math.MaxInt64 + 1}[rng.IntN(9)]
		}
		return uint64(rng.Int64N(1e12))
	}
	i := func() int64 {
		switch rng.IntN(5) {
		case 0:
			return loadgen.NoTime
		case 1:
			return int64(rng.Uint64())
		case 2:
			return []int64{0, -2, -10, math.MinInt64, math.MaxInt64, -999_999_999_999_999_999, 1e18}[rng.IntN(7)]
		}
		return rng.Int64N(1e11)
	}
	recs := make([]loadgen.Record, n)
	for k := range recs {
		recs[k] = loadgen.Record{SeqID: u(), QueryID: u(), SampleIndex: u(), ScheduledNs: i(), IssuedNs: i(),
			FirstTokenNs: i(), CompletedNs: i(), Tokens: i(), Status: loadgen.Status(1 + rng.IntN(3))}
		if recs[k].Tokens == loadgen.NoTime && rng.IntN(2) == 0 {
			recs[k].Tokens = 0
		}
	}
	return recs
}

func TestFastRecordsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		n, workers int
		why        string
	}{
		{0, 1, "header only"},
		{1, 4, "one record, fewer than a block"},
		{recordBlock - 1, 2, "just under one block"},
		{recordBlock, 2, "exactly one block: no empty trailing block"},
		{3*recordBlock + 17, 3, "several blocks and a partial one, more blocks than slots in flight"},
		{20*recordBlock + 5, 1, "one worker keeps the order trivially but must still reuse the slots"},
	} {
		recs := randomRecords(rng, tc.n)
		want := referenceRecords(recs)
		var got bytes.Buffer
		if err := writeRecords(&got, slices.Values(recs), tc.workers); err != nil {
			t.Fatalf("%s: %v", tc.why, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: fast writer differs from the reference formatter: %s", tc.why, golden.Diff(got.Bytes(), want))
			continue
		}
		// The chunked writer gives the same bytes however the records
		// are split and however many workers pull them.
		for _, split := range []struct{ chunks, workers int }{{1, 1}, {3, 2}, {17, 3}, {tc.n + 3, 2}} {
			var chunked bytes.Buffer
			if err := writeRecordChunks(&chunked, chunksOf(recs, split.chunks), split.workers); err != nil {
				t.Fatalf("%s: chunked: %v", tc.why, err)
			}
			if !bytes.Equal(chunked.Bytes(), want) {
				t.Errorf("%s: %d chunks on %d workers differ from the reference: %s", tc.why, split.chunks, split.workers, golden.Diff(chunked.Bytes(), want))
			}
		}
		for _, w := range []int{1, 3} {
			back, err := readRecords(bytes.NewReader(want), w)
			if err != nil {
				t.Fatalf("%s: reading back with %d workers: %v", tc.why, w, err)
			}
			if len(back) != len(recs) || (len(recs) > 0 && !reflect.DeepEqual(back, recs)) {
				t.Errorf("%s: read back with %d workers differs from what was written", tc.why, w)
			}
		}
	}
}

// oneByteReader hands out one byte per Read, the worst case for block
// splitting.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// TestParallelReadMatchesLineByLine checks readRecords against a plain
// line-by-line parse with parseRecord, for valid files and for a bad line
// placed at various depths (same records before it, same error).
func TestParallelReadMatchesLineByLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	good := referenceRecords(randomRecords(rng, 60_000)) // about 6 MB: several read blocks
	lines := strings.SplitAfter(string(good), "\n")
	lines = lines[:len(lines)-1]
	for _, tc := range []struct {
		at   int // line index (0 = header) replaced by bad
		bad  string
		why  string
		tail bool // drop the final newline
	}{
		{-1, "", "valid file", false},
		{-1, "", "valid file without final newline", true},
		{5, "1,2,3\n", "too few fields early", false},
		{len(lines) / 2, "1,2,3,4,5,,7,8,OK\n", "bad status in the middle, in a later block", false},
		{len(lines) - 1, "\n", "blank last line", false},
		{len(lines) - 1, "1,2,3,4,5,,7,8,lost", "unterminated valid last line", false},
		{20_000, strings.Repeat("7", 9000) + "\n", "over-long line inside a block", false},
		{30_000, "1,2,3,4,5,6,7,8,ok,\n", "ten fields", false},
		{0, "seq_id\n", "bad header", false},
		{40_000, "1,2,18446744073709551615,-9223372036854775808,5,,7,-1,error\n", "extremes taken by the slow path", false},
		{41_000, "1,2,3,9999999999999999999,5,,7,8,ok\n", "19 digits overflow a time: an error, not a wrapped value", false},
		{42_000, "1,2,3,4,5,,7,-9999999999999999999,ok\n", "19 digits overflow negative tokens", false},
	} {
		ls := slices.Clone(lines)
		if tc.at >= 0 {
			ls[tc.at] = tc.bad
		}
		in := strings.Join(ls, "")
		if tc.tail {
			in = strings.TrimSuffix(in, "\n")
		}
		wantRecs, wantErr := lineByLine(in)
		for _, w := range []int{1, 2, 5} {
			for _, r := range []io.Reader{strings.NewReader(in), oneByteReader{strings.NewReader(in)}} {
				if _, slow := r.(oneByteReader); slow && w != 2 {
					continue
				}
				got, err := readRecords(r, w)
				if !reflect.DeepEqual(err, wantErr) {
					t.Errorf("%s, %d workers: error %v, want %v", tc.why, w, err, wantErr)
				}
				if len(got) != len(wantRecs) || (len(got) > 0 && !slices.Equal(got, wantRecs)) {
					t.Errorf("%s, %d workers: %d records, want %d", tc.why, w, len(got), len(wantRecs))
				}
			}
		}
	}
}

// lineByLine is the reference reader: split into lines, check the header,
// parse each line with parseRecord.
func lineByLine(in string) ([]loadgen.Record, error) {
	if in == "" {
		return nil, &RecordsError{Line: 1, Msg: "empty file: missing header"}
	}
	ls := strings.SplitAfter(in, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	var recs []loadgen.Record
	for i, l := range ls {
		if len(l) > maxRecordLine {
			return recs, &RecordsError{Line: i + 1, Msg: "line longer than 4096 bytes"}
		}
		l = strings.TrimSuffix(l, "\n")
		if i == 0 {
			if l != RecordsHeader {
				return nil, &RecordsError{Line: 1, Msg: "header is " + strconv.Quote(truncateField([]byte(l))) + ", want " + strconv.Quote(RecordsHeader)}
			}
			continue
		}
		r, err := parseRecord([]byte(l), i+1)
		if err != nil {
			return recs, err
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// FuzzParseRecordFast: the fast row parser never accepts a line that
// parseRecord rejects, and agrees with it on every line it accepts.
func FuzzParseRecordFast(f *testing.F) {
	f.Add([]byte("1,2,3,4,5,,7,8,ok"))
	f.Add([]byte("1,2,3,-4,-5,-,7,-0,lost"))
	f.Add([]byte("999999999999999999,0,0,,,,,0,error"))
	f.Add([]byte("1,2,3,4,5,,7,,ok"))
	f.Add([]byte("1,2,3,9999999999999999999,5,,7,8,ok"))
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := parseRecordFast(line)
		if !ok {
			return
		}
		slow, err := parseRecord(line, 2)
		if err != nil {
			t.Fatalf("fast parser accepted %q, parseRecord says %v", line, err)
		}
		if fast != slow {
			t.Fatalf("%q: fast %+v, slow %+v", line, fast, slow)
		}
	})
}

type errReader struct{ n int }

func (e *errReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, errors.New("disk on fire")
	}
	k := min(len(p), e.n)
	copy(p, RecordsHeader+"\n")
	e.n -= k
	return k, nil
}

func TestReadRecordsPassesReadError(t *testing.T) {
	_, err := ReadRecords(&errReader{n: len(RecordsHeader) + 1})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("error %v, want the reader's error", err)
	}
}

func TestPutUintEveryLength(t *testing.T) {
	d := make([]byte, 21)
	for _, v := range []uint64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, math.MaxUint32, 1<<53 + 1, 1e19 - 1, 1e19, math.MaxUint64} {
		for _, w := range []uint64{v, v - 1, v + 1} { // also the neighbours of each power of ten
			n := putUint(d, w)
			if got, want := string(d[:n]), strconv.FormatUint(w, 10); got != want {
				t.Errorf("putUint(%d) = %q, want %q", w, got, want)
			}
		}
	}
	for k := range 20 {
		v := pow10[k]
		for _, w := range []uint64{v - 1, v, v + 1} {
			if n := putUint(d, w); string(d[:n]) != strconv.FormatUint(w, 10) {
				t.Errorf("putUint(%d) = %q", w, d[:n])
			}
		}
	}
	for _, v := range []int64{0, -1, -9, -10, math.MinInt64, math.MinInt64 + 1, math.MaxInt64} {
		if n := putInt(d, v); string(d[:n]) != strconv.FormatInt(v, 10) {
			t.Errorf("putInt(%d) = %q", v, d[:n])
		}
	}
}

// BenchmarkFormatOfflineBlock formats one block of rows shaped like an
// Offline run's (one query, tiny ids, completions up to a few seconds) on
// one goroutine: the per-row cost of the formatter alone.
func BenchmarkFormatOfflineBlock(b *testing.B) {
	recs := make([]loadgen.Record, recordBlock)
	for i := range recs {
		recs[i] = loadgen.Record{SeqID: 4_000_000 + uint64(i), SampleIndex: uint64(i*7919) % 1024, IssuedNs: 2243,
			FirstTokenNs: loadgen.NoTime, CompletedNs: 300_000_000 + int64(i)*40, Status: loadgen.StatusOK}
	}
	out := appendRecordBlock(nil, recs)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		out = appendRecordBlock(out[:0], recs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/row")
}

// chunksOf splits recs into n contiguous parts (some empty when n exceeds
// the records), as loadgen.Result.RecordChunks does.
func chunksOf(recs []loadgen.Record, n int) []iter.Seq[loadgen.Record] {
	out := make([]iter.Seq[loadgen.Record], n)
	size := (len(recs) + n - 1) / n
	for i := range out {
		lo, hi := min(i*size, len(recs)), min((i+1)*size, len(recs))
		out[i] = slices.Values(recs[lo:hi])
	}
	return out
}

// TestWriteRecordChunksStopsOnWriteError: a failed write is returned once
// and no goroutine is left behind waiting.
func TestWriteRecordChunksStopsOnWriteError(t *testing.T) {
	recs := randomRecords(rand.New(rand.NewPCG(3, 4)), 5*recordBlock)
	for _, at := range []int{0, 10, 200_000} {
		err := writeRecordChunks(&failWriter{n: at}, chunksOf(recs, 40), 3)
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("failing after %d bytes: err = %v, want the write error", at, err)
		}
	}
}
