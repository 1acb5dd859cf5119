package bundle

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/sut/null"
)

// TestRecordFileBacksAResult streams the records of a run over several row
// groups into a file, finishes it before Write (RecordStream.Finish), and
// reads them back as a Result's source: the records are the run's, Write
// lists the finished file as it is, and Read reads the bundle back.
func TestRecordFileBacksAResult(t *testing.T) {
	dir := t.TempDir()
	s := loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)
	s.MinQueryCount = 3*1024 + 17
	stream := NewRecordStream(dir)
	stream.rows = 1024 // several row groups
	res, err := loadgen.Run(context.Background(), null.SUT{}, null.QSL{Total: 256}, s, &loadgen.Options{RecordColumns: stream.AddColumns})
	if err != nil {
		stream.Discard()
		t.Fatal(err)
	}
	want := slices.Collect(res.Records())
	path, err := stream.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, RecordsFile) {
		t.Fatalf("Finish put the file at %s", path)
	}
	rf, err := OpenRecordFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rf.Len() != len(want) {
		t.Fatalf("OpenRecordFile counts %d records, the run has %d", rf.Len(), len(want))
	}
	res.AttachSource(rf)
	for range 2 { // read anew each time
		if got := slices.Collect(res.Records()); !slices.Equal(got, want) {
			t.Fatalf("the file's records differ from the run's (%d, want %d)", len(got), len(want))
		}
	}
	if err := Write(dir, &Bundle{Result: res, Version: "test", Records: stream}, nil); err != nil {
		t.Fatal(err)
	}
	if err := res.RecordSourceErr(); err != nil {
		t.Fatal(err)
	}
	back, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Collect(back.Result.Records()); !slices.Equal(got, want) {
		t.Fatalf("read back: %d records, want %d", len(got), len(want))
	}
}

// TestRecordFileErrors checks that a file that is missing or no records
// file is refused by name, and that one cut after it was opened ends the
// iteration with an error naming it.
func TestRecordFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenRecordFile(filepath.Join(dir, "none.parquet")); err == nil || !strings.Contains(err.Error(), "none.parquet") {
		t.Errorf("a missing file: %v", err)
	}
	junk := filepath.Join(dir, "junk.parquet")
	if err := os.WriteFile(junk, []byte("not parquet at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRecordFile(junk); err == nil || !strings.Contains(err.Error(), "junk.parquet") {
		t.Errorf("a file that is no Parquet: %v", err)
	}
	res, stream := streamedRun(t, dir, 2048)
	path, err := stream.Finish()
	if err != nil {
		t.Fatal(err)
	}
	rf, err := OpenRecordFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	res.AttachSource(rf)
	for range res.Records() {
	}
	if err := res.RecordSourceErr(); err == nil || !strings.Contains(err.Error(), RecordsFile) {
		t.Errorf("a file cut after it was opened: RecordSourceErr = %v", err)
	}
}
