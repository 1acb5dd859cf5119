package loadgentest_test

import (
	"context"
	"fmt"
	"time"

	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
)

// A SingleStream run against a SUT that answers every sample after 1 ms,
// with a QSL of 16 samples that records what loadgen loaded. (In a test,
// run it inside testing/synctest's synctest.Test to make every time in
// the result exact.)
func Example() {
	s := loadgentest.SmallSettings(loadgen.SingleStream, loadgen.PerformanceOnly)
	qsl := &loadgentest.QSL{Total: 16}
	sut := loadgentest.DelaySUT{Delay: time.Millisecond}
	res, err := loadgen.Run(context.Background(), sut, qsl, s, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fast := 0
	for rec := range res.Records() {
		if rec.CompletedNs-rec.IssuedNs < int64(time.Millisecond) {
			fast++
		}
	}
	fmt.Println("samples loaded:", len(qsl.Loaded()[0]))
	fmt.Println("at least 64 records:", res.RecordCount() >= 64)
	fmt.Println("failed:", res.FailedSamples)
	fmt.Println("faster than the delay:", fast)
	// Output:
	// samples loaded: 16
	// at least 64 records: true
	// failed: 0
	// faster than the delay: 0
}
