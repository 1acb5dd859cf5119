package steady_test

import (
	"fmt"

	"aimeter/loadgen"
	"aimeter/steady"
)

// Find SGLang's in-flight window of four requests and measure it beside
// the whole run.
func ExampleInFlight() {
	ms := int64(1e6)
	rec := func(seq uint64, from, to int64) loadgen.Record {
		return loadgen.Record{SeqID: seq, ScheduledNs: from * ms, IssuedNs: from * ms, FirstTokenNs: loadgen.NoTime,
			CompletedNs: to * ms, Status: loadgen.StatusOK}
	}
	recs := []loadgen.Record{rec(0, 0, 100), rec(1, 20, 120), rec(2, 40, 60), rec(3, 110, 200)}
	w, err := steady.InFlight(recs, 0.5)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("peak %d, at least %d in flight from %d to %d ms\n", w.Peak, w.Threshold, w.StartNs/ms, w.EndNs/ms)
	in := steady.Measure(recs, w.Samples, w.EndNs-w.StartNs)
	all := steady.Measure(recs, nil, 200*ms)
	fmt.Printf("window: %d samples, p50 latency %d ms; whole run: %d samples, p50 latency %d ms\n",
		in.Samples, in.Latency[0]/ms, all.Samples, all.Latency[0]/ms)
	// Output:
	// peak 3, at least 2 in flight from 20 to 100 ms
	// window: 2 samples, p50 latency 100 ms; whole run: 4 samples, p50 latency 100 ms
}
