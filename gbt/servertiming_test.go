package gbt

import (
	"testing"

	"aimeter/loadgen"
	"aimeter/sut/servertiming"
)

// TestServerTimingBreakdown: stage times from Server-Timing give the SUT-side
// metrics, and T_IT/T_IR are not computed on the SUT clock (IN-69).
func TestServerTimingBreakdown(t *testing.T) {
	records, _ := handRun()
	records = records[:3]
	headers := []string{
		"aimeter-dispatch;dur=1, aimeter-preprocess;dur=2, aimeter-inference;dur=30, aimeter-postprocess;dur=3, aimeter-first-token;dur=39",
		"aimeter-dispatch;dur=2, aimeter-inference;dur=10, aimeter-first-token;dur=13",
		"aimeter-dispatch;dur=6, aimeter-preprocess;dur=5, aimeter-inference;dur=60, aimeter-postprocess;dur=5, aimeter-first-token;dur=77",
	}
	stages := make([]loadgen.StageTimes, len(headers))
	for i, h := range headers {
		var bad int
		if stages[i], bad = servertiming.ParseStages(h); bad != 0 {
			t.Fatalf("header %d: %d malformed", i, bad)
		}
	}
	b := ComputeBreakdown(records, stages, BreakdownOptions{})
	if b.TIT.Available || b.TIT.Reason != ReasonClocksNotSynchronised || b.TIR.Available {
		t.Errorf("T_IT/T_IR from Server-Timing: %+v / %+v; want unavailable (IN-69)", b.TIT, b.TIR)
	}
	// As handRun, but with no gaps between stages: T_DIP = 1+2+30+3 = 36,
	// 2+10 = 12, 6+5+60+5 = 76.
	want := map[string]Stat{
		"T_DIS":    {N: 3, Min: 1, Mean: 3, P50: 2, P90: 6, P99: 6, Max: 6},
		"T_IN":     {N: 3, Min: 10, Mean: 100.0 / 3, P50: 30, P90: 60, P99: 60, Max: 60},
		"T_IP":     {N: 3, Min: 10, Mean: 115.0 / 3, P50: 35, P90: 70, P99: 70, Max: 70},
		"T_DIP":    {N: 3, Min: 12, Mean: 124.0 / 3, P50: 36, P90: 76, P99: 76, Max: 76},
		"T_ftoken": {N: 3, Min: 13, Mean: 43, P50: 39, P90: 77, P99: 77, Max: 77},
	}
	for _, ts := range []TimeStat{b.TDIS, b.TIN, b.TIP, b.TDIP, b.TFToken} {
		if !statEq(ts.Stat, want[ts.Symbol]) {
			t.Errorf("%s = %+v, want %+v", ts.Symbol, ts.Stat, want[ts.Symbol])
		}
	}
}
