package gbt

import (
	"math"
	"strings"
	"testing"

	"aimeter/loadgen"
)

// powerRun is the hand-worked run of the power tests (times in ms):
//
//	r1 ok  issued 500,  done 2200; SUT: recv 600,  pre 600–900,   inf 900–2000,  post 2000–2100
//	r2 ok  issued 2500, done 3600; SUT: recv 2600, pre 2600–3000, inf 3000–3500, post 3500–3500
//
// T_IN union [900, 2000] ∪ [3000, 3500]; T_IPR union [600, 900] ∪
// [2600, 3000]; T_DIP union [600, 2100] ∪ [2600, 3500], 2.4 s; end-to-end
// union [500, 2200] ∪ [2500, 3600].
func powerRun() ([]loadgen.Record, []loadgen.StageTimes) {
	recs := []loadgen.Record{
		{SeqID: 0, IssuedNs: ms(500), CompletedNs: ms(2200), Status: loadgen.StatusOK},
		{SeqID: 1, IssuedNs: ms(2500), CompletedNs: ms(3600), Status: loadgen.StatusOK},
	}
	st := []loadgen.StageTimes{
		stagesMs(600, 600, 900, 900, 2000, 2000, 2100, 2150),
		stagesMs(2600, 2600, 3000, 3000, 3500, 3500, 3500, 3550),
	}
	return recs, st
}

func sec(s ...float64) []int64 {
	out := make([]int64, len(s))
	for i, v := range s {
		out[i] = int64(v * 1e9)
	}
	return out
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Table 17 and Annex E worked by hand. The grid: server A 100, 200, 300,
// 200, 100 W and server B 50 W at 0, 1, 2, 3, 4 s.
//
//	A: T_I mean (all 5) 180 W; T_IN instants 1, 2, 3 s: 700/3 W; T_IPR instant 3 s: 200 W; peak 300 W
//	B: 50 W everywhere
//	cluster: 150, 250, 350, 250, 150 W: mean 230 W over 5 instants (GB-7.6.3-T17-cluster)
//	E.3: P̄_I over instants 1, 2, 3 s (in the end-to-end union) = 850/3 W; N = 2, T_DIP = 2.4 s:
//	     2 / (2.4 × 850/3) = 1/340 per J (IN-85); literal 2 / (2.4 / (850/3)) = 236.1 1
//	E.4: energy within T_DIP, the cluster's power linear between instants:
//	     [0.6, 1]: (210+250)/2 × 0.4 = 92; [1, 2]: 300; [2, 2.1]: (350+340)/2 × 0.1 = 34.5;
//	     [2.6, 3]: (290+250)/2 × 0.4 = 108; [3, 3.5]: (250+200)/2 × 0.5 = 112.5: 647 J
//	     Top1 0.76 (higher is better): 0.76 / (647/3.6e6) = 2 736 000/647 per kWh;
//	     WER 0.05 (lower is better, GB-E.2.2-FNa): 0.95 / (647/3.6e6) = 3 420 000/647 per kWh
func TestComputePowerHandWorked(t *testing.T) {
	recs, st := powerRun()
	g := PowerGrid{T: sec(0, 1, 2, 3, 4), Servers: []ServerPower{
		{Node: "a", W: []float64{100, 200, 300, 200, 100}},
		{Node: "b", W: []float64{50, 50, 50, 50, 50}},
	}}
	top1, wer := 0.76, 0.05
	m, err := ComputePower(g, PowerOptions{Records: recs, Stages: st, RunNs: ms(4000), Unit: "images",
		Throughput: Throughput{Samples: 2, CoverNs: ms(2400), Conformant: true},
		Accuracy: []AccuracyResult{{Metric: "Top1", Value: &top1, Threshold: &Threshold{Comparator: Greater}},
			{Metric: "WER", Value: &wer, Threshold: &Threshold{Comparator: Less}}}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := m.Servers[0], m.Servers[1]
	checks := []struct {
		what      string
		got, want float64
	}{
		{"A run_avg_w", val(a.RunAvgW), 180},
		{"A run_samples", float64(a.RunSamples), 5},
		{"A avg_w over T_IN (GB-7.6.3-T17-avg)", val(a.AvgW), 700.0 / 3},
		{"A avg_samples", float64(a.AvgSamples), 3},
		{"A pre_avg_w over T_IPR (GB-7.6.3-T17-pre)", val(a.PreAvgW), 200},
		{"A pre_samples", float64(a.PreSamples), 1},
		{"A peak_w (GB-7.6.3-T17-peak)", val(a.PeakW), 300},
		{"B avg_w", val(b.AvgW), 50},
		{"cluster_avg_w (GB-7.6.3-T17-cluster)", val(m.ClusterAvgW), 230},
		{"cluster_instants", float64(m.ClusterInstants), 5},
		{"E.3 mean power", m.EnergyRatio.MeanPowerW, 850.0 / 3},
		{"E.3 per J (GB-E.2.1-vision)", m.EnergyRatio.PerJ, 1.0 / 340},
		{"E.3 per kWh", m.EnergyRatio.PerKWh, 3.6e6 / 340},
		{"E.3 literal", m.EnergyRatio.Literal, 2 / (2.4 / (850.0 / 3))},
		{"energy within T_DIP (IN-86)", val(m.EnergyTDIPJ), 647},
		{"T_DIP coverage", m.TDIPCoverage, 1},
		{"E.4 Top1 per kWh (GB-E.2.2-single)", m.Efficiency[0].PerKWh, 2736000.0 / 647},
		{"E.4 WER per kWh (GB-E.2.2-FNa)", m.Efficiency[1].PerKWh, 3420000.0 / 647},
		{"E.4 WER accuracy used", m.Efficiency[1].Accuracy, 0.95},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if m.EnergyRatio.Unit != "images" || !m.EnergyRatio.Conformant || !m.Efficiency[1].LowerIsBetter || m.Efficiency[0].LowerIsBetter {
		t.Errorf("ratio %+v, efficiencies %+v", m.EnergyRatio, m.Efficiency)
	}
}

// Missing values are left out, never filled in: an instant where one
// server has no reading is no cluster instant, a window with no instant
// has no figure but a note, and an energy within T_DIP that readings do
// not cover in full gives no inference efficiency.
func TestComputePowerGaps(t *testing.T) {
	recs, st := powerRun()
	nan := math.NaN()
	g := PowerGrid{T: sec(0, 1, 2, 3, 4), Servers: []ServerPower{
		{Node: "a", W: []float64{100, 200, 300, 200, 100}},
		{Node: "b", W: []float64{50, 50, nan, 50, 50}},
	}}
	one := 1.0
	m, err := ComputePower(g, PowerOptions{Records: recs, Stages: st, RunNs: ms(4000),
		Throughput: Throughput{Samples: 2, CoverNs: ms(2400), Conformant: true}, Accuracy: []AccuracyResult{{Metric: "x", Value: &one}}})
	if err != nil {
		t.Fatal(err)
	}
	// Cluster: 150, 250, -, 250, 150: 200 W over 4 instants.
	if val(m.ClusterAvgW) != 200 || m.ClusterInstants != 4 {
		t.Errorf("cluster %v W over %d instants: want 200 W over 4", val(m.ClusterAvgW), m.ClusterInstants)
	}
	// B over T_IN: instants 1 and 3 s only.
	if b := m.Servers[1]; val(b.AvgW) != 50 || b.AvgSamples != 2 {
		t.Errorf("B over T_IN: %v W from %d samples: want 50 W from 2", val(b.AvgW), b.AvgSamples)
	}
	// [1, 3] s is not covered: 92 + 112.5 J over 0.9 s of 2.4 s.
	if val(m.EnergyTDIPJ) != 204.5 || m.TDIPCoverage != 0.375 || m.Efficiency != nil || !strings.Contains(strings.Join(m.Notes, ";"), "37.5 %") {
		t.Errorf("energy %v J, coverage %v, efficiency %+v, notes %q", val(m.EnergyTDIPJ), m.TDIPCoverage, m.Efficiency, m.Notes)
	}
	// Instants at 0.5, 1.5, 2.5 and 3.5 s: none falls in the T_IPR union
	// [0.6, 0.9] ∪ [2.6, 3.0] s.
	g2 := PowerGrid{T: sec(0.5, 1.5, 2.5, 3.5), Servers: []ServerPower{{W: []float64{10, 10, 10, 10}}}}
	m2, err := ComputePower(g2, PowerOptions{Records: recs, Stages: st})
	if err != nil {
		t.Fatal(err)
	}
	if s := m2.Servers[0]; s.PreAvgW != nil || s.PreSamples != 0 || !strings.Contains(strings.Join(s.Notes, ";"), "T_IPR") || m2.ClusterAvgW != nil {
		t.Errorf("server %+v, cluster %v: want no preprocessing figure, a note, no cluster figure for one server", s, m2.ClusterAvgW)
	}
	if m2.EnergyRatio != nil {
		t.Errorf("energy ratio %+v without a T_DIP time base", m2.EnergyRatio)
	}
}

func TestPowerGridValidate(t *testing.T) {
	cases := []struct {
		why  string
		g    PowerGrid
		want string
	}{
		{"instants must increase", PowerGrid{T: []int64{1, 1}, Servers: []ServerPower{{W: []float64{1, 1}}}}, "t_ns[1]"},
		{"one value per instant", PowerGrid{T: []int64{1, 2}, Servers: []ServerPower{{Node: "n", W: []float64{1}}}}, `servers[0] ("n")`},
		{"no negative power", PowerGrid{T: []int64{1}, Servers: []ServerPower{{W: []float64{-1}}}}, "w[0] = -1"},
		{"no infinite power", PowerGrid{T: []int64{1}, Servers: []ServerPower{{W: []float64{math.Inf(1)}}}}, "w[0] = +Inf"},
		{"at least one server", PowerGrid{T: []int64{1}}, "servers: want at least one"},
		{"no negative gap bound", PowerGrid{MaxGapNs: -1, Servers: []ServerPower{{}}}, "max_gap_ns"},
	}
	for _, c := range cases {
		err := c.g.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.why, err, c.want)
		}
	}
	if err := (&PowerGrid{T: []int64{1, 2}, Servers: []ServerPower{{W: []float64{math.NaN(), 3}}}}).Validate(); err != nil {
		t.Errorf("a NaN is no value, not an error: %v", err)
	}
}
