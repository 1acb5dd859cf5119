package train

import (
	"math"
	"strings"
	"testing"
)

// ev builds an event of kind k at tms milliseconds on the run's clock.
func ev(k Kind, tms float64, mods ...func(*Event)) Event {
	e := Event{Kind: k, Time: int64(math.Round(tms * 1e6))}
	for _, m := range mods {
		m(&e)
	}
	return e
}

func onNode(n string) func(*Event) { return func(e *Event) { e.Node = n } }
func onRank(r int) func(*Event)    { return func(e *Event) { e.Rank = r } }
func inTrial(t int) func(*Event)   { return func(e *Event) { e.Trial = t } }
func num(i int) func(*Event)       { return func(e *Event) { e.Epoch = i } }
func count(c int64) func(*Event)   { return func(e *Event) { e.Count = c } }
func val(v float64) func(*Event)   { return func(e *Event) { e.Value = &v } }
func withID(s string) func(*Event) { return func(e *Event) { e.ID = s } }
func onChip(c int) func(*Event)    { return func(e *Event) { e.Chip = c } }
func status(s string) func(*Event) { return func(e *Event) { e.Status = s } }

const tol = 1e-12

// near compares with a relative tolerance of 1e-12.
func near(got, want float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func checkF(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s absent, want %v", name, want)
		return
	}
	if !near(*got, want) {
		t.Errorf("%s = %.15g, want %.15g", name, *got, want)
	}
}

func checkNil(t *testing.T, name string, got *float64) {
	t.Helper()
	if got != nil {
		t.Errorf("%s = %v, want absent (--)", name, *got)
	}
}

// singleNode is one trial on one node with two accelerators (ranks 0 and
// 1), two epochs with validation, conversion, persistence, power and
// utilisation samples. Times in ms.
func singleNode() []Event {
	return []Event{
		ev(DataReadStart, 0),
		ev(DataReadEnd, 100),
		ev(TrainStart, 100),
		ev(AcceleratorStart, 110),
		ev(AcceleratorStart, 130, onRank(1)),
		ev(EpochStart, 150, num(1)),
		ev(Utilization, 300, onChip(0), val(0.5)),
		ev(Utilization, 300, onChip(1), val(0.2)),
		ev(Utilization, 600, onChip(0), val(0.6)),
		ev(Utilization, 600, onChip(1), val(0.4)),
		ev(Utilization, 900, onChip(0), val(0.7)),
		ev(Power, 100, val(200)),
		ev(Power, 1100, val(300)),
		ev(EpochEnd, 1150, num(1), count(1000)),
		ev(ValidationStart, 1150, num(1)),
		ev(ValidationEnd, 1250, num(1), val(0.5)),
		ev(EpochStart, 1250, num(2)),
		ev(Utilization, 1300, onChip(0), val(0.9)),
		ev(Utilization, 1300, onChip(1), val(0.1)),
		ev(Utilization, 1600, onChip(0), val(0.9)),
		ev(Utilization, 1600, onChip(1), val(0.2)),
		ev(Utilization, 1900, onChip(0), val(0.9)),
		ev(Utilization, 1900, onChip(1), val(0.3)),
		ev(Power, 2100, val(400)),
		ev(EpochEnd, 2750, num(2), count(1000)),
		ev(ValidationStart, 2750, num(2)),
		ev(ValidationEnd, 2850, num(2), val(0.8)),
		ev(TrainEnd, 2900, status("success")),
		ev(ConversionStart, 2900),
		ev(ConversionEnd, 2950),
		ev(PersistStart, 2950),
		ev(PersistEnd, 3000),
		ev(Power, 3500, val(999)), // after T_TR: not counted
	}
}

func TestComputeSingleNode(t *testing.T) {
	m, err := Compute(singleNode(), Config{TrainingSetMB: 70, Target: &Target{Value: 0.75}})
	if err != nil {
		t.Fatal(err)
	}
	// The only problem: chip 1 has 2 samples in epoch 1 (IN-34).
	if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "epoch 1: chip 1 of node \"\" has 2 utilisation samples") {
		t.Errorf("problems: %v", m.Problems)
	}
	if len(m.Trials) != 1 {
		t.Fatalf("%d trials, want 1 (events of trial 0 count as trial 1)", len(m.Trials))
	}
	tr := m.Trials[0]
	if tr.Trial != 1 || tr.Status != "success" {
		t.Errorf("trial %d status %q", tr.Trial, tr.Status)
	}
	// Table 6: T_T = 3000 − 0; T_L = 100 − 0; T_w = 130 (last accelerator)
	// − 100; T_TR = 2900 − 100; T_CV = 2950 − 2900; T_P = 3000 − 2950.
	checkF(t, "T_T", tr.TTMs, 3000)
	checkF(t, "T_L", tr.TLMs, 100)
	checkF(t, "T_w", tr.TWMs, 30)
	checkF(t, "T_TR", tr.TTRMs, 2800)
	checkF(t, "T_CV", tr.TCVMs, 50)
	checkF(t, "T_P", tr.TPMs, 50)
	// T_EP(1) = 1150 − 150 = 1000, T_EP(2) = 2750 − 1250 = 1500; mean 1250.
	if len(tr.Epochs) != 2 || tr.Epochs[0].TEPMs != 1000 || tr.Epochs[1].TEPMs != 1500 {
		t.Fatalf("epochs %+v", tr.Epochs)
	}
	checkF(t, "T_EP", tr.TEPMeanMs, 1250)
	// T_V(j) = 100 each; accuracies 0.5 and 0.8, the last is final.
	if len(tr.Validations) != 2 || tr.Validations[0].TVMs != 100 || tr.Validations[1].TVMs != 100 {
		t.Errorf("validations %+v", tr.Validations)
	}
	checkF(t, "epoch 1 accuracy", tr.Epochs[0].Accuracy, 0.5)
	checkF(t, "final accuracy", tr.FinalAccuracy, 0.8)
	if tr.ReachedTarget == nil || !*tr.ReachedTarget {
		t.Errorf("0.8 > 0.75 should reach the target")
	}
	// Th: size from the EpochEnd counts (1000) / 1.25 s = 800 samples/s;
	// epoch 2 alone: 1000 / 1.5 s.
	checkF(t, "Th", tr.Throughput, 800)
	checkF(t, "Th(2)", tr.Epochs[1].Throughput, 1000/1.5)
	checkF(t, "Th_CL", tr.ClusterThroughput, 800)
	if m.Unit != "samples/s" {
		t.Errorf("unit %q", m.Unit)
	}
	// Table 7: samples in [100, 2900] ms: 200, 300, 400 W → P_TR 300,
	// P_TRmax 400; the 999 W sample after t_TR2 is out.
	if len(tr.Nodes) != 1 {
		t.Fatalf("nodes %+v", tr.Nodes)
	}
	n := tr.Nodes[0]
	checkF(t, "P_TR", n.PowerW, 300)
	checkF(t, "P_TRmax", n.PowerMaxW, 400)
	checkF(t, "P_CTR", tr.ClusterPowerW, 300)
	if n.PowerSamples != 3 {
		t.Errorf("power samples %d, want 3", n.PowerSamples)
	}
	// E.1.1: P_EP(1) = 300 (the 1100 ms sample), P_EP(2) = 400 (2100 ms):
	// P_EP = 350 W; E_s = 70 MB / (1.25 s × 350 W) = 0.16 MB/J.
	checkF(t, "P_EP", n.EpochPowerW, 350)
	checkF(t, "E_s", tr.EnergyEfficiency, 0.16)
	checkF(t, "E_s MB/kWh", tr.EnergyEfficiencyMBPerKWh, 0.16*3.6e6)
	// E.1.2: energy = 300 W × 2.8 s = 840 J = 840/3.6e6 kWh; efficiency =
	// 0.8 / that.
	checkF(t, "energy", tr.EnergyKWh, 840/3.6e6)
	checkF(t, "training efficiency", tr.TrainingEfficiency, 0.8*3.6e6/840)
	checkF(t, "run training efficiency", m.TrainingEfficiency, 0.8*3.6e6/840)
	// Table 9, epoch 1: chip 0 (0.5+0.6+0.7)/3 = 0.6, chip 1 (0.2+0.4)/2 =
	// 0.3 from only 2 samples (invalid); p_1 = 0.45. Epoch 2: chip 0 0.9,
	// chip 1 0.2; p_2 = 0.55. p = 0.5, not valid.
	e1, e2 := tr.Epochs[0], tr.Epochs[1]
	checkF(t, "p_1", e1.Utilization, 0.45)
	checkF(t, "p_2", e2.Utilization, 0.55)
	if e1.UtilizationValid || !e2.UtilizationValid {
		t.Errorf("validity p_1 %v p_2 %v, want false true", e1.UtilizationValid, e2.UtilizationValid)
	}
	if len(e1.Chips) != 2 || e1.Chips[1].Samples != 2 || e1.Chips[1].Valid || !near(e1.Chips[0].Mean, 0.6) {
		t.Errorf("chips %+v", e1.Chips)
	}
	checkF(t, "p", tr.Utilization, 0.5)
	checkF(t, "server p", n.Utilization, 0.5)
	if tr.UtilizationValid || n.UtilizationValid {
		t.Errorf("utilisation marked valid with a 2-sample chip")
	}
	// MLPerf: time-to-train 2800 ms = 2800/60000 min; one trial is too few
	// for an olympic average.
	checkF(t, "time to train", tr.TimeToTrainMin, 2800.0/60000)
	if m.MLPerf.OlympicAverageMin != nil {
		t.Errorf("olympic average of one trial: %v", *m.MLPerf.OlympicAverageMin)
	}
}

// TestComputeCluster is two nodes of one data-parallel job.
func TestComputeCluster(t *testing.T) {
	a, b := onNode("a"), onNode("b")
	events := []Event{
		ev(DataReadStart, 0, a),
		ev(DataReadStart, 10, b),
		ev(DataReadEnd, 50, a),
		ev(DataReadEnd, 80, b),
		ev(TrainStart, 100, a),
		ev(TrainStart, 100, b),
		ev(EpochStart, 200, a, num(1)),
		ev(EpochStart, 300, b, num(1)),
		ev(Power, 500, a, val(100)),
		ev(Power, 500, b, val(200)),
		ev(Power, 1000, a, val(120)),
		ev(Utilization, 250, a, val(0.2)),
		ev(Utilization, 260, a, val(0.2)),
		ev(Utilization, 270, a, val(0.2)),
		ev(Utilization, 250, b, val(0.2)), // before b's own epoch window: not counted
		ev(Utilization, 1300, b, val(0.6)),
		ev(Utilization, 1310, b, val(0.6)),
		ev(Utilization, 1320, b, val(0.6)),
		ev(Send, 1000, a, withID("x")),
		ev(Receive, 1003, b, withID("x")),
		ev(Send, 1100, b, withID("y")),
		ev(Receive, 1101, a, withID("y")),
		ev(EpochEnd, 1200, a, num(1), count(500)),
		ev(EpochEnd, 1400, b, num(1), count(500)),
		ev(ValidationStart, 1420, a, num(1)),
		ev(ValidationEnd, 1480, a, num(1), val(0.7)),
		ev(TrainEnd, 1500, a),
		ev(TrainEnd, 1600, b),
	}
	m, err := Compute(events, Config{TrainingSetMB: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Problems) != 0 {
		t.Errorf("problems: %v", m.Problems)
	}
	tr := m.Trials[0]
	// T_L ends at the last node's data (IN-28): 80 − 0. T_TR: 1600 − 100.
	checkF(t, "T_L", tr.TLMs, 80)
	checkF(t, "T_TR", tr.TTRMs, 1500)
	checkNil(t, "T_T", tr.TTMs) // no persistence
	checkNil(t, "T_w", tr.TWMs)
	// Cluster epoch 1: 200 → 1400 = 1200 ms; Th = (500+500) / 1.2 s.
	checkF(t, "T_EP", tr.TEPMeanMs, 1200)
	checkF(t, "Th", tr.Throughput, 1000/1.2)
	// IN-32: Th_a = 500 / 1.0 s, Th_b = 500 / 1.1 s; Th_CL = their sum.
	if len(tr.Nodes) != 2 || tr.Nodes[0].Node != "a" {
		t.Fatalf("nodes %+v", tr.Nodes)
	}
	checkF(t, "Th_a", tr.Nodes[0].Throughput, 500)
	checkF(t, "Th_b", tr.Nodes[1].Throughput, 500/1.1)
	checkF(t, "Th_CL", tr.ClusterThroughput, 500+500/1.1)
	// P_TR-a = (100+120)/2 = 110, P_TR-b = 200; P_CTR = 310.
	checkF(t, "P_TR-a", tr.Nodes[0].PowerW, 110)
	checkF(t, "P_TR-b", tr.Nodes[1].PowerW, 200)
	checkF(t, "P_CTR", tr.ClusterPowerW, 310)
	// E.1.2 cluster: 310 W × 1.5 s = 465 J; 0.7 / (465 / 3.6e6 kWh).
	checkF(t, "cluster efficiency", tr.TrainingEfficiency, 0.7*3.6e6/465)
	// E_CL = 10 MB / (1.0 s × 110 W + 1.1 s × 200 W) = 10 / 330.
	checkF(t, "E_CL", tr.EnergyEfficiency, 10.0/330)
	// Epoch power: a's mean in its window 110, b's 200.
	checkF(t, "P_EP(1)", tr.Epochs[0].PowerW, 310)
	// T_NC: x 3 ms, y 1 ms.
	if m.NC == nil || m.NC.Count != 2 || !near(m.NC.Mean, 2) || !near(m.NC.Min, 1) || !near(m.NC.Max, 3) {
		t.Errorf("T_NC %+v", m.NC)
	}
	if len(m.Transfers) != 2 || m.Transfers[0].From != "a" || m.Transfers[0].To != "b" || !near(m.Transfers[0].Ms, 3) {
		t.Errorf("transfers %+v", m.Transfers)
	}
	// Table 9 (IN-34 (2)): each node's chip 0 in its own window of epoch
	// 1: a 0.2, b 0.6 (b's sample at 250 ms precedes its start at 300).
	// Server values 0.2 and 0.6; cluster p_1 = p = (0.2 + 0.6) / 2.
	checkF(t, "server p a", tr.Nodes[0].Utilization, 0.2)
	checkF(t, "server p b", tr.Nodes[1].Utilization, 0.6)
	checkF(t, "cluster p_1", tr.Epochs[0].Utilization, 0.4)
	checkF(t, "cluster p", tr.Utilization, 0.4)
	if !tr.UtilizationValid || !tr.Nodes[0].UtilizationValid || len(tr.Epochs[0].Chips) != 2 {
		t.Errorf("utilisation validity %v, chips %+v", tr.UtilizationValid, tr.Epochs[0].Chips)
	}
}

// TestComputeAbsent checks footnote d: what was not measured is absent,
// never zero.
func TestComputeAbsent(t *testing.T) {
	cases := []struct {
		name   string
		events []Event
		cfg    Config
		check  func(*testing.T, *Metrics)
	}{
		{"no events at all: no trials, nothing measured", nil, Config{}, func(t *testing.T, m *Metrics) {
			if len(m.Trials) != 0 || m.MeanTTRMs != nil || m.Throughput != nil || m.NC != nil {
				t.Errorf("%+v", m)
			}
		}},
		{"epochs without counts or a declared size: T_EP but no Th", []Event{
			ev(EpochStart, 0, num(1)), ev(EpochEnd, 10, num(1)),
			ev(ValidationStart, 10, num(1)), ev(ValidationEnd, 11, num(1), val(0.1)),
		}, Config{}, func(t *testing.T, m *Metrics) {
			tr := m.Trials[0]
			checkF(t, "T_EP", tr.TEPMeanMs, 10)
			checkNil(t, "Th", tr.Throughput)
			checkNil(t, "T_T", tr.TTMs)
			checkNil(t, "T_L", tr.TLMs)
			checkNil(t, "T_TR", tr.TTRMs)
			checkNil(t, "T_CV", tr.TCVMs)
			checkNil(t, "T_P", tr.TPMs)
			checkNil(t, "P_CTR", tr.ClusterPowerW)
			checkNil(t, "energy", tr.EnergyKWh)
			checkNil(t, "E_s", tr.EnergyEfficiency)
			checkNil(t, "efficiency", tr.TrainingEfficiency)
			if tr.ReachedTarget != nil {
				t.Error("target judged without a target")
			}
		}},
		{"declared size, text generation: tokens/s", []Event{
			ev(EpochStart, 0, num(1)), ev(EpochEnd, 2000, num(1)),
		}, Config{TrainingSetSize: 4096, TextGeneration: true}, func(t *testing.T, m *Metrics) {
			checkF(t, "Th", m.Trials[0].Throughput, 2048)
			checkF(t, "run Th", m.Throughput, 2048)
			if m.Unit != "tokens/s" {
				t.Errorf("unit %q", m.Unit)
			}
		}},
		{"power but no TrainStart: no P_TR, no energy", []Event{
			ev(Power, 10, val(100)), ev(EpochStart, 0, num(1)), ev(EpochEnd, 1000, num(1), count(5)),
		}, Config{TrainingSetMB: 1}, func(t *testing.T, m *Metrics) {
			tr := m.Trials[0]
			checkNil(t, "P_CTR", tr.ClusterPowerW)
			// The epoch window has a sample: P_EP = 100, E_s = 1/(1 s × 100 W).
			checkF(t, "E_s", tr.EnergyEfficiency, 0.01)
		}},
		{"lower-is-better metric: E.1.2 uses 1 − a", []Event{
			ev(TrainStart, 0), ev(Power, 0, val(3600)),
			ev(ValidationStart, 500, num(1)), ev(ValidationEnd, 600, num(1), val(0.05)),
			ev(TrainEnd, 1000),
		}, Config{Target: &Target{Metric: "WER", Value: 0.055, LowerIsBetter: true}}, func(t *testing.T, m *Metrics) {
			tr := m.Trials[0]
			// 3600 W × 1 s = 3600 J = 0.001 kWh; (1 − 0.05) / 0.001 = 950.
			checkF(t, "energy", tr.EnergyKWh, 0.001)
			checkF(t, "efficiency", tr.TrainingEfficiency, 950)
			if tr.ReachedTarget == nil || !*tr.ReachedTarget {
				t.Error("WER 0.05 < 0.055 should reach the target")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Compute(c.events, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, m)
		})
	}
}

func TestComputeProblems(t *testing.T) {
	cases := []struct {
		name     string
		events   []Event
		severity Severity
		message  string
		check    func(*testing.T, *Metrics)
	}{
		{"an epoch that ends before it starts is reported and left out", []Event{
			ev(EpochStart, 100, num(1)), ev(EpochEnd, 50, num(1)),
		}, Error, "ends before it starts", func(t *testing.T, m *Metrics) {
			if len(m.Trials[0].Epochs) != 0 {
				t.Errorf("epochs %+v", m.Trials[0].Epochs)
			}
		}},
		{"a second TrainStart in a trial: the first is kept", []Event{
			ev(TrainStart, 0), ev(TrainStart, 10), ev(TrainEnd, 100),
		}, Error, "a second train_start", func(t *testing.T, m *Metrics) {
			checkF(t, "T_TR", m.Trials[0].TTRMs, 100)
		}},
		{"an EpochEnd without start", []Event{
			ev(EpochEnd, 10, num(3)),
		}, Error, "epoch_end 3 without a epoch_start", nil},
		{"a Receive without Send", []Event{
			ev(Receive, 10, withID("z")),
		}, Error, `receive "z" without a send`, func(t *testing.T, m *Metrics) {
			if m.NC != nil {
				t.Errorf("T_NC %+v", m.NC)
			}
		}},
		{"a TrainEnd without TrainStart", []Event{
			ev(TrainEnd, 10),
		}, Error, "without a TrainStart", nil},
		{"an epoch that never ends", []Event{
			ev(EpochStart, 10, num(1)),
		}, Warning, "never ends", nil},
		{"conversion before training exits (IN-30 ordering: a warning)", []Event{
			ev(TrainStart, 0), ev(ConversionStart, 50), ev(ConversionEnd, 60), ev(TrainEnd, 100),
		}, Warning, "conversion starts before training exits", func(t *testing.T, m *Metrics) {
			checkF(t, "T_CV still computed", m.Trials[0].TCVMs, 10)
		}},
		{"an epoch outside T_TR (IN-30)", []Event{
			ev(EpochStart, 0, num(1)), ev(TrainStart, 5), ev(EpochEnd, 10, num(1)), ev(TrainEnd, 20),
		}, Warning, "epoch 1 starts before TrainStart", nil},
		{"the last accelerator starts after the first epoch (IN-30)", []Event{
			ev(TrainStart, 0), ev(EpochStart, 5, num(1)), ev(AcceleratorStart, 6), ev(EpochEnd, 10, num(1)),
		}, Warning, "last accelerator starts after the first epoch", func(t *testing.T, m *Metrics) {
			checkF(t, "T_w still computed", m.Trials[0].TWMs, 6)
		}},
		{"no accuracy before training exits", []Event{
			ev(EpochStart, 0, num(1)), ev(EpochEnd, 10, num(1)),
		}, Warning, "no accuracy before training exits", nil},
		{"a NaN accuracy is ignored, not carried into the results", []Event{
			ev(ValidationStart, 0, num(1)), ev(ValidationEnd, 1, num(1), val(math.NaN())),
		}, Error, "not a finite number", func(t *testing.T, m *Metrics) {
			checkNil(t, "accuracy", m.Trials[0].FinalAccuracy)
		}},
		{"a utilisation above 1", []Event{
			ev(Utilization, 0, val(1.5)),
		}, Error, "outside [0, 1]", nil},
		{"a negative power", []Event{
			ev(Power, 0, val(-1)),
		}, Error, "negative", nil},
		{"a utilisation sample without a value", []Event{
			{Kind: Utilization},
		}, Error, "utilization sample without a value", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Compute(c.events, Config{})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range m.Problems {
				if p.Severity == c.severity && strings.Contains(p.Message, c.message) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s containing %q in %v", c.severity, c.message, m.Problems)
			}
			if c.check != nil {
				c.check(t, m)
			}
		})
	}
}

func TestComputeEpochCountWarning(t *testing.T) {
	m, err := Compute([]Event{ev(EpochStart, 0, num(1)), ev(EpochEnd, 1, num(1)), ev(ValidationStart, 1, num(1)), ev(ValidationEnd, 2, num(1), val(1))}, Config{Epochs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "1 complete epochs, expected 2") {
		t.Errorf("problems %v", m.Problems)
	}
}

func TestComputeBadConfig(t *testing.T) {
	cases := []struct {
		reason string
		cfg    Config
	}{
		{"negative training-set size", Config{TrainingSetSize: -1}},
		{"negative node set size", Config{NodeSetSize: map[string]int64{"a": -1}}},
		{"NaN megabytes", Config{TrainingSetMB: math.NaN()}},
		{"negative alpha", Config{Alpha: -1}},
		{"negative epochs", Config{Epochs: -1}},
		{"zero baseline", Config{Workloads: []Workload{{Name: "T1-1", Weight: 1}}}},
		{"weight above 1", Config{Workloads: []Workload{{Name: "T1-1", Baseline: 1, Weight: 2}}}},
	}
	for _, c := range cases {
		if _, err := Compute(nil, c.cfg); err == nil {
			t.Errorf("%s: no error", c.reason)
		}
	}
}

// TestThBar works the effective computing power by hand (IN-33).
func TestThBar(t *testing.T) {
	oneEpoch := []Event{ev(EpochStart, 0, num(1)), ev(EpochEnd, 1000, num(1), count(500))} // Th = 500/s
	cases := []struct {
		reason    string
		workloads []Workload
		alpha     float64
		want      float64
	}{
		{"ratios 2 and 1/2 at equal weights cancel: α = 100", []Workload{{"a", 20, 10, 0.5}, {"b", 5, 10, 0.5}}, 0, 100},
		{"4^0.25 · 1^0.75 = √2", []Workload{{"a", 40, 10, 0.25}, {"b", 10, 10, 0.75}}, 0, 100 * math.Sqrt2},
		{"throughput 0 takes this run's Th (500/250 = 2), α = 1", []Workload{{"run", 0, 250, 1}}, 1, 2},
		{"weights summing to 2 are normalised: (2·1)^(1/2)·… = √2", []Workload{{"a", 2, 1, 1}, {"b", 1, 1, 1}}, 1, math.Sqrt2},
	}
	for _, c := range cases {
		m, err := Compute(oneEpoch, Config{Workloads: c.workloads, Alpha: c.alpha})
		if err != nil {
			t.Fatalf("%s: %v", c.reason, err)
		}
		if m.ThBar == nil || !near(*m.ThBar, c.want) {
			t.Errorf("%s: Th-bar %v, want %v", c.reason, m.ThBar, c.want)
		}
	}
	// All weights zero: reported, Th-bar absent.
	m, err := Compute(oneEpoch, Config{Workloads: []Workload{{"a", 1, 1, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if m.ThBar != nil || len(m.Problems) == 0 {
		t.Errorf("zero weights: Th-bar %v, problems %v", m.ThBar, m.Problems)
	}
}

func TestOlympicAverage(t *testing.T) {
	cases := []struct {
		reason       string
		scores       []float64
		failed, drop int
		want         float64 // NaN: nil
	}{
		{"5 runs: drop fastest 1 and slowest 5, mean of 2, 3, 4", []float64{5, 1, 3, 4, 2}, 0, 1, 3},
		{"1 failed counts as the dropped slowest: drop 1, mean of 2, 3, 4", []float64{4, 1, 3, 2}, 1, 1, 3},
		{"2 failed with drop 1: no score", []float64{1, 2, 3}, 2, 1, math.NaN()},
		{"2 runs: nothing left", []float64{1, 2}, 0, 1, math.NaN()},
		{"drop 2 of 10", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0, 2, 5.5},
	}
	for _, c := range cases {
		got := OlympicAverage(c.scores, c.failed, c.drop)
		switch {
		case math.IsNaN(c.want) && got != nil:
			t.Errorf("%s: %v, want none", c.reason, *got)
		case !math.IsNaN(c.want) && (got == nil || !near(*got, c.want)):
			t.Errorf("%s: %v, want %v", c.reason, got, c.want)
		}
	}
}

// TestComputeTrials runs five trials of different lengths, one of them
// aborted, and checks the per-trial times and the MLPerf score.
func TestComputeTrials(t *testing.T) {
	var events []Event
	lengths := []float64{6000, 12000, 18000, 24000, 30000} // 0.1 … 0.5 min
	for i, l := range lengths {
		tr := inTrial(i + 1)
		st := "success"
		if i == 4 {
			st = "aborted"
		}
		base := float64(i) * 100000
		events = append(events,
			ev(TrialStart, base, tr), ev(TrainStart, base, tr),
			ev(ValidationStart, base+l-10, tr, num(1)), ev(ValidationEnd, base+l-5, tr, num(1), val(0.9)),
			ev(TrainEnd, base+l, tr, status(st)), ev(TrialEnd, base+l, tr, status(st)))
	}
	m, err := Compute(events, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Trials) != 5 {
		t.Fatalf("%d trials", len(m.Trials))
	}
	for i, tr := range m.Trials {
		checkF(t, "T_TR", tr.TTRMs, lengths[i])
	}
	// Mean T_TR = 18000. Olympic: trial 5 failed (the dropped slowest);
	// of 0.1, 0.2, 0.3, 0.4 drop the fastest: mean(0.2, 0.3, 0.4) = 0.3.
	checkF(t, "mean T_TR", m.MeanTTRMs, 18000)
	if m.MLPerf.Failed != 1 || m.MLPerf.Drop != 1 {
		t.Errorf("mlperf %+v", m.MLPerf)
	}
	checkF(t, "olympic", m.MLPerf.OlympicAverageMin, 0.3)
}

// TestComputeAutoMLGenerations: each AutoML generation (Annex B) numbers
// its epochs from 1 again. Two generations of two epochs each are four
// epochs, numbered 1–4 in generation order, with no duplicate reported.
// By hand: epochs last 10, 20 (generation 1) and 30, 40 ms (generation 2),
// so the mean T_EP is 25 ms and 100 samples per epoch give 4000 samples/s.
func TestComputeAutoMLGenerations(t *testing.T) {
	evs := []Event{
		ev(TrainStart, 0),
		ev(GenerationStart, 0, num(1)),
		ev(EpochStart, 0, num(1)), ev(EpochEnd, 10, num(1), count(100)),
		ev(EpochStart, 10, num(2)), ev(EpochEnd, 30, num(2), count(100)),
		ev(GenerationEnd, 30, num(1), count(64)),
		ev(GenerationStart, 30, num(2)),
		ev(EpochStart, 30, num(1)), ev(EpochEnd, 60, num(1), count(100)),
		ev(EpochStart, 60, num(2)), ev(EpochEnd, 100, num(2), count(100)),
		ev(GenerationEnd, 100, num(2), count(128)),
		ev(TrainEnd, 100, status("success")),
	}
	m, err := Compute(evs, Config{TrainingSetSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Problems {
		if p.Severity == Error {
			t.Errorf("problem: %v", p.Message)
		}
	}
	if len(m.Trials) != 1 {
		t.Fatalf("%d trials", len(m.Trials))
	}
	eps := m.Trials[0].Epochs
	want := []float64{10, 20, 30, 40}
	if len(eps) != len(want) {
		t.Fatalf("%d epochs, want 4 (two generations of two)", len(eps))
	}
	for i, em := range eps {
		if em.Epoch != i+1 || !near(em.TEPMs, want[i]) {
			t.Errorf("epoch %d: number %d, T_EP %v ms; want %d, %v", i, em.Epoch, em.TEPMs, i+1, want[i])
		}
	}
}
