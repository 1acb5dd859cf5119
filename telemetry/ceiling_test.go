package telemetry

import (
	"math"
	"strings"
	"testing"
)

// Each row's rise is worked out by hand in its reason.
func TestCounterStep(t *testing.T) {
	const raplRange = 262143.328850 // J: a common max_energy_range_uj
	tests := []struct {
		why               string
		prev, cur, rangeJ float64
		dtNs              int64
		ceiling           float64
		rise              float64
		reason            string // "" when counted
	}{
		{"a rise of 100 J in 1 s is 100 W: counted",
			1000, 1100, raplRange, sec, 300, 100, ""},
		{"a rise of exactly the ceiling (300 J in 1 s, 300 W) is still plausible",
			1000, 1300, raplRange, sec, 300, 300, ""},
		{"a wrap: 262,100 J → 56.67 J in 1 s is 262,143.33 − 262,100 + 56.67 = 100 J, 100 W",
			262100, 56.67115, raplRange, sec, 300, 100, ""},
		{"the issue's case: 500 J backwards would be a wrap of 261,643.3 J in 1 s, 261,643 W: no wrap",
			1000, 500, raplRange, sec, DefaultMaxPowerW, 0, "not a wrap of its 262143.3 J range (that would be 261643.3 J"},
		{"a reset to 0 from 1000 J would be a wrap of 261,143 J: no wrap",
			1000, 0, raplRange, sec, DefaultMaxPowerW, 0, "so a reset or a backwards step"},
		{"a counter without a wrap (Redfish, Prometheus): any drop is a reset",
			36166, 10, 0, sec, DefaultMaxPowerW, 0, "went down from 36166.0 to 10.0 J (a reset: it does not wrap)"},
		{"a jump: 200,000 J in 1 s is 200 kW, above 100 kW",
			0, 200000, raplRange, sec, DefaultMaxPowerW, 0, "the counter jumped by 200000.0 J in 1s (200000 W, above the ceiling of 100000 W)"},
		{"a wrap within the range but above a 300 W ceiling (1000 J in 1 s) is no wrap",
			261643.32885, 500, raplRange, sec, 300, 0, "not a wrap"},
		{"a drop with no time between the reads cannot be a wrap",
			1000, 999, raplRange, 0, 300, 0, "with no time between the reads"},
		{"a rise with no time between the reads cannot be judged: counted",
			1000, 1001, raplRange, 0, 300, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			rise, reason := counterStep(tt.prev, tt.cur, tt.rangeJ, tt.dtNs, tt.ceiling)
			if math.Abs(rise-tt.rise) > 1e-6 {
				t.Errorf("rise %v J, want %v", rise, tt.rise)
			}
			if (tt.reason == "") != (reason == "") || !strings.Contains(reason, tt.reason) {
				t.Errorf("reason %q, want %q", reason, tt.reason)
			}
		})
	}
}

// A gap of a series leaves its stretch out of the energy, the coverage,
// the peak and the grid; a gap of another series, or a read that gave
// nothing, does not.
func TestSummarizeLeavesGapsOut(t *testing.T) {
	// RAPL package-0 at 100 W, read at 0..4 s; its counter was reset
	// between 2 and 3 s, so the source counted nothing there (the
	// reading stays at 200 J) and recorded a gap from 2 to 3 s.
	counter := []Reading{ctr(0, "package-0", 0), ctr(sec, "package-0", 100), ctr(2*sec, "package-0", 200),
		ctr(3*sec, "package-0", 200), ctr(4*sec, "package-0", 300)}
	// A replayed gpu at 500 W, read each second, whose 2 s reading was
	// 1e12 W and left out: a gap from 1 to 3 s (the readings either side).
	power := []Reading{pw(0, "", "gpu0", 500), pw(sec, "", "gpu0", 500), pw(3*sec, "", "gpu0", 500), pw(4*sec, "", "gpu0", 500)}
	gaps := []Gap{
		{Source: "rapl", Device: "package-0", Kind: Energy, T: 2 * sec, DurationNs: sec, Reason: "reset"},
		{Source: "replay", Device: "gpu0", Kind: Power, T: sec, DurationNs: 2 * sec, Reason: "1e12 W"},
		{Source: "rapl", T: 3 * sec, Reason: "a read that gave nothing: no stretch"},
		{Source: "rapl", Device: "package-0", Kind: Power, T: 0, DurationNs: 4 * sec, Reason: "another series of the device"},
	}
	l := &Log{PeriodNs: sec, Readings: append(counter, power...), Gaps: gaps}
	s := Summarize(l, Window{0, 4 * sec})
	by := map[string]SeriesSummary{}
	for _, ss := range s.Series {
		by[ss.Device] = ss
	}
	// package-0: 100 + 100 + 100 J over 0–2 and 3–4 s (3 s of 4):
	// 300 J, 100 W, coverage 0.75.
	if p := by["package-0"]; val(p.EnergyJ) != 300 || val(p.AvgW) != 100 || p.Coverage != 0.75 || !strings.Contains(p.Note, "1 stretch between readings overlaps a gap") {
		t.Errorf("package-0 %+v: want 300 J, 100 W, coverage 0.75 and a note", p)
	}
	// gpu0: 500 W over 0–1 and 3–4 s: 1000 J, 500 W, coverage 0.5 (the
	// 1–3 s trapezoid would have bridged the hole: 2.5 periods).
	if g := by["gpu0"]; val(g.EnergyJ) != 1000 || val(g.AvgW) != 500 || g.Coverage != 0.5 {
		t.Errorf("gpu0 %+v: want 1000 J, 500 W, coverage 0.5", g)
	}
	// Total 1300 J, 600 W, the least coverage 0.5; the peak over the
	// instants where both have a value (1 and 4 s: the counter's mean
	// power over the second before, 100 W, and gpu0's 500 W): 600 W.
	if val(s.EnergyJ) != 1300 || val(s.AvgW) != 600 || s.Coverage != 0.5 || val(s.PeakW) != 600 {
		t.Errorf("total %v J, %v W, coverage %v, peak %v: want 1300 J, 600 W, 0.5, 600 W", val(s.EnergyJ), val(s.AvgW), s.Coverage, val(s.PeakW))
	}
	// The grid has no value inside either gap: from 1.5 to 3 s (a
	// counter's value at a reading is its mean power over the stretch
	// that ends there, and 2–3 s is left out), nor at 0 s, where the
	// counter has no stretch yet.
	ts, nodes := Grid(l, Window{0, 4 * sec}, sec/2)
	for i, at := range ts {
		inHole := at == 0 || (at > sec && at <= 3*sec)
		if got := nodes[0].W[i]; math.IsNaN(got) != inHole {
			t.Errorf("grid at %d ns: %v W, want NaN %v", at, got, inHole)
		}
	}
	if !l.LeftOut(SeriesKey{"rapl", "", "package-0", Energy}, 2*sec+1, 2*sec+2) || l.LeftOut(SeriesKey{"rapl", "", "package-0", Energy}, 0, sec) {
		t.Error("LeftOut: want the 2–3 s stretch of package-0 left out, 0–1 s not")
	}
}
