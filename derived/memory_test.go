package derived

import (
	"context"
	"runtime"
	"testing"

	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/sut/null"
)

// recomputeBytesPerRecord bounds what reading a bundle and regenerating
// its derived files (recompute.Check) may allocate for each record: the
// records held column by column (8 bytes a record for this run: the
// sample index and the completion time, 4 bytes each), the latencies of
// the reported pass (8), and room for small per-record scratch. Copying
// the records into a []loadgen.Record (96 bytes a record), or growing a
// slice of them by appending, goes far past it: before the records were
// held by column this allocated about 700 bytes a record.
const recomputeBytesPerRecord = 32

// TestRecomputeAllocationPerRecord reads and regenerates the bundles of
// two Offline runs, of n and 2n samples, and bounds the difference of
// what they allocate (runtime.MemStats.TotalAlloc, which does not depend
// on the machine's speed): what each further record costs, without the
// fixed costs (buffers, the report's page) that do not grow with the run.
func TestRecomputeAllocationPerRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("writes bundles of one and two million samples")
	}
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random (33 bytes a record under -race, 16 without)")
	}
	// n is past report's exactCDFLimit, so that the report keeps as
	// many latencies (its 8 MB for an exact CDF) for both runs.
	const n = 1 << 20
	allocated := func(samples int) uint64 {
		s := loadgen.DefaultSettings()
		s.Scenario = loadgen.Offline
		s.MinDurationMs = 0
		s.MinQueryCount = uint64(samples)
		s.OfflineExpectedQPS = 1
		res, err := loadgen.Run(context.Background(), null.SUT{}, null.QSL{Total: 1024}, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.RecordCount(); got != samples {
			t.Fatalf("the run has %d records, want %d", got, samples)
		}
		dir := t.TempDir()
		if err := Write(dir, &bundle.Bundle{Result: res, Version: "test"}); err != nil {
			t.Fatal(err)
		}
		res = nil
		work := t.TempDir()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Of(b).Regenerate(work); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(n), allocated(2*n)
	perRecord := (float64(large) - float64(small)) / n
	t.Logf("%d records: %d bytes allocated; %d records: %d; %.1f bytes a further record", n, small, 2*n, large, perRecord)
	if perRecord > recomputeBytesPerRecord {
		t.Errorf("recomputing allocates %.1f bytes a record, want at most %d", perRecord, recomputeBytesPerRecord)
	}
}
