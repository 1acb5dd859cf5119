package bundle

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
	"aimeter/sut/null"
)

// headRun writes an Offline run of 4 row groups of records (262,144
// samples and more) into a new directory.
func headRun(t *testing.T, edit func(recs []loadgen.Record)) (string, *loadgen.Result) {
	t.Helper()
	s := loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly)
	s.OfflineExpectedQPS, s.MinDurationMs = 240_000, 1000
	res, err := loadgen.Run(context.Background(), &loadgentest.SyncSUT{}, null.QSL{Total: 256}, s, &loadgen.Options{SpinWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		recs := slices.Collect(res.Records())
		edit(recs)
		res.AttachRecords(recs)
	}
	dir := t.TempDir()
	if err := Write(dir, &Bundle{Result: res, Version: "test"}, nil); err != nil {
		t.Fatal(err)
	}
	return dir, res
}

// TestReadHeadScanRecords reads a bundle's head and streams its records:
// the same settings, counters and records as Read, a row group at a time;
// a bad record deep in the file is refused with Read's error, naming its
// row in the whole file.
func TestReadHeadScanRecords(t *testing.T) {
	dir, _ := headRun(t, nil)
	whole, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	head, err := ReadHead(dir, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if head.Result.RecordCount() != 0 || head.Result.Summary != nil {
		t.Fatalf("the head holds %d records and a summary %v", head.Result.RecordCount(), head.Result.Summary != nil)
	}
	if !reflect.DeepEqual(head.Result.Passes, whole.Result.Passes) || head.Result.Effective != whole.Result.Effective ||
		head.Version != whole.Version || !reflect.DeepEqual(head.Result.Accuracy, whole.Result.Accuracy) {
		t.Fatal("the head's settings, passes or accuracy log differ from Read's")
	}
	var got []loadgen.Record
	groups := 0
	if err := head.ScanRecords(ScanOptions{}, func(c *loadgen.RecordColumns) error {
		groups++
		for i := range c.Len() {
			got = append(got, c.Record(i))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := slices.Collect(whole.Result.Records()); !slices.Equal(got, want) || groups < 4 {
		t.Fatalf("ScanRecords gave %d records in %d row groups; Read %d", len(got), groups, len(want))
	}
	stop := errors.New("stop")
	if err := head.ScanRecords(ScanOptions{}, func(*loadgen.RecordColumns) error { return stop }); err != stop {
		t.Errorf("fn's error: ScanRecords returned %v", err)
	}

	bad := 200_000
	dir, _ = headRun(t, func(recs []loadgen.Record) { recs[bad].IssuedNs = recs[bad].ScheduledNs - 1 })
	_, readErr := Read(dir)
	head, err = ReadHead(dir, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := head.ScanRecords(ScanOptions{Unchecked: true}, func(*loadgen.RecordColumns) error { return nil }); err != nil {
		t.Errorf("unchecked, the bad record is read: %v", err)
	}
	scanErr := head.ScanRecords(ScanOptions{}, func(*loadgen.RecordColumns) error { return nil })
	var re *RecordsError
	if readErr == nil || !errors.As(scanErr, &re) || re.Line != bad+1 || !strings.Contains(readErr.Error(), scanErr.Error()) {
		t.Errorf("a bad record at row %d: ScanRecords %v; Read %v", bad+1, scanErr, readErr)
	}
}
