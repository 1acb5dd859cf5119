package bundle

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"aimeter/loadgen"
)

// sideRun writes, into a new directory, headRun's run (4 row groups of
// records) with sample data on most records (a node on some) and token
// times on every third, and returns the directory, its records and
// traces.
func sideRun(t *testing.T) (string, []loadgen.Record, []loadgen.TokenTrace) {
	t.Helper()
	dir, res := headRun(t, func(recs []loadgen.Record) {
		for i := range recs {
			if i%7 != 0 {
				recs[i].RequestBytes, recs[i].ResponseBytes = int64(100+i%50), int64(i%1000)
			}
			if i%11 == 0 {
				recs[i].Node = 1 + uint32(i%3)
			}
		}
	})
	recs := slices.Collect(res.Records())
	var traces []loadgen.TokenTrace
	for _, r := range recs {
		if r.SeqID%3 == 0 {
			traces = append(traces, loadgen.TokenTrace{SeqID: r.SeqID, TimesNs: []int64{r.IssuedNs + int64(r.SeqID*7919%10007), r.IssuedNs + int64(r.SeqID*104729%100003) + 10007}})
		}
	}
	res.AttachTokenTimes(traces)
	if err := Write(dir, &Bundle{Result: res, Version: "test"}, nil); err != nil {
		t.Fatal(err)
	}
	return dir, recs, traces
}

// TestSideFilesStreamed checks the streamed per-sample files: a head's
// ScanWholeRecords and ScanTokens give what Read reads; samples.parquet and
// tokens.parquet written beside a RecordStream are the bytes Write
// writes from the Result, Write lists them as they are; and a
// RecordFile with the samples joined and a TokenFile give a Result the
// records (sample data included) and token times of the run.
func TestSideFilesStreamed(t *testing.T) {
	dir, recs, traces := sideRun(t)
	head, err := ReadHead(dir, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := head.HeadLeaves(); !slices.Equal(got, []string{SamplesFile, TokensFile}) {
		t.Fatalf("HeadLeaves = %v", got)
	}
	var whole []loadgen.Record
	groups := 0
	if err := head.ScanWholeRecords(ScanOptions{}, func(rs []loadgen.Record) error { groups++; whole = append(whole, rs...); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(whole, recs) || groups < len(recs)/wholeBlock {
		t.Fatalf("ScanWholeRecords: %d records in %d blocks, want Read's %d in %d or more", len(whole), groups, len(recs), len(recs)/wholeBlock)
	}
	got := map[uint64][]int64{}
	if err := head.ScanTokens(func(seq uint64, times []int64) error { got[seq] = slices.Clone(times); return nil }); err != nil {
		t.Fatal(err)
	}
	want := map[uint64][]int64{}
	for _, tt := range traces {
		want[tt.SeqID] = tt.TimesNs
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("ScanTokens: %d samples, want %d, or times differ", len(got), len(want))
	}

	// The run again, its files streamed into another directory.
	out := t.TempDir()
	stream := NewRecordStream(out)
	stream.Add(recs)
	if err := stream.WriteSamples(slices.Values(recs)); err != nil {
		t.Fatal(err)
	}
	if err := stream.WriteTokens(func(yield func(uint64, []int64) bool) {
		for _, tt := range traces {
			if !yield(tt.SeqID, tt.TimesNs) {
				return
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	rf := finishedFile(t, stream)
	if err := rf.AttachSamples(filepath.Join(out, SamplesFile)); err != nil {
		t.Fatal(err)
	}
	tf, err := OpenTokenFile(filepath.Join(out, TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	res := &loadgen.Result{}
	*res = *head.Result // the head's settings and passes; no records
	res.AttachSource(rf)
	res.AttachTokenSource(tf)
	if got := slices.Collect(res.Records()); !slices.Equal(got, recs) {
		t.Fatalf("the files' whole records differ from the run's (%d, want %d)", len(got), len(recs))
	}
	if !maps.EqualFunc(maps.Collect(res.TokenTimes()), want, slices.Equal) {
		t.Fatal("the token file's times differ from the run's")
	}
	if err := Write(out, &Bundle{Result: res, Version: "test", Records: stream}, nil); err != nil {
		t.Fatal(err)
	}
	if err := res.RecordSourceErr(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{SamplesFile, TokensFile} {
		a, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			t.Errorf("%s streamed differs from the one Write wrote from the Result", name)
		}
	}
	back, err := Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Collect(back.Result.Records()); !slices.Equal(got, recs) {
		t.Fatal("the streamed bundle reads back other records")
	}
}

// TestSideFilesErrors checks that a samples file whose rows are not the
// records' is refused naming it, and that a discarded stream removes the
// files written beside it.
func TestSideFilesErrors(t *testing.T) {
	_, recs, _ := sideRun(t)
	out := t.TempDir()
	stream := NewRecordStream(out)
	stream.Add(recs)
	shuffled := slices.Clone(recs)
	shuffled[0], shuffled[len(shuffled)-1] = shuffled[len(shuffled)-1], shuffled[0]
	if err := stream.WriteSamples(slices.Values(shuffled)); err != nil {
		t.Fatal(err)
	}
	rf := finishedFile(t, stream)
	if err := rf.AttachSamples(filepath.Join(out, SamplesFile)); err == nil || !strings.Contains(err.Error(), SamplesFile) {
		t.Errorf("samples out of the records' order: AttachSamples = %v", err)
	}

	gone := t.TempDir()
	s := NewRecordStream(gone)
	s.Add(recs[:10])
	if err := s.WriteSamples(slices.Values(recs[:10])); err != nil {
		t.Fatal(err)
	}
	s.Discard()
	if _, err := os.Stat(filepath.Join(gone, SamplesFile)); !os.IsNotExist(err) {
		t.Errorf("a discarded stream left %s: %v", SamplesFile, err)
	}
}

// finishedFile finishes stream's records file and opens it.
func finishedFile(t *testing.T, stream *RecordStream) *RecordFile {
	t.Helper()
	path, err := stream.Finish()
	if err != nil {
		t.Fatal(err)
	}
	rf, err := OpenRecordFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return rf
}
