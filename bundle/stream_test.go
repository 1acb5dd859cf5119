package bundle

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/sut/null"
)

// streamedRun runs a small Offline test whose records go to a stream in
// dir while it runs.
func streamedRun(t *testing.T, dir string, n uint64) (*loadgen.Result, *RecordStream) {
	return streamedRunBy(t, dir, n, false)
}

// streamedRunBy is streamedRun, the records sent by column
// (loadgen.Options.RecordColumns and AddColumns) when byColumn is set.
func streamedRunBy(t *testing.T, dir string, n uint64, byColumn bool) (*loadgen.Result, *RecordStream) {
	t.Helper()
	s := loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)
	s.MinQueryCount = n
	stream := NewRecordStream(dir)
	opts := &loadgen.Options{Records: stream.Add}
	if byColumn {
		opts = &loadgen.Options{RecordColumns: stream.AddColumns}
	}
	res, err := loadgen.Run(context.Background(), &loadgentest.WireSUT{}, null.QSL{Total: 256}, s, opts)
	if err != nil {
		stream.Discard()
		t.Fatal(err)
	}
	return res, stream
}

// tempFiles lists the temporary files left in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRecordStreamWritesTheSameBundle(t *testing.T) {
	// The records file written while the run went holds the records Write
	// would write at the end, and the manifest says so; so does the one of
	// records sent by column.
	for _, byColumn := range []bool{false, true} {
		t.Run(map[bool]string{false: "records", true: "columns"}[byColumn], func(t *testing.T) { checkStreamedBundle(t, byColumn) })
	}
}

func checkStreamedBundle(t *testing.T, byColumn bool) {
	dir := filepath.Join(t.TempDir(), "streamed")
	res, stream := streamedRunBy(t, dir, 150000, byColumn) // three row groups
	if stream.Count() != res.RecordCount() {
		t.Fatalf("%d records streamed, the result has %d", stream.Count(), res.RecordCount())
	}
	if err := Write(dir, &Bundle{Result: res, Version: "test", Records: stream}, nil); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "plain")
	if err := Write(plain, &Bundle{Result: res, Version: "test"}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatalf("the streamed bundle does not verify: %v", err)
	}
	want, err := Read(plain)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := slices.Collect(got.Result.Records()), slices.Collect(want.Result.Records()); !slices.Equal(a, b) || len(a) != res.RecordCount() {
		t.Fatalf("the streamed %s holds %d records, the one written at the end %d, and they differ", RecordsFile, len(a), len(b))
	}
	for _, name := range []string{SettingsFile, EventsFile} {
		if a, b := readAll(t, filepath.Join(dir, name)), readAll(t, filepath.Join(plain, name)); !bytes.Equal(a, b) {
			t.Errorf("%s differs", name)
		}
	}
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestRecordStreamNotThisResult(t *testing.T) {
	// A stream given with another result, or another directory, is
	// discarded and the records written as usual.
	dir := filepath.Join(t.TempDir(), "a")
	_, stream := streamedRun(t, dir, 20000)
	other, stream2 := streamedRun(t, filepath.Join(t.TempDir(), "b"), 10000)
	stream2.Discard()
	if err := Write(dir, &Bundle{Result: other, Version: "test", Records: stream}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.Result.RecordCount() != other.RecordCount() {
		t.Errorf("%d records in the bundle, the result written has %d", b.Result.RecordCount(), other.RecordCount())
	}
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	res3, stream3 := streamedRun(t, filepath.Join(t.TempDir(), "c"), 1000)
	if err := Write(elsewhere, &Bundle{Result: res3, Version: "test", Records: stream3}, nil); err != nil {
		t.Fatal(err)
	}
	b3, err := Read(elsewhere)
	if err != nil || b3.Result.RecordCount() != res3.RecordCount() {
		t.Errorf("the records were not written where Write was asked: %v", err)
	}
}

func TestRecordStreamDiscard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	_, stream := streamedRun(t, dir, 1000)
	stream.Discard()
	stream.Discard() // twice is harmless
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if _, err := os.Stat(filepath.Join(dir, RecordsFile)); err == nil {
		t.Error("a discarded stream left a records file")
	}
}
