package train

import (
	"math"
	"strconv"

	"aimeter/telemetry"
)

// TelemetryEvents turns what a run's power sources read (aimeter train
// --power) into training events, on the log's clock (the caller rebases
// it to the run's origin first): one Power event per node every period of
// the log, the node's whole power as the sum over its devices at that
// instant (telemetry.Grid; an instant where a device of the node has no
// value gives none), and one Utilization event per utilisation reading,
// its chip the number that ends the device's name ("gpu3" is chip 3), its
// value a fraction. Nodes named "" take node, the name the training
// events give this machine.
func TelemetryEvents(l *telemetry.Log, node string) []Event {
	// The readings of "" are this machine's: one node with those that
	// name it, so that its devices are summed, not averaged.
	named := *l
	named.Readings = make([]telemetry.Reading, len(l.Readings))
	for i, r := range l.Readings {
		r.Node = nodeOr(r.Node, node)
		named.Readings[i] = r
	}
	// The gaps of a series too, so that Grid still leaves them out.
	named.Gaps = make([]telemetry.Gap, len(l.Gaps))
	for i, g := range l.Gaps {
		if g.Device != "" {
			g.Node = nodeOr(g.Node, node)
		}
		named.Gaps[i] = g
	}
	l = &named
	var out []Event
	first, last, any := int64(0), int64(0), false
	for _, r := range l.Readings {
		switch r.Kind {
		case telemetry.Power, telemetry.Energy:
			if !any || r.T < first {
				first = r.T
			}
			if !any || r.T > last {
				last = r.T
			}
			any = true
		case telemetry.Utilization:
			v := r.Value / 100
			out = append(out, Event{Kind: Utilization, Time: r.T, Node: nodeOr(r.Node, node), Chip: chipOf(r.Device), Value: &v})
		}
	}
	if any {
		ts, nodes := telemetry.Grid(l, telemetry.Window{FromNs: first, ToNs: last}, 0)
		for _, n := range nodes {
			for i, w := range n.W {
				if math.IsNaN(w) {
					continue
				}
				v := w
				out = append(out, Event{Kind: Power, Time: ts[i], Node: nodeOr(n.Node, node), Value: &v})
			}
		}
	}
	return out
}

func nodeOr(n, def string) string {
	if n == "" {
		return def
	}
	return n
}

// chipOf is the number that ends a device's name, 0 for none.
func chipOf(device string) int {
	i := len(device)
	for i > 0 && device[i-1] >= '0' && device[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(device[i:])
	if err != nil {
		return 0
	}
	return n
}
