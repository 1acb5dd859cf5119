package telemetry

import (
	"math"
	"strings"
	"testing"
)

const sec = int64(1e9)

func pw(t int64, node, dev string, w float64) Reading {
	return Reading{T: t, Source: "replay", Node: node, Device: dev, Kind: Power, Value: w}
}

func ctr(t int64, dev string, j float64) Reading {
	return Reading{T: t, Source: "rapl", Device: dev, Kind: Energy, Value: j}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Every expected figure below is worked out by hand in the row's comment.
func TestSummarize(t *testing.T) {
	constant := func(from, to int64) []Reading {
		var rs []Reading
		for ts := from; ts <= to; ts += sec {
			rs = append(rs, pw(ts, "n1", "cpu", 250), pw(ts, "n1", "gpu0", 150))
		}
		return rs
	}
	tests := []struct {
		name                   string
		readings               []Reading
		period                 int64 // 0: 1 s
		w                      Window
		energy, avg, peak, cov float64 // NaN: no figure
		method, note           string
	}{
		{
			// The done-when case: 250 W + 150 W over 10 s:
			// 400 W × 10 s = 4000 J.
			name: "constant cpu and gpu", readings: constant(-2*sec, 12*sec), w: Window{0, 10 * sec},
			energy: 4000, avg: 400, peak: 400, cov: 1, method: MethodTrapezoid,
		},
		{
			// Window edges between readings (0.5 s and 3.5 s) are
			// interpolated: still 400 W × 3 s = 1200 J.
			name: "edges between readings", readings: constant(0, 5*sec), w: Window{sec / 2, 7 * sec / 2},
			energy: 1200, avg: 400, peak: 400, cov: 1, method: MethodTrapezoid,
		},
		{
			// A ramp 100 W at 0 s to 300 W at 2 s, readings at 0, 1, 2 s:
			// trapezoids (100+200)/2 + (200+300)/2 = 150 + 250 = 400 J;
			// average 200 W; peak 300 W.
			name: "ramp by trapezoid", readings: []Reading{pw(0, "", "cpu", 100), pw(sec, "", "cpu", 200), pw(2*sec, "", "cpu", 300)},
			w: Window{0, 2 * sec}, energy: 400, avg: 200, peak: 300, cov: 1, method: MethodTrapezoid,
		},
		{
			// Counter 10 J, 60 J, 160 J at 0, 1, 2 s: 150 J over 2 s =
			// 75 W; peak is the second second's 100 J/s = 100 W.
			name: "counter difference", readings: []Reading{ctr(0, "package-0", 10), ctr(sec, "package-0", 60), ctr(2*sec, "package-0", 160)},
			w: Window{0, 2 * sec}, energy: 150, avg: 75, peak: 100, cov: 1, method: MethodCounter,
		},
		{
			// A counter that goes down (a lying source) from 1 to 2 s: only
			// 0–1 s counts, 50 J over 1 s; coverage half of 2 s.
			name: "counter going backwards", readings: []Reading{ctr(0, "d", 10), ctr(sec, "d", 60), ctr(2*sec, "d", 5)},
			w: Window{0, 2 * sec}, energy: 50, avg: 50, peak: 50, cov: 0.5, method: MethodCounter,
			note: "the counter went down",
		},
		{
			// Readings at 0, 1 and 5 s, 100 W: the 4 s hole is longer than
			// 2.5 periods, so only 0–1 s is covered: 100 J, 1/5 coverage.
			name: "hole in the readings", readings: []Reading{pw(0, "", "cpu", 100), pw(sec, "", "cpu", 100), pw(5*sec, "", "cpu", 100)},
			w: Window{0, 5 * sec}, energy: 100, avg: 100, peak: 100, cov: 0.2, method: MethodTrapezoid,
			note: "cover 20.0 %",
		},
		{
			// A 1 Hz replay in a log sampled every 100 ms: the series' own
			// spacing sets its gap bound, so 0–2 s is covered: 100 W × 2 s.
			name: "series slower than the sampling period", readings: []Reading{pw(0, "", "cpu", 100), pw(sec, "", "cpu", 100), pw(2*sec, "", "cpu", 100)},
			period: sec / 10, w: Window{0, 2 * sec}, energy: 200, avg: 100, peak: 100, cov: 1, method: MethodTrapezoid,
		},
		{
			// One reading is too few: no figure rather than an invented one.
			name: "one reading", readings: []Reading{pw(sec, "", "cpu", 100)},
			w: Window{0, 2 * sec}, energy: math.NaN(), avg: math.NaN(), peak: math.NaN(), cov: 0,
			note: "too few readings: 1",
		},
		{
			// A device with both a counter and power readings counts once,
			// by its counter: 200 J over 2 s, not 200 + 2×100.
			name: "counter preferred over power of the same device",
			readings: []Reading{
				{T: 0, Source: "nvml", Device: "gpu0", Kind: Energy, Value: 0},
				{T: 2 * sec, Source: "nvml", Device: "gpu0", Kind: Energy, Value: 200},
				{T: 0, Source: "nvml", Device: "gpu0", Kind: Power, Value: 100},
				{T: 2 * sec, Source: "nvml", Device: "gpu0", Kind: Power, Value: 100},
			},
			w: Window{0, 2 * sec}, energy: 200, avg: 100, peak: 100, cov: 1, method: MethodCounter,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			period := tt.period
			if period == 0 {
				period = sec
			}
			s := Summarize(&Log{PeriodNs: period, Readings: tt.readings}, tt.w)
			for _, c := range []struct {
				what      string
				got, want float64
			}{{"energy", val(s.EnergyJ), tt.energy}, {"avg", val(s.AvgW), tt.avg}, {"peak", val(s.PeakW), tt.peak}, {"coverage", s.Coverage, tt.cov}} {
				if math.IsNaN(c.want) != math.IsNaN(c.got) || (!math.IsNaN(c.want) && !near(c.got, c.want)) {
					t.Errorf("%s = %v, want %v (summary %+v)", c.what, c.got, c.want, s)
				}
			}
			if s.Method != tt.method {
				t.Errorf("method %q, want %q", s.Method, tt.method)
			}
			if !strings.Contains(s.Note, tt.note) {
				t.Errorf("note %q, want it to contain %q", s.Note, tt.note)
			}
		})
	}
}

// The cluster's peak is the largest sum at the same instants, not the sum
// of each device's peak: node a peaks at 1 s (300 W), node b at 2 s
// (300 W); the sums are 0 s: 200, 1 s: 400, 2 s: 400, so the peak is 400
// W, not 600 W (GB-6.6.3-T7-PCTR).
func TestClusterPeakAtSameInstants(t *testing.T) {
	rs := []Reading{
		pw(0, "a", "node", 100), pw(sec, "a", "node", 300), pw(2*sec, "a", "node", 100),
		pw(0, "b", "node", 100), pw(sec, "b", "node", 100), pw(2*sec, "b", "node", 300),
	}
	s := Summarize(&Log{PeriodNs: sec, Readings: rs}, Window{0, 2 * sec})
	if val(s.PeakW) != 400 {
		t.Errorf("cluster peak %v W, want 400", val(s.PeakW))
	}
	// Energies: a (100+300)/2 + (300+100)/2 = 400 J; b (100+100)/2 +
	// (100+300)/2 = 300 J; 700 J over 2 s = 350 W.
	if val(s.EnergyJ) != 700 || val(s.AvgW) != 350 || s.Devices != 2 {
		t.Errorf("energy %v J, avg %v W, devices %d; want 700, 350, 2", val(s.EnergyJ), val(s.AvgW), s.Devices)
	}
}

func TestUtilization(t *testing.T) {
	rs := []Reading{{T: 0, Source: "p", Device: "gpu0", Kind: Utilization, Value: 20}, {T: sec, Source: "p", Device: "gpu0", Kind: Utilization, Value: 80},
		{T: 5 * sec, Source: "p", Device: "gpu0", Kind: Utilization, Value: 100}}
	s := Summarize(&Log{PeriodNs: sec, Readings: rs}, Window{0, 2 * sec})
	// Inside 0–2 s: 20 and 80, mean 50, peak 80; covered 0–1 s of 2 s.
	u := s.Series[0]
	if val(u.AvgPct) != 50 || val(u.PeakPct) != 80 || u.Coverage != 0.5 {
		t.Errorf("utilisation %+v: want mean 50, peak 80, coverage 0.5", u)
	}
	if s.EnergyJ != nil || !strings.Contains(s.Note, "no power") {
		t.Errorf("a log of utilisation only has no energy: %+v", s)
	}
}

func TestCounterDelta(t *testing.T) {
	tests := []struct {
		name                 string
		prev, cur, max, want uint64
	}{
		{"no wrap: the plain difference", 100, 250, 1000, 150},
		{"no change", 7, 7, 1000, 0},
		{"wrapped: 900 → 1000 is 100, 0 → 50 is 50, 150 in all", 900, 50, 1000, 150},
		{"RAPL's real range, wrapped just after the top: 262143328850 − 262143328000 = 850, +10 = 860", 262143328000, 10, 262143328850, 860},
	}
	for _, tt := range tests {
		if got := CounterDelta(tt.prev, tt.cur, tt.max); got != tt.want {
			t.Errorf("%s: CounterDelta(%d, %d, %d) = %d, want %d", tt.name, tt.prev, tt.cur, tt.max, got, tt.want)
		}
	}
}

func TestEfficiencyOf(t *testing.T) {
	tests := []struct {
		name             string
		scenario         string
		samples, queries uint64
		energy           float64
		want             Efficiency
		ok               bool
	}{
		{"Offline: 10,000 samples over 4000 J = 2.5 samples/J", "Offline", 10000, 1, 4000, Efficiency{"samples per joule", 2.5}, true},
		{"Server: 600 samples over 1200 J = 0.5 samples/J", "Server", 600, 600, 1200, Efficiency{"samples per joule", 0.5}, true},
		{"SingleStream: 4 J over 1000 queries = 4 mJ/query", "SingleStream", 1000, 1000, 4, Efficiency{"millijoules per query", 4}, true},
		{"MultiStream counts queries, not samples: 8 J over 100 queries of 8 = 80 mJ/query", "MultiStream", 800, 100, 8, Efficiency{"millijoules per query", 80}, true},
		{"no energy: no figure", "Offline", 10, 1, 0, Efficiency{}, false},
		{"unknown scenario: no figure", "Batch", 10, 1, 1, Efficiency{}, false},
	}
	for _, tt := range tests {
		got, ok := EfficiencyOf(tt.scenario, tt.samples, tt.queries, tt.energy)
		if ok != tt.ok || got.Name != tt.want.Name || !near(got.Value, tt.want.Value) {
			t.Errorf("%s: got %+v %v, want %+v %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// Whatever the readings, Summarize invents nothing impossible: energies
// and powers are finite and ≥ 0 and coverage lies in [0, 1].
func FuzzSummarize(f *testing.F) {
	f.Add(int64(0), int64(sec), int64(2*sec), 100.0, 200.0, 50.0, uint8(1), int64(sec))
	f.Add(int64(-5), int64(3), int64(3), 1e300, 0.0, 1e300, uint8(2), int64(1))
	f.Fuzz(func(t *testing.T, t0, t1, t2 int64, v0, v1, v2 float64, kind uint8, period int64) {
		if period <= 0 || period > 1e15 {
			return
		}
		k := Kind(kind%3 + 1)
		var rs []Reading
		for i, tv := range []struct {
			t int64
			v float64
		}{{t0, v0}, {t1, v1}, {t2, v2}} {
			r := Reading{T: tv.t, Source: "f", Device: []string{"a", "b"}[i%2], Kind: k, Value: tv.v}
			if r.check() == nil {
				rs = append(rs, r)
			}
		}
		s := Summarize(&Log{PeriodNs: period, Readings: rs}, Window{0, 2 * sec})
		for _, p := range []*float64{s.EnergyJ, s.AvgW, s.PeakW} {
			if p != nil && (math.IsNaN(*p) || *p < 0) {
				t.Fatalf("summary %+v: a figure is negative or NaN", s)
			}
		}
		if s.Coverage < 0 || s.Coverage > 1 {
			t.Fatalf("coverage %v", s.Coverage)
		}
	})
}
