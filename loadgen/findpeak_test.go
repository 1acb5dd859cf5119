package loadgen

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// findPeakRun runs a find-peak search against a single 1 ms server on the
// fake clock.
func findPeakRun(t *testing.T, opts Options) *Result {
	t.Helper()
	sut := &queueSUT{service: time.Millisecond, queue: make(chan work, 1<<20)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sut.serve(ctx)
	s := DefaultSettings()
	s.Scenario = Server
	s.Mode = FindPeakPerformance
	s.ServerTargetQPS = 300
	s.ServerTargetLatencyNs = 20_000_000
	s.MinDurationMs = 1000
	s.ServerFindPeakQPSDecimalsOfPrecision = 0
	opts.SpinWindow = -1
	res, err := Run(ctx, sut, &testQSL{total: 16, perf: 16}, s, &opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func passRecordCount(r *Result, i int) int {
	n := 0
	for range r.PassRecords(i) {
		n++
	}
	return n
}

// Only the reported probe keeps its records; every probe keeps its outcome,
// and the search itself (rates tried, verdicts, peak) is the same as when
// every record is kept.
func TestFindPeakKeepsRecordsOfTheReportedProbeOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lean := findPeakRun(t, Options{})
		full := findPeakRun(t, Options{KeepProbeRecords: true})
		if len(lean.Passes) != len(full.Passes) || lean.Summary.Effective.TargetQPS != full.Summary.Effective.TargetQPS {
			t.Fatalf("dropping records changed the search: %d passes, peak %v; with records %d passes, peak %v",
				len(lean.Passes), lean.Summary.Effective.TargetQPS, len(full.Passes), full.Summary.Effective.TargetQPS)
		}
		if lean.LostSamples != full.LostSamples {
			t.Errorf("lost samples %d, with every record kept %d", lean.LostSamples, full.LostSamples)
		}
		kept := 0
		for i, p := range lean.Passes {
			if p.Probe == nil {
				t.Fatalf("pass %d has no probe outcome", i)
			}
			if p.TargetQPS != full.Passes[i].TargetQPS || *p.Probe != func() ProbeOutcome { o := *full.Passes[i].Probe; o.RecordsDropped = !p.Reported; return o }() {
				t.Errorf("pass %d: probe %+v at %v qps, with every record kept %+v at %v qps", i, *p.Probe, p.TargetQPS, *full.Passes[i].Probe, full.Passes[i].TargetQPS)
			}
			n := passRecordCount(lean, i)
			if p.Reported {
				kept++
				if n == 0 || uint64(n) != p.Probe.Samples {
					t.Errorf("reported pass %d: %d records for %d samples", i, n, p.Probe.Samples)
				}
			} else if n != 0 || !p.Probe.RecordsDropped {
				t.Errorf("pass %d (not reported): %d records, dropped=%v", i, n, p.Probe.RecordsDropped)
			}
			if full.Passes[i].Probe.RecordsDropped || passRecordCount(full, i) == 0 {
				t.Errorf("KeepProbeRecords: pass %d lost its records", i)
			}
		}
		if kept != 1 {
			t.Errorf("%d passes kept their records, want 1", kept)
		}
		if lean.RecordCount() >= full.RecordCount() {
			t.Errorf("records: %d, with every probe's %d", lean.RecordCount(), full.RecordCount())
		}
	})
}

// A resolution ends the bisection once the bounds are that close, with an
// event saying so; LoadGen's own stopping point is still honoured.
func TestFindPeakResolution(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exact := findPeakRun(t, Options{})
		coarse := findPeakRun(t, Options{FindPeakResolution: 0.05})
		if len(coarse.Passes) >= len(exact.Passes) {
			t.Errorf("a 5 %% resolution ran %d probes, the exact search %d", len(coarse.Passes), len(exact.Passes))
		}
		var upper float64
		for _, p := range coarse.Passes {
			if !p.Probe.PerfConstraintsMet && (upper == 0 || p.TargetQPS < upper) {
				upper = p.TargetQPS
			}
		}
		peak := coarse.Summary.Effective.TargetQPS
		if upper-peak > 0.05*peak || !coarse.Summary.PerfConstraintsMet {
			t.Errorf("peak %v with the nearest failing probe at %v: not within 5 %%", peak, upper)
		}
		found := false
		for _, e := range coarse.Events {
			if s, ok := e.Value.(string); ok && strings.Contains(s, "within the resolution of 5 %") {
				found = true
			}
		}
		if !found {
			t.Error("no event says the search ended at the resolution")
		}
	})
}
