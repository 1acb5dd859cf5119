package gbt_test

import (
	"fmt"

	"aimeter/gbt"
	"aimeter/loadgen"
)

// One server at 400 W, read every 100 ms over a run of one image whose
// inference took 0.2 to 0.5 s and whose T_DIP (receipt to result) was 0.1
// to 0.6 s on the test clock.
func ExampleComputePower() {
	grid := gbt.PowerGrid{Servers: []gbt.ServerPower{{Node: "node-1"}}}
	for t := int64(0); t <= 1e9; t += 1e8 {
		grid.T = append(grid.T, t)
		grid.Servers[0].W = append(grid.Servers[0].W, 400)
	}
	recs := []loadgen.Record{{IssuedNs: 0, CompletedNs: 7e8, Status: loadgen.StatusOK}}
	stages := []loadgen.StageTimes{{Clock: loadgen.TestClock, Received: 1e8, PreprocessStart: loadgen.NoTime, PreprocessEnd: loadgen.NoTime,
		InferenceStart: 2e8, InferenceEnd: 5e8, PostprocessStart: loadgen.NoTime, PostprocessEnd: 6e8, ResultSent: 6e8}}
	top1 := 0.76
	m, err := gbt.ComputePower(grid, gbt.PowerOptions{Records: recs, Stages: stages, RunNs: 1e9, Unit: "images",
		Throughput: gbt.Throughput{Samples: 1, CoverNs: 5e8, Conformant: true},
		Accuracy:   []gbt.AccuracyResult{{Metric: "Top1", Value: &top1}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := m.Servers[0]
	fmt.Printf("average power during T_IN: %.0f W over %d samples; peak %.0f W\n", *s.AvgW, s.AvgSamples, *s.PeakW)
	fmt.Printf("energy-efficiency ratio: %.4f %s/J (%.0f per kWh)\n", m.EnergyRatio.PerJ, m.EnergyRatio.Unit, m.EnergyRatio.PerKWh)
	fmt.Printf("energy within T_DIP: %.0f J; inference efficiency: %.0f per kWh\n", *m.EnergyTDIPJ, m.Efficiency[0].PerKWh)
	// Output:
	// average power during T_IN: 400 W over 4 samples; peak 400 W
	// energy-efficiency ratio: 0.0050 images/J (18000 per kWh)
	// energy within T_DIP: 200 J; inference efficiency: 13680 per kWh
}
