package telemetry

import (
	"math"
	"testing"
)

// Grid sums each node's devices at common instants: a power series
// interpolated, a counter's mean power between its readings, NaN where a
// device has no value; nodes come sorted.
func TestGrid(t *testing.T) {
	l := &Log{PeriodNs: 1e9, Readings: []Reading{
		// node b: power 100 W at 0 s, 300 W at 2 s: 200 W at 1 s.
		{T: 0, Source: "replay", Node: "b", Device: "cpu", Kind: Power, Value: 100},
		{T: 2e9, Source: "replay", Node: "b", Device: "cpu", Kind: Power, Value: 300},
		// node a: a counter of 50 J/s from 0 to 2 s, and a power series
		// of 10 W that ends at 1 s.
		{T: 0, Source: "nvml", Node: "a", Device: "gpu0", Kind: Energy, Value: 1000},
		{T: 2e9, Source: "nvml", Node: "a", Device: "gpu0", Kind: Energy, Value: 1100},
		{T: 0, Source: "nvml", Node: "a", Device: "gpu0", Kind: Power, Value: 999}, // the counter wins
		{T: 0, Source: "rapl", Node: "a", Device: "package-0", Kind: Power, Value: 10},
		{T: 1e9, Source: "rapl", Node: "a", Device: "package-0", Kind: Power, Value: 10},
		{T: 0, Source: "nvml", Node: "a", Device: "gpu0", Kind: Utilization, Value: 90}, // not power
	}}
	ts, nodes := Grid(l, Window{FromNs: 0, ToNs: 2e9}, 0)
	if len(ts) != 3 || ts[1] != 1e9 || len(nodes) != 2 || nodes[0].Node != "a" || nodes[1].Node != "b" {
		t.Fatalf("instants %v, nodes %+v", ts, nodes)
	}
	// a at 0 s: the counter has no interval ending there (no value): NaN.
	// a at 1 s: 50 + 10 W; at 2 s: 50 W and no package reading: NaN.
	wantA := []float64{math.NaN(), 60, math.NaN()}
	wantB := []float64{100, 200, 300}
	for i := range ts {
		if a := nodes[0].W[i]; !(a == wantA[i] || math.IsNaN(a) && math.IsNaN(wantA[i])) {
			t.Errorf("a at %d ns: %v W, want %v", ts[i], a, wantA[i])
		}
		if b := nodes[1].W[i]; b != wantB[i] {
			t.Errorf("b at %d ns: %v W, want %v", ts[i], b, wantB[i])
		}
	}
	if ts, nodes := Grid(l, Window{FromNs: 5, ToNs: 1}, 0); ts != nil || nodes != nil {
		t.Errorf("a reversed window gave %v %v", ts, nodes)
	}
	if ts, _ := Grid(l, Window{FromNs: 0, ToNs: MaxGridInstants * 10}, 1); len(ts) > MaxGridInstants {
		t.Errorf("%d instants: want at most %d", len(ts), MaxGridInstants)
	}
}
