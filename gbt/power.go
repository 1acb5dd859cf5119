package gbt

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"aimeter/loadgen"
)

// JoulesPerKWh converts kWh to J (IN-01).
const JoulesPerKWh = 3.6e6

// PowerGrid is the whole-machine load power of each server of the SUT at
// common instants (GB-7.6.3-T17-cluster, IN-73): the input of the Table 17
// power metrics and the Annex E energy efficiencies. The caller resamples
// its meters onto the grid (package telemetry does, from a run's
// readings); a grid of one server is a single-machine test.
type PowerGrid struct {
	// T are the instants, ns on the records' clock, strictly increasing.
	T []int64 `json:"t_ns"`
	// MaxGapNs is the longest time between two instants over which power
	// is interpolated when an energy is integrated; 0 means no bound.
	MaxGapNs int64 `json:"max_gap_ns"`
	// Servers are the servers' powers.
	Servers []ServerPower `json:"servers"`
}

// ServerPower is one server's power at the instants of a PowerGrid.
type ServerPower struct {
	// Node names the server ("" for the only one).
	Node string `json:"node"`
	// W is its power at each instant, W; NaN where it had no reading.
	W []float64 `json:"w"`
}

// Validate checks that the grid's instants increase and that every
// server has one finite, non-negative value (or NaN) per instant; errors
// name the field.
func (g *PowerGrid) Validate() error {
	for i := 1; i < len(g.T); i++ {
		if g.T[i] <= g.T[i-1] {
			return fmt.Errorf("gbt: power grid: t_ns[%d] = %d after %d: want strictly increasing", i, g.T[i], g.T[i-1])
		}
	}
	if g.MaxGapNs < 0 {
		return fmt.Errorf("gbt: power grid: max_gap_ns %d: want ≥ 0", g.MaxGapNs)
	}
	if len(g.Servers) == 0 {
		return errors.New("gbt: power grid: servers: want at least one")
	}
	for s, sv := range g.Servers {
		if len(sv.W) != len(g.T) {
			return fmt.Errorf("gbt: power grid: servers[%d] (%q): %d values for %d instants", s, sv.Node, len(sv.W), len(g.T))
		}
		for i, w := range sv.W {
			if math.IsInf(w, 0) || w < 0 {
				return fmt.Errorf("gbt: power grid: servers[%d] (%q).w[%d] = %v: want a finite power ≥ 0 W, or NaN for none", s, sv.Node, i, w)
			}
		}
	}
	return nil
}

// ServerPowerMetrics are one server's Table 17 powers, W. A figure is nil
// where no instant of the grid falls in its window, and Notes say so.
type ServerPowerMetrics struct {
	Node string `json:"node"`
	// AvgW is the single-machine inference average power
	// (GB-7.6.3-T17-avg): the mean of the samples inside the union of the
	// samples' [t_INS, t_INE] intervals (IN-71); AvgSamples counts them.
	AvgW       *float64 `json:"avg_w"`
	AvgSamples int      `json:"avg_samples"`
	// RunAvgW is the mean over the whole run T_I (IN-71), over
	// RunSamples samples.
	RunAvgW    *float64 `json:"run_avg_w"`
	RunSamples int      `json:"run_samples"`
	// PreAvgW is the data-preprocessing average power
	// (GB-7.6.3-T17-pre): the mean inside the union of the [t_IPRS,
	// t_IPRE] intervals, over PreSamples samples.
	PreAvgW    *float64 `json:"pre_avg_w"`
	PreSamples int      `json:"pre_samples"`
	// PeakW is the inference peak power (GB-7.6.3-T17-peak): the largest
	// sample over the whole run T_I (IN-72).
	PeakW *float64 `json:"peak_w"`
	Notes []string `json:"notes,omitempty"`
}

// PowerMetrics are the Table 17 powers of a run (GB-7.6.3) and the
// Annex E inference energy efficiencies (GB-E.2.1-vision, GB-E.2.2-single).
type PowerMetrics struct {
	// Servers are each server's powers.
	Servers []ServerPowerMetrics `json:"servers"`
	// ClusterAvgW is the cluster inference average power
	// (GB-7.6.3-T17-cluster): the mean over the instants of T_I at which
	// every server has a value of the sum of the servers' powers, over
	// ClusterInstants instants; nil for a single server.
	ClusterAvgW     *float64 `json:"cluster_avg_w,omitempty"`
	ClusterInstants int      `json:"cluster_instants,omitempty"`
	// EnergyRatio is the Table E.3 inference energy-efficiency ratio;
	// nil without a mean power or a T_DIP time base.
	EnergyRatio *EnergyRatio `json:"energy_efficiency_ratio,omitempty"`
	// Efficiency are the Table E.4 inference efficiencies, one per
	// accuracy metric with a value (IN-87); empty without an energy
	// within T_DIP.
	Efficiency []InferenceEfficiency `json:"inference_efficiency,omitempty"`
	// EnergyTDIPJ is the SUT's energy within the union of the T_DIP
	// intervals (GB-E.2.2-FNb, IN-86): the sum over servers of the
	// integral of their power, interpolated between instants at most
	// MaxGapNs apart; TDIPCoverage is the share of the union so covered.
	EnergyTDIPJ  *float64 `json:"energy_t_dip_j,omitempty"`
	TDIPCoverage float64  `json:"t_dip_coverage"`
	Notes        []string `json:"notes,omitempty"`
}

// EnergyRatio is the Table E.3 energy-efficiency ratio (GB-E.2.1-vision,
// -nlp, -speech): N / (T_DIP × P̄_I), the returned items over the energy
// of the T_DIP time base at the mean power during the end-to-end times.
type EnergyRatio struct {
	// Items counts the returned results (images, frames, words,
	// sentences: Unit says which); TDIPs is the covered T_DIP time, s
	// (Throughput.CoverNs); MeanPowerW is P̄_I, the mean of the SUT's power
	// (the sum over servers) inside the union of the samples' end-to-end
	// intervals [issued, completed].
	Items      int     `json:"items"`
	Unit       string  `json:"unit"`
	TDIPs      float64 `json:"t_dip_s"`
	MeanPowerW float64 `json:"mean_power_w"`
	// PerJ is N / (T_DIP[s] × P̄_I[W]) (IN-85); PerKWh the same per kWh.
	PerJ   float64 `json:"per_j"`
	PerKWh float64 `json:"per_kwh"`
	// Literal is the formula as the standard prints it, N / (T_DIP /
	// P̄_I), in items·W/s: kept for comparison, not a ratio per joule
	// (IN-85).
	Literal float64 `json:"literal"`
	// Formula names the formula of PerJ.
	Formula string `json:"formula"`
	// Conformant is false when T_DIP is the tester-side span
	// (Throughput.Basis).
	Conformant bool `json:"conformant"`
}

// InferenceEfficiency is one Table E.4 inference efficiency
// (GB-E.2.2-single, GB-E.2.2-cluster): an accuracy over the energy within
// T_DIP, per kWh.
type InferenceEfficiency struct {
	Metric string `json:"metric"`
	// Accuracy is the value used: the fraction, or one minus it for a
	// lower-is-better metric (GB-E.2.2-FNa, IN-87).
	Accuracy      float64 `json:"accuracy"`
	LowerIsBetter bool    `json:"lower_is_better,omitempty"`
	// EnergyKWh is P_s, the energy within T_DIP, kWh (IN-86).
	EnergyKWh float64 `json:"energy_kwh"`
	// PerKWh is Accuracy / EnergyKWh, 1/kWh.
	PerKWh float64 `json:"per_kwh"`
}

// interval is a half-open stretch of the records' clock.
type interval struct{ from, to int64 }

// unionOf merges intervals into disjoint ones in time order.
func unionOf(iv []interval) []interval {
	slices.SortFunc(iv, func(a, b interval) int { return cmp.Compare(a.from, b.from) })
	var out []interval
	for _, x := range iv {
		if x.to <= x.from {
			continue
		}
		if n := len(out); n > 0 && x.from <= out[n-1].to {
			out[n-1].to = max(out[n-1].to, x.to)
			continue
		}
		out = append(out, x)
	}
	return out
}

// inUnion reports whether t lies in one of u's intervals (closed at both
// ends, so that a sample at an interval's edge counts).
func inUnion(u []interval, t int64) bool {
	i, _ := slices.BinarySearchFunc(u, t, func(x interval, t int64) int { return cmp.Compare(x.to, t) })
	return i < len(u) && u[i].from <= t
}

// meanIn is the mean and count of w's values (NaN skipped) at instants
// that keep says to.
func meanIn(ts []int64, w []float64, keep func(int64) bool) (*float64, int) {
	sum, n := 0.0, 0
	for i, t := range ts {
		if !math.IsNaN(w[i]) && keep(t) {
			sum += w[i]
			n++
		}
	}
	if n == 0 {
		return nil, 0
	}
	m := sum / float64(n)
	return &m, n
}

// integrate is the integral of w over the union u, J, with w linear
// between consecutive instants at most maxGap apart (0: any) and both
// known; covered is the length of u so integrated, ns.
func integrate(ts []int64, w []float64, maxGap int64, u []interval) (energy float64, covered int64) {
	for i := 1; i < len(ts); i++ {
		a, b := ts[i-1], ts[i]
		if math.IsNaN(w[i-1]) || math.IsNaN(w[i]) || (maxGap > 0 && b-a > maxGap) {
			continue
		}
		// The intervals of u that meet [a, b].
		k, _ := slices.BinarySearchFunc(u, a, func(x interval, t int64) int { return cmp.Compare(x.to, t) })
		for ; k < len(u) && u[k].from < b; k++ {
			lo, hi := max(a, u[k].from), min(b, u[k].to)
			if hi <= lo {
				continue
			}
			at := func(t int64) float64 { return w[i-1] + (w[i]-w[i-1])*float64(t-a)/float64(b-a) }
			energy += (at(lo) + at(hi)) / 2 * float64(hi-lo) / 1e9
			covered += hi - lo
		}
	}
	return energy, covered
}

// PowerOptions are the inputs of ComputePower beyond the grid.
type PowerOptions struct {
	// Records and Stages are the main jobs' samples (stage times parallel
	// to the records, nil without); the T_IN, T_IPR and T_DIP intervals
	// come from the stage times on the test clock.
	Records []loadgen.Record
	Stages  []loadgen.StageTimes
	// RunNs is the end of T_I, ns from the records' zero (Test.EndNs); 0
	// means the last completion.
	RunNs int64
	// Throughput is the run's Table 18 throughput (its T_DIP time base
	// and returned samples).
	Throughput Throughput
	// Unit is the scenario's item ("images", "sentences", "tokens"), from
	// its throughput unit; "" means "samples".
	Unit string
	// Accuracy are the run's accuracy results, for Table E.4.
	Accuracy []AccuracyResult
}

// ComputePower computes the Table 17 powers and the Annex E inference
// energy efficiencies of a run from its power grid. It invents nothing: a
// figure whose window holds no instant of the grid is nil, with a note.
func ComputePower(g PowerGrid, o PowerOptions) (PowerMetrics, error) {
	if err := g.Validate(); err != nil {
		return PowerMetrics{}, err
	}
	if o.Stages != nil && len(o.Stages) != len(o.Records) {
		return PowerMetrics{}, fmt.Errorf("gbt: power: %d records but %d stage times", len(o.Records), len(o.Stages))
	}
	end := o.RunNs
	var e2e, tin, tipr, tdip []interval
	for i := range o.Records {
		r := &o.Records[i]
		if r.CompletedNs != loadgen.NoTime {
			end = max(end, r.CompletedNs)
			if r.Status == loadgen.StatusOK {
				e2e = append(e2e, interval{r.IssuedNs, r.CompletedNs})
			}
		}
		if o.Stages == nil {
			continue
		}
		s := &o.Stages[i]
		if s.Clock != loadgen.TestClock {
			continue
		}
		if s.InferenceStart != loadgen.NoTime && s.InferenceEnd != loadgen.NoTime {
			tin = append(tin, interval{s.InferenceStart, s.InferenceEnd})
		}
		if s.PreprocessStart != loadgen.NoTime && s.PreprocessEnd != loadgen.NoTime {
			tipr = append(tipr, interval{s.PreprocessStart, s.PreprocessEnd})
		}
		if s.Received != loadgen.NoTime && processEnd(s) != loadgen.NoTime {
			tdip = append(tdip, interval{s.Received, processEnd(s)})
		}
	}
	e2e, tin, tipr, tdip = unionOf(e2e), unionOf(tin), unionOf(tipr), unionOf(tdip)
	inRun := func(t int64) bool { return t >= 0 && t <= end }
	var m PowerMetrics
	for _, sv := range g.Servers {
		sm := ServerPowerMetrics{Node: sv.Node}
		sm.RunAvgW, sm.RunSamples = meanIn(g.T, sv.W, inRun)
		sm.AvgW, sm.AvgSamples = meanIn(g.T, sv.W, func(t int64) bool { return inUnion(tin, t) })
		sm.PreAvgW, sm.PreSamples = meanIn(g.T, sv.W, func(t int64) bool { return inUnion(tipr, t) })
		for i, t := range g.T {
			if w := sv.W[i]; !math.IsNaN(w) && inRun(t) && (sm.PeakW == nil || w > *sm.PeakW) {
				sm.PeakW = &w
			}
		}
		switch {
		case len(tin) == 0:
			sm.Notes = append(sm.Notes, "no T_IN interval on the test clock: no average power during T_IN (see run_avg_w)")
		case sm.AvgW == nil:
			sm.Notes = append(sm.Notes, "no power sample inside the T_IN intervals: sample faster, or see run_avg_w (IN-71)")
		}
		switch {
		case len(tipr) == 0:
			sm.Notes = append(sm.Notes, "no T_IPR interval on the test clock: no preprocessing average power")
		case sm.PreAvgW == nil:
			sm.Notes = append(sm.Notes, "no power sample inside the T_IPR intervals: sample faster (IN-71)")
		}
		if sm.RunAvgW == nil {
			sm.Notes = append(sm.Notes, "no power sample in T_I")
		}
		m.Servers = append(m.Servers, sm)
	}
	// The SUT's power at each instant: the sum over servers where every
	// server has a value (GB-7.6.3-T17-cluster), NaN elsewhere.
	total := make([]float64, len(g.T))
	for i := range g.T {
		for _, sv := range g.Servers {
			total[i] += sv.W[i] // NaN stays NaN
		}
	}
	if len(g.Servers) > 1 {
		m.ClusterAvgW, m.ClusterInstants = meanIn(g.T, total, inRun)
		if m.ClusterAvgW == nil {
			m.Notes = append(m.Notes, "no instant of T_I at which every server has a reading: no cluster average power")
		}
	}
	// Table E.3: N / (T_DIP × P̄_I).
	meanI, _ := meanIn(g.T, total, func(t int64) bool { return inUnion(e2e, t) })
	th := o.Throughput
	unit := cmp.Or(o.Unit, "samples")
	switch {
	case meanI == nil:
		m.Notes = append(m.Notes, "no power sample inside the samples' end-to-end times: no energy-efficiency ratio (GB-E.2.1-vision)")
	case th.CoverNs <= 0:
		m.Notes = append(m.Notes, "no T_DIP time base: no energy-efficiency ratio (GB-E.2.1-vision)")
	case *meanI <= 0:
		m.Notes = append(m.Notes, "the mean power is 0 W: no energy-efficiency ratio")
	default:
		t := float64(th.CoverNs) / 1e9
		r := EnergyRatio{Items: th.Samples, Unit: unit, TDIPs: t, MeanPowerW: *meanI, Conformant: th.Conformant,
			Formula: "N / (T_DIP[s] × P̄_I[W]) (IN-85)"}
		r.PerJ = float64(th.Samples) / (t * *meanI)
		r.PerKWh = r.PerJ * JoulesPerKWh
		r.Literal = float64(th.Samples) / (t / *meanI)
		m.EnergyRatio = &r
	}
	// Table E.4: accuracy / P_s, P_s the energy within T_DIP.
	if len(tdip) == 0 {
		m.Notes = append(m.Notes, "no T_DIP interval on the test clock: no energy within T_DIP, no inference efficiency (GB-E.2.2-single)")
		return m, nil
	}
	energy, covered := integrate(g.T, total, g.MaxGapNs, tdip)
	var length int64
	for _, x := range tdip {
		length += x.to - x.from
	}
	m.TDIPCoverage = float64(covered) / float64(length)
	if covered == 0 {
		m.Notes = append(m.Notes, "no power readings around the T_DIP intervals: no energy within T_DIP")
		return m, nil
	}
	m.EnergyTDIPJ = &energy
	if m.TDIPCoverage < 1 {
		m.Notes = append(m.Notes, fmt.Sprintf("readings cover %.1f %% of the T_DIP intervals: the energy within T_DIP is over the covered part only, and the inference efficiency is left out", m.TDIPCoverage*100))
		return m, nil
	}
	if energy <= 0 {
		return m, nil
	}
	kwh := energy / JoulesPerKWh
	for _, a := range o.Accuracy {
		if a.Value == nil {
			continue
		}
		e := InferenceEfficiency{Metric: a.Metric, Accuracy: *a.Value, EnergyKWh: kwh}
		if a.Threshold != nil && a.Threshold.Comparator == Less {
			e.LowerIsBetter, e.Accuracy = true, 1-*a.Value
		}
		e.PerKWh = e.Accuracy / kwh
		m.Efficiency = append(m.Efficiency, e)
	}
	return m, nil
}

// itemOf is the item of a throughput unit: "images" for "images/s".
func itemOf(throughputUnit string) string {
	u, _, _ := strings.Cut(throughputUnit, "/")
	return u
}
