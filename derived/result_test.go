package derived

import (
	"testing"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
)

// TestSampleCountsMatchTheRecords: result.json's counts, taken from the
// summary, are the records' statuses in the reported pass, in a run with
// failures in every scenario.
func TestSampleCountsMatchTheRecords(t *testing.T) {
	for _, sc := range []loadgen.Scenario{loadgen.SingleStream, loadgen.MultiStream, loadgen.Server, loadgen.Offline} {
		b := runBundle(t, &loadgentest.WireSUT{}, loadgentest.SmallSettings(sc, loadgen.PerformanceOnly))
		var want SampleCounts
		for r := range b.Result.Records() {
			want.Issued++
			switch r.Status {
			case loadgen.StatusOK:
				want.OK++
			case loadgen.StatusError:
				want.Failed++
			case loadgen.StatusLost:
				want.Lost++
			}
		}
		want.ErrorRate = float64(want.Failed) / float64(want.Issued)
		if got := sampleCounts(b.Result); got != want || want.Failed == 0 {
			t.Errorf("%v: counts %+v, the records %+v", sc, got, want)
		}
	}
}
