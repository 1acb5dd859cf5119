package cli

import (
	"path/filepath"
	"testing"
	"time"

	"aimeter/gbt"
)

// TestGBTRecordsEveryLifecycleEvent runs a GB/T test and checks that the
// result file holds every event of 7.7.1 j) 1) (GB-7.7.1-j-1), in the
// clause's order, the upload marked when the bundle was written, and the
// precision of a null SUT, which computes nothing, left to --info.
func TestGBTRecordsEveryLifecycleEvent(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, "", "run", "--sut", "null-async", "-q", "--output-dir", dir, "--arrival-mode", "1", "--period", "50ms", "--jobs-per-period", "2", "--duration", "200ms")
	if r.code != ExitOK {
		t.Fatal(r)
	}
	res, err := readGBTResult(filepath.Join(dir, "gbt_result.json"))
	if err != nil {
		t.Fatal(err)
	}
	ev := res.Lifecycle
	clause := []gbt.LifecycleEvent{gbt.EventTestStart, gbt.EventDatasetLoadStart, gbt.EventDatasetLoadEnd, gbt.EventTestEnd, gbt.EventResultUploadComplete}
	var prev time.Time
	for _, e := range clause {
		at := ev.Time(e)
		if at.IsZero() {
			t.Errorf("lifecycle event %s missing: %+v", e, ev)
			continue
		}
		if at.Before(prev) {
			t.Errorf("lifecycle event %s at %v before the previous one at %v", e, at, prev)
		}
		prev = at
	}
	if err := ev.Validate(); err != nil {
		t.Error(err)
	}
	if len(res.Precision) != 0 {
		t.Errorf("null SUT precision %v without --info", res.Precision)
	}
}
