package telemetry

import (
	"math"
	"slices"
)

// NodePower is one node's power at the instants of a grid (Grid).
type NodePower struct {
	// Node names the node ("" for the only one).
	Node string
	// W is the node's power at each instant, W: the sum over its devices,
	// NaN where one of them has no value there.
	W []float64
}

// MaxGridInstants bounds the instants Grid returns: a longer window is
// sampled with a longer step.
const MaxGridInstants = 1_000_000

// Grid resamples the power of each node of l onto common instants: every
// step ns from w.FromNs to w.ToNs (step 0 means the log's period; the
// step grows so that there are at most MaxGridInstants). A node's power is
// the sum over its devices (of every source), each device by its energy
// counter where it has one (the mean power between the readings either
// side of the instant), else by its power readings interpolated between
// readings at most MaxGap apart; an instant where a device of the node has
// no value, or that falls in one of its gaps (Gap), is NaN. This is GB/T
// 45087's "same time points" for a cluster (GB-7.6.3-T17-cluster).
func Grid(l *Log, w Window, step int64) (ts []int64, nodes []NodePower) {
	if w.ToNs < w.FromNs {
		return nil, nil
	}
	if step <= 0 {
		step = l.PeriodNs
	}
	step = max(step, (w.ToNs-w.FromNs)/MaxGridInstants+1, 1)
	for t := w.FromNs; t <= w.ToNs; t += step {
		ts = append(ts, t)
	}
	rs := slices.Clone(l.Readings)
	sortReadings(rs)
	type dev struct {
		key    SeriesKey
		pts    []point
		holes  []Window
		maxGap int64
	}
	var devs []dev
	for i := 0; i < len(rs); {
		j := i
		for j < len(rs) && keyOf(rs[j]) == keyOf(rs[i]) {
			j++
		}
		k := keyOf(rs[i])
		if k.Kind != Utilization {
			d := dev{key: k, holes: holesOf(l, k)}
			for _, r := range rs[i:j] {
				d.pts = append(d.pts, point{r.T, r.Value})
			}
			d.maxGap = MaxGap(max(l.PeriodNs, medianSpacing(d.pts)))
			// One series per device: its counter where it has one with
			// two readings.
			at := slices.IndexFunc(devs, func(o dev) bool {
				return o.key.Source == k.Source && o.key.Node == k.Node && o.key.Device == k.Device
			})
			switch {
			case at < 0:
				devs = append(devs, d)
			case k.Kind == Energy && len(d.pts) >= 2:
				devs[at] = d
			}
		}
		i = j
	}
	for _, d := range devs {
		n := slices.IndexFunc(nodes, func(np NodePower) bool { return np.Node == d.key.Node })
		if n < 0 {
			nodes = append(nodes, NodePower{Node: d.key.Node, W: make([]float64, len(ts))})
			n = len(nodes) - 1
		}
		for i, t := range ts {
			v, ok := powerAt(d.pts, d.holes, t, d.maxGap, d.key.Kind == Power)
			if !ok {
				v = math.NaN()
			}
			nodes[n].W[i] += v
		}
	}
	slices.SortFunc(nodes, func(a, b NodePower) int {
		switch {
		case a.Node < b.Node:
			return -1
		case a.Node > b.Node:
			return 1
		}
		return 0
	})
	return ts, nodes
}
