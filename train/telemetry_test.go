package train

import (
	"testing"

	"aimeter/telemetry"
)

// A node's devices are summed at common instants into its power; an
// instant where one of them has no value gives no event; utilisation
// readings become fractions of their chip.
func TestTelemetryEvents(t *testing.T) {
	r := func(t int64, node, dev string, k telemetry.Kind, v float64) telemetry.Reading {
		return telemetry.Reading{T: t, Source: "s", Node: node, Device: dev, Kind: k, Value: v}
	}
	l := &telemetry.Log{PeriodNs: 1e9, Readings: []telemetry.Reading{
		r(0, "", "cpu", telemetry.Power, 250), r(1e9, "", "cpu", telemetry.Power, 250), r(2e9, "", "cpu", telemetry.Power, 250),
		r(0, "", "gpu0", telemetry.Power, 150), r(1e9, "", "gpu0", telemetry.Power, 150), // none at 2 s
		r(0, "b", "gpu12", telemetry.Power, 10), r(2e9, "b", "gpu12", telemetry.Power, 30),
		r(0, "host", "bmc", telemetry.Power, 1000), r(1e9, "host", "bmc", telemetry.Power, 1000), // this machine, named

		r(1e9, "", "gpu12", telemetry.Utilization, 75), r(1e9, "b", "npu", telemetry.Utilization, 5),
	}}
	evs := TelemetryEvents(l, "host")
	type got struct {
		kind Kind
		t    int64
		node string
		chip int
		v    float64
	}
	var gs []got
	for _, e := range evs {
		gs = append(gs, got{e.Kind, e.Time, e.Node, e.Chip, *e.Value})
	}
	want := []got{
		{Utilization, 1e9, "host", 12, 0.75},
		{Utilization, 1e9, "b", 0, 0.05},
		{Power, 0, "b", 0, 10}, {Power, 1e9, "b", 0, 20}, {Power, 2e9, "b", 0, 30},
		// "" is this machine: its devices and the BMC's reading summed,
		// none at 2 s where gpu0 and the BMC have no value.
		{Power, 0, "host", 0, 1400}, {Power, 1e9, "host", 0, 1400},
	}
	if len(gs) != len(want) {
		t.Fatalf("events %+v\nwant %+v", gs, want)
	}
	for i := range want {
		if gs[i] != want[i] {
			t.Errorf("event %d: %+v, want %+v", i, gs[i], want[i])
		}
	}
}

// A gap of a series on this machine (node "") is left out after the node
// is named: RAPL's counter at 100 W from 0 to 3 s, its step from 1 to 2 s
// not counted (a reset), gives 100 W at 1 and 3 s and nothing at 2 s,
// rather than the 0 W the flat step would mean.
func TestTelemetryEventsLeaveGapsOut(t *testing.T) {
	c := func(t int64, j float64) telemetry.Reading {
		return telemetry.Reading{T: t, Source: "rapl", Device: "package-0", Kind: telemetry.Energy, Value: j}
	}
	l := &telemetry.Log{PeriodNs: 1e9, Readings: []telemetry.Reading{c(0, 0), c(1e9, 100), c(2e9, 100), c(3e9, 200)},
		Gaps: []telemetry.Gap{{Source: "rapl", Device: "package-0", Kind: telemetry.Energy, T: 1e9, DurationNs: 1e9, Reason: "reset"}}}
	var got []int64
	for _, e := range TelemetryEvents(l, "host") {
		if e.Kind != Power || e.Node != "host" || *e.Value != 100 {
			t.Errorf("event %+v: want 100 W on host", e)
		}
		got = append(got, e.Time)
	}
	if len(got) != 2 || got[0] != 1e9 || got[1] != 3e9 {
		t.Errorf("power events at %v ns: want 1 s and 3 s only", got)
	}
}
