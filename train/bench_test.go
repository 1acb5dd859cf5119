package train

import (
	"fmt"
	"testing"
)

// longRun is a run of nodes × ranks over epochs, each rank sampling its
// chip's utilisation 10 times per epoch and each node its power 10 times.
func longRun(nodes, ranks, epochs int) []Event {
	var out []Event
	const epochMs = 1000.0
	for n := range nodes {
		node := onNode(fmt.Sprintf("node%d", n))
		out = append(out, ev(TrainStart, 0, node))
		for i := 1; i <= epochs; i++ {
			base := float64(i-1) * (epochMs + 100)
			for r := range ranks {
				rk := onRank(r)
				out = append(out, ev(EpochStart, base, node, rk, num(i)), ev(EpochEnd, base+epochMs, node, rk, num(i), count(100)))
				for k := range 10 {
					out = append(out, ev(Utilization, base+float64(k)*100, node, onChip(r), val(0.5)))
				}
			}
			for k := range 10 {
				out = append(out, ev(Power, base+float64(k)*100, node, val(300)))
			}
			out = append(out, ev(ValidationStart, base+epochMs, node, num(i)), ev(ValidationEnd, base+epochMs+50, node, num(i), val(0.5)))
		}
		out = append(out, ev(TrainEnd, float64(epochs)*(epochMs+100), node))
	}
	return out
}

// BenchmarkCompute reports the cost per event at two run lengths 10×
// apart: equal figures mean Compute is linear in the events.
func BenchmarkCompute(b *testing.B) {
	for _, epochs := range []int{10, 100} {
		evs := longRun(4, 8, epochs)
		b.Run(fmt.Sprintf("epochs=%d/events=%d", epochs, len(evs)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Compute(evs, Config{TrainingSetMB: 1}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(evs)), "ns/event")
		})
	}
}
