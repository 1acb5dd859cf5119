package loadgen_test

import (
	"context"
	"fmt"
	"time"

	"aimeter/loadgen"
)

// Two chat sessions as chained queries: session A (samples 0, 1) starts at
// once, session B (samples 2, 3) 5 ms later; each second turn is sent 20 ms
// after its first turn's answer completed, and its latency counts from
// that moment.
func Example_chains() {
	ms := int64(time.Millisecond)
	s := loadgen.DefaultSettings()
	s.Scenario = loadgen.Server
	s.MinDurationMs, s.MinQueryCount = 0, 4
	res, err := loadgen.Run(context.Background(), echoSUT{}, memQSL{n: 4}, s, &loadgen.Options{Chains: &loadgen.Chains{
		After:   []int32{-1, 0, -1, 2},
		Delay:   []int64{0, 20 * ms, 5 * ms, 20 * ms},
		Samples: []uint64{0, 1, 2, 3},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	done := map[uint64]int64{}
	for r := range res.Records() {
		done[r.SampleIndex] = r.CompletedNs
	}
	for r := range res.Records() {
		switch r.SampleIndex {
		case 1, 3:
			fmt.Printf("sample %d scheduled 20 ms after sample %d completed: %v\n", r.SampleIndex, r.SampleIndex-1, r.ScheduledNs == done[r.SampleIndex-1]+20*ms)
		default:
			fmt.Printf("sample %d scheduled at %d ms\n", r.SampleIndex, r.ScheduledNs/ms)
		}
	}
	// Output:
	// sample 0 scheduled at 0 ms
	// sample 1 scheduled 20 ms after sample 0 completed: true
	// sample 2 scheduled at 5 ms
	// sample 3 scheduled 20 ms after sample 2 completed: true
}
