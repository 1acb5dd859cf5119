package loadgen

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestLossDecidedByTimestamp checks GB-7.4.1-d/e and IN-63 in every
// scenario that applies a sample timeout: a result 1 ns after issue +
// threshold is lost, 1 ns before it is ok. The SUT completes inside
// IssueQuery, so no timer of the issuer can act first in SingleStream
// (GB/T arrival mode 0): only the timestamps can decide.
func TestLossDecidedByTimestamp(t *testing.T) {
	const timeout = 2 * time.Second
	for _, tc := range []struct {
		name     string
		scenario Scenario
		delay    time.Duration
		want     Status
	}{
		{"mode 0, 1 ns before the deadline is ok", SingleStream, timeout - 1, StatusOK},
		{"mode 0, 1 ns after the deadline is lost", SingleStream, timeout + 1, StatusLost},
		{"Server (modes 1 and 2), 1 ns before is ok", Server, timeout - 1, StatusOK},
		{"Server (modes 1 and 2), 1 ns after is lost", Server, timeout + 1, StatusLost},
		{"Offline, 1 ns before is ok", Offline, timeout - 1, StatusOK},
		{"Offline, 1 ns after is lost", Offline, timeout + 1, StatusLost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := DefaultSettings()
				s.Scenario = tc.scenario
				s.MinDurationMs = 0
				s.MinQueryCount = 3
				s.ServerTargetQPS = 0.1
				s.OfflineExpectedQPS = 1
				sut := funcSUT{issue: func(r *Responder, samples []QuerySample) {
					time.Sleep(tc.delay)
					for _, smp := range samples {
						r.Complete(smp.ID, nil, 0)
					}
				}}
				res, err := Run(context.Background(), sut, &testQSL{total: 4, perf: 4}, s, &Options{SampleTimeout: timeout, SpinWindow: -1})
				if err != nil {
					t.Fatal(err)
				}
				n, lost := 0, 0
				for r := range res.Records() {
					n++
					if r.Status != tc.want {
						t.Fatalf("sample issued at %d completed at %d: %s, want %s", r.IssuedNs, r.CompletedNs, r.Status, tc.want)
					}
					if r.Status == StatusLost {
						lost++
					}
				}
				if n == 0 || res.LostSamples != uint64(lost) {
					t.Fatalf("%d records, %d lost, LostSamples %d", n, lost, res.LostSamples)
				}
				if tc.want == StatusLost && (res.DuplicateCompletions != 0 || res.LateCompletions != uint64(lost)) {
					t.Errorf("%d late and %d duplicate completions, want %d late and none duplicate", res.LateCompletions, res.DuplicateCompletions, lost)
				}
			})
		})
	}
}
