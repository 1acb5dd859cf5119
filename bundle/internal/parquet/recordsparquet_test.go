package parquet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"aimeter/loadgen"
)

// parquetFixture is a few records with every kind of value: NoTime
// (null) times, each status, extremes.
func parquetFixture() []loadgen.Record {
	return []loadgen.Record{
		{SeqID: 0, QueryID: 0, SampleIndex: 5, ScheduledNs: 0, IssuedNs: 10, FirstTokenNs: loadgen.NoTime, CompletedNs: 99, Tokens: 0, Status: loadgen.StatusOK},
		{SeqID: 1, QueryID: 0, SampleIndex: 0, ScheduledNs: loadgen.NoTime, IssuedNs: 11, FirstTokenNs: 12, CompletedNs: 13, Tokens: 7, Status: loadgen.StatusError},
		{SeqID: 2, QueryID: 1, SampleIndex: math.MaxUint64, ScheduledNs: math.MaxInt64, IssuedNs: math.MinInt64, FirstTokenNs: loadgen.NoTime, CompletedNs: loadgen.NoTime, Tokens: -3, Status: loadgen.StatusLost},
		{SeqID: math.MaxUint64, QueryID: math.MaxUint64, SampleIndex: 1, ScheduledNs: 5, IssuedNs: 6, FirstTokenNs: 7, CompletedNs: 8, Tokens: math.MaxInt64, Status: loadgen.StatusOK},
		{SeqID: 7, QueryID: 3, SampleIndex: 2, ScheduledNs: -5, IssuedNs: 1 << 40, FirstTokenNs: 1<<40 + 1, CompletedNs: 1<<41 + 3, Tokens: 1, Status: loadgen.StatusOK},
	}
}

func TestRecordsParquetRoundTrip(t *testing.T) {
	want := parquetFixture()
	for _, opts := range []RecordWriterOptions{{}, {RowGroupRows: 1}, {RowGroupRows: 2, Compression: "snappy"}, {Compression: "none"}} {
		var buf bytes.Buffer
		rw := NewRecordWriter(&buf, opts)
		// In chunks of every size, as a run hands them over.
		for lo := 0; lo < len(want); lo += 2 {
			if err := rw.Write(want[lo:min(lo+2, len(want))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := rw.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := ReadRecords(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("%+v: %v", opts, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%+v: read back\n%v\nwant\n%v", opts, got, want)
		}
	}
	var empty bytes.Buffer
	if err := WriteRecords(&empty, nil, RecordWriterOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadRecords(bytes.NewReader(empty.Bytes())); err != nil || len(got) != 0 {
		t.Errorf("no records read back as %v, %v", got, err)
	}
	if err := WriteRecords(&empty, want, RecordWriterOptions{Compression: "brotli"}); err == nil {
		t.Error("an unknown compression was accepted")
	}
}

// TestRecordsParquetChunksMatchSerial: the row groups encoded on several
// workers hold the records a single writer writes.
func TestRecordsParquetChunksMatchSerial(t *testing.T) {
	recs := benchRecords()[:100_003]
	chunks := [][]loadgen.Record{recs[:40_000], recs[40_000:40_001], recs[40_001:40_001], recs[40_001:]}
	var fills []func(*loadgen.RecordColumns)
	for _, c := range chunks {
		fills = append(fills, func(cols *loadgen.RecordColumns) { cols.Append(c...) })
	}
	for _, workers := range []int{1, 3} {
		var buf bytes.Buffer
		if err := writeParquetChunks(&buf, fills, RecordWriterOptions{}, workers); err != nil {
			t.Fatal(err)
		}
		got, err := ReadRecords(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, recs) {
			t.Errorf("%d workers: the records differ", workers)
		}
	}
}

// FuzzReadRecordsParquet: the reader returns records or an error for any
// input, never panics, and what it accepts writes back to the same
// records.
func FuzzReadRecordsParquet(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteRecords(&buf, parquetFixture(), RecordWriterOptions{RowGroupRows: 2}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	buf.Reset()
	if err := WriteRecords(&buf, parquetFixture()[:1], RecordWriterOptions{Compression: "none"}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := decodeRecordsParquet(data, 2)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteRecords(&out, recs, RecordWriterOptions{}); err != nil {
			t.Fatal(err)
		}
		again, err := ReadRecords(&out)
		if err != nil || !slices.Equal(again, recs) {
			t.Fatalf("accepted records do not round-trip: %v", err)
		}
	})
}

// BenchmarkWriteRecordsParquet writes the million records of
// BenchmarkWriteRecords as records.parquet, on every core as a bundle
// does (WriteResultRecords).
func BenchmarkWriteRecordsParquet(b *testing.B) {
	for _, codec := range []string{"zstd", "snappy"} {
		b.Run(codec, func(b *testing.B) {
			recs := benchRecords()
			opts := RecordWriterOptions{Compression: codec}
			res := &loadgen.Result{}
			res.AttachRecords(recs)
			var size countWriter
			if err := WriteResultRecords(&size, res, opts); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := WriteResultRecords(io.Discard, res, opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/row")
			b.ReportMetric(float64(size)/float64(len(recs)), "B/row")
		})
	}
}

// BenchmarkReadRecordsParquet reads back the file of
// BenchmarkWriteRecordsParquet; run with -cpu 1 for one core.
func BenchmarkReadRecordsParquet(b *testing.B) {
	for _, codec := range []string{"zstd", "snappy"} {
		b.Run(codec, func(b *testing.B) {
			recs := benchRecords()
			var buf bytes.Buffer
			if err := WriteRecords(&buf, recs, RecordWriterOptions{Compression: codec}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := ReadRecords(bytes.NewReader(buf.Bytes())); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/row")
			b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrec/s")
		})
	}
}

// TestRecordsParquetFastPath: every row group RecordWriter writes is
// decoded by pqDecoder, not left to the library, for every codec.
func TestRecordsParquetFastPath(t *testing.T) {
	for _, codec := range []string{"zstd", "snappy", "none"} {
		var buf bytes.Buffer
		if err := WriteRecords(&buf, parquetFixture(), RecordWriterOptions{RowGroupRows: 2, Compression: codec}); err != nil {
			t.Fatal(err)
		}
		f, err := openRecordsParquet(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		dec := &pqDecoder{data: buf.Bytes()}
		var rc loadgen.RecordColumns
		var got []loadgen.Record
		for g := range f.Metadata().RowGroups {
			if err := dec.decodeGroupSafe(&f.Metadata().RowGroups[g], &rc); err != nil {
				t.Fatalf("%s: row group %d: %v", codec, g, err)
			}
			for i := range rc.Len() {
				got = append(got, rc.Record(i))
			}
		}
		if !slices.Equal(got, parquetFixture()) {
			t.Errorf("%s: decoded\n%v\nwant\n%v", codec, got, parquetFixture())
		}
	}
}

// TestRecordsParquetOtherWriter: a file with the records schema but pages
// that aimeter does not write (the library's DATA_PAGE v1, PLAIN and
// dictionary encodings) is read by the library's page reader, to the same
// records, by both readers.
func TestRecordsParquetOtherWriter(t *testing.T) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[pqRow](&buf, recordsSchema, parquet.DataPageVersion(1))
	want := parquetFixture()
	rows := make([]pqRow, len(want))
	for i := range want {
		r := &want[i]
		rows[i] = pqRow{SeqID: r.SeqID, QueryID: r.QueryID, SampleIndex: r.SampleIndex,
			ScheduledNs: timePtr(&r.ScheduledNs), IssuedNs: timePtr(&r.IssuedNs),
			FirstTokenNs: timePtr(&r.FirstTokenNs), CompletedNs: timePtr(&r.CompletedNs),
			Tokens: r.Tokens, Status: int8(r.Status)}
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := openRecordsParquet(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var rc loadgen.RecordColumns
	if err := (&pqDecoder{data: buf.Bytes()}).decodeGroupSafe(&f.Metadata().RowGroups[0], &rc); !errors.Is(err, errOtherPages) {
		t.Fatalf("pqDecoder on v1 pages: %v, want errOtherPages", err)
	}
	got, err := ReadRecords(bytes.NewReader(buf.Bytes()))
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("ReadRecords: %v, %v; want %v", got, err, want)
	}
	var cols []loadgen.Record
	err = DecodeRecordColumns(buf.Bytes(), func(c *loadgen.RecordColumns) error {
		for i := range c.Len() {
			cols = append(cols, c.Record(i))
		}
		return nil
	})
	if err != nil || !slices.Equal(cols, want) {
		t.Errorf("DecodeRecordColumns: %v, %v; want %v", cols, err, want)
	}
}

// BenchmarkDecodeRecordColumns decodes the file of
// BenchmarkReadRecordsParquet by column (DecodeRecordColumns), on one
// goroutine: the record file's own decoding speed, without building a
// loadgen.Record a sample.
func BenchmarkDecodeRecordColumns(b *testing.B) {
	for _, kind := range []string{"offline", "server"} {
		for _, codec := range []string{"zstd", "snappy"} {
			b.Run(kind+"/"+codec, func(b *testing.B) { benchDecode(b, kind, codec) })
		}
	}
}

// serverRecords is a million Server-like records: Poisson arrivals at
// 100 k/s, issue delays of a few microseconds, log-normal-ish latencies
// and random samples, so that the columns compress as a real run's do.
func serverRecords() []loadgen.Record {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]loadgen.Record, 1_000_000)
	t := int64(0)
	for i := range recs {
		t += int64(rng.ExpFloat64() * 10_000)
		lat := int64(math.Exp(13 + rng.NormFloat64()*0.5))
		recs[i] = loadgen.Record{SeqID: uint64(i), QueryID: uint64(i), SampleIndex: uint64(rng.IntN(24576)),
			ScheduledNs: t, IssuedNs: t + int64(rng.IntN(5000)), FirstTokenNs: loadgen.NoTime,
			CompletedNs: t + lat, Tokens: 0, Status: loadgen.StatusOK}
	}
	return recs
}

func benchDecode(b *testing.B, kind, codec string) {
	recs := benchRecords()
	if kind == "server" {
		recs = serverRecords()
	}
	var buf bytes.Buffer
	if err := WriteRecords(&buf, recs, RecordWriterOptions{Compression: codec}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		n := 0
		if err := DecodeRecordColumns(buf.Bytes(), func(c *loadgen.RecordColumns) error { n += c.Len(); return nil }); err != nil || n != len(recs) {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrec/s")
	b.ReportMetric(float64(buf.Len())/float64(len(recs)), "B/rec")
}

// timePtr is p, or nil when *p is loadgen.NoTime.
func timePtr(p *int64) *int64 {
	if *p == loadgen.NoTime {
		return nil
	}
	return p
}

// TestRecordsParquetLyingRowCount: a footer whose row count is not what
// its row groups hold is refused before anything is decoded; a reader
// that sizes its memory by the footer (the tester's service admits an
// upload by it) can then trust it.
func TestRecordsParquetLyingRowCount(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteRecords(&buf, parquetFixture(), RecordWriterOptions{RowGroupRows: 2}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	n := len(data)
	footerLen := int(binary.LittleEndian.Uint32(data[n-8 : n-4]))
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[n-8-footerLen:n-8], &md); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rows int64
		why  string
	}{
		{1, "fewer than the groups hold: an estimate by it would be too small"},
		{md.NumRows + 1, "more than the groups hold"},
	} {
		lie := md
		lie.NumRows = tc.rows
		footer, err := thrift.Marshal(new(thrift.CompactProtocol), &lie)
		if err != nil {
			t.Fatal(err)
		}
		file := append(slices.Clone(data[:n-8-footerLen]), footer...)
		file = binary.LittleEndian.AppendUint32(file, uint32(len(footer)))
		file = append(file, "PAR1"...)
		if _, err := ReadRecords(bytes.NewReader(file)); err == nil || !strings.Contains(err.Error(), "the footer says") {
			t.Errorf("num_rows %d (%s): %v, want a refusal naming the footer's row count", tc.rows, tc.why, err)
		}
	}
}
