package gbt_test

import (
	"fmt"
	"os"
	"time"

	"aimeter/gbt"
	"aimeter/loadgen"
)

// Evaluate computes a test's metrics from its description and records:
// here three hand-made jobs of a fixed-period test with a 1 s timeout, the
// second of which was lost.
func ExampleEvaluate() {
	ms := int64(time.Millisecond)
	rec := func(seq uint64, issued, completed int64, st loadgen.Status) loadgen.Record {
		return loadgen.Record{SeqID: seq, QueryID: seq, ScheduledNs: issued, IssuedNs: issued,
			CompletedNs: completed, FirstTokenNs: loadgen.NoTime, Status: st}
	}
	test := &gbt.Test{
		Arrival:       gbt.Arrival{Mode: gbt.ModeFixedPeriod, Period: 500 * time.Millisecond, N: 1, Duration: 1500 * time.Millisecond, Timeout: time.Second},
		LossThreshold: 0.01,
		Start:         time.Date(2024, 11, 28, 9, 30, 0, 0, time.UTC),
		EndNs:         2000 * ms,
	}
	run := gbt.RunData{Test: test, Main: gbt.RunPart{Records: []loadgen.Record{
		rec(0, 0, 200*ms, loadgen.StatusOK),
		rec(1, 500*ms, loadgen.NoTime, loadgen.StatusLost),
		rec(2, 1000*ms, 1400*ms, loadgen.StatusOK),
	}}}
	m, err := gbt.Evaluate(run)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("mode %d (%s)\n", test.Arrival.Mode, test.Arrival.Mode)
	fmt.Printf("T_TI mean %.0f ms over %d samples\n", m.Time.TTI.Stat.Mean, m.Time.TTI.Stat.N)
	fmt.Printf("throughput %.3f samples/s (%s)\n", m.Throughput.SamplesPerSecond, m.Throughput.Basis)
	fmt.Printf("lost %d of %d: rate %.4f, valid %v\n", m.Loss.Lost, m.Loss.Sent, m.Loss.Rate, m.Loss.Valid)
	// The inference log of 7.3 f) follows from the same inputs.
	if err := gbt.WriteInferenceLog(os.Stdout, test, run.Main.Records); err != nil {
		fmt.Println(err)
	}
	// Output:
	// mode 1 (fixed-period)
	// T_TI mean 300 ms over 2 samples
	// throughput 1.429 samples/s (tester_span)
	// lost 1 of 3: rate 0.3333, valid false
	// [2024:11:28 09:30:01]-[--]-[1]-[1]-[0]
	// [2024:11:28 09:30:02]-[--]-[2]-[2]-[1]
	// [2024:11:28 09:30:02]-[--]-[2]-[2]-[1]
}
