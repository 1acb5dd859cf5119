package gbt

import "testing"

// TestStreamsAnswered: which results of the stream search answer it.
func TestStreamsAnswered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		r      StreamsResult
		linear bool
		want   bool
	}{
		{"every count up to the limit passed", StreamsResult{MaxStreams: 64, Stop: StopLimit}, false, true},
		{"no count passed", StreamsResult{FirstFail: 1}, false, false},
		{"no count passed, linear", StreamsResult{FirstFail: 1}, true, false},
		{"the linear procedure's first failure", StreamsResult{MaxStreams: 7, FirstFail: 8}, true, true},
		{"a confirmed bracket", StreamsResult{MaxStreams: 7, FirstFail: 9, Confirmed: true}, false, true},
		{"a confirmed bracket when the budget ran out", StreamsResult{MaxStreams: 7, FirstFail: 12, Confirmed: true, Stop: StopBudget}, false, true},
		{"probes that disagree", StreamsResult{MaxStreams: 7, FirstFail: 8, Stop: StopUnstable}, false, false},
		{"the budget ran out before any count failed", StreamsResult{MaxStreams: 16, Stop: StopBudget}, false, false},
		{"the budget ran out before the confirmation", StreamsResult{MaxStreams: 7, FirstFail: 8, Stop: StopBudget}, false, false},
	} {
		if got := tc.r.Answered(tc.linear); got != tc.want {
			t.Errorf("%s: answered %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStreamsLatestProbe(t *testing.T) {
	r := StreamsResult{Probes: []StreamProbe{{N: 4, Lost: 1}, {N: 8}, {N: 4, Lost: 2}}}
	if p := r.LatestProbe(4); p.Lost != 2 {
		t.Errorf("latest probe of 4 streams %+v, want the third", p)
	}
	if p := r.LatestProbe(5); p != (StreamProbe{N: 5}) {
		t.Errorf("a count never probed gave %+v", p)
	}
}

func TestSingleProbeResult(t *testing.T) {
	pass := SingleProbeResult(StreamProbe{N: 6, OK: true, Seconds: 2})
	fail := SingleProbeResult(StreamProbe{N: 6, Seconds: 2})
	if pass.MaxStreams != 6 || pass.FirstFail != 0 || pass.Seconds != 2 || len(pass.Probes) != 1 {
		t.Errorf("a passing probe: %+v", pass)
	}
	if fail.MaxStreams != 0 || fail.FirstFail != 6 || len(fail.Probes) != 1 {
		t.Errorf("a failing probe: %+v", fail)
	}
}
