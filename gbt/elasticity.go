package gbt

import (
	"fmt"
	"math"
	"time"

	"aimeter/loadgen"
)

// DefaultPeakUnit is the unit of time of elasticity and pressure tolerance:
// 1 s (IN-76, IN-77: the standard leaves it open).
const DefaultPeakUnit = time.Second

// Time bases of the per-unit binning of a peak-mode run.
const (
	// BasisSUTReceived bins samples by t_ITR, the SUT's receipt (test clock),
	// and processed data by t_DIPE: what the tested party records
	// (GB-7.6.5-T19-EL b), GB-7.6.6-T20-PT b)).
	BasisSUTReceived = "sut_received"
	// BasisTesterIssue bins by the tester's issue and receipt times, used
	// when the stage times are not on the test clock. Not GB-conformant.
	BasisTesterIssue = "tester_issue"
)

// Burst is one burst window of the peak arrival mode (GB-7.4.2-T10-mode3,
// IN-49), in ns from the start of issuing, [StartNs, EndNs).
type Burst struct {
	StartNs int64 `json:"start_ns"` // first instant of the burst
	EndNs   int64 `json:"end_ns"`   // first instant after it
}

// PeakRun is a peak-mode run (GB-7.4.2-T10-mode3), the input of elasticity
// (GB-7.6.5-T19-EL) and pressure tolerance (GB-7.6.6-T20-PT).
type PeakRun struct {
	// Records are the issued samples, as loadgen.Result.Records yields them.
	Records []loadgen.Record
	// Stages is parallel to Records; nil when the SUT reported none.
	Stages []loadgen.StageTimes
	// RequestBytes is parallel to Records: the sample data the SUT
	// received for each sample (the payload of the request).
	RequestBytes []int64
	// ResponseBytes, optional (nil), is parallel to Records: the result
	// data returned for each sample.
	ResponseBytes []int64
	// Bursts are the burst windows of the peak mode (IN-49 asks that they
	// be recorded).
	Bursts []Burst
}

// check panics unless the parallel slices match.
func (p *PeakRun) check(fn string) {
	n := len(p.Records)
	if p.Stages != nil && len(p.Stages) != n {
		panic(fmt.Sprintf("gbt.%s: %d records but %d stage times", fn, n, len(p.Stages)))
	}
	if len(p.RequestBytes) != n {
		panic(fmt.Sprintf("gbt.%s: %d records but %d request sizes", fn, n, len(p.RequestBytes)))
	}
	if p.ResponseBytes != nil && len(p.ResponseBytes) != n {
		panic(fmt.Sprintf("gbt.%s: %d records but %d response sizes", fn, n, len(p.ResponseBytes)))
	}
}

// basis says how the run's samples are placed in time: on the SUT's receipt
// (test clock) when at least one sample has its receipt there, else on the
// tester's issue.
func (p *PeakRun) basis() string {
	for i := range p.Stages {
		if s := &p.Stages[i]; s.Clock == loadgen.TestClock && s.Received != loadgen.NoTime {
			return BasisSUTReceived
		}
	}
	return BasisTesterIssue
}

// arrival returns when sample i reached the SUT under basis, or NoTime.
func (p *PeakRun) arrival(basis string, i int) int64 {
	if basis == BasisTesterIssue {
		return p.Records[i].IssuedNs
	}
	s := &p.Stages[i]
	if s.Clock != loadgen.TestClock {
		return loadgen.NoTime
	}
	return s.Received
}

// finish returns when sample i's processing ended under basis (t_DIPE; the
// tester's receipt of a returned sample on BasisTesterIssue), or NoTime.
func (p *PeakRun) finish(basis string, i int) int64 {
	if basis == BasisTesterIssue {
		r := &p.Records[i]
		if r.Status == loadgen.StatusLost {
			return loadgen.NoTime
		}
		return r.CompletedNs
	}
	s := &p.Stages[i]
	if s.Clock != loadgen.TestClock || s.Received == loadgen.NoTime {
		return loadgen.NoTime
	}
	return processEnd(s)
}

// tdip returns sample i's T_DIP in ns (a difference of SUT times, valid on
// either clock), or NoTime.
func (p *PeakRun) tdip(i int) int64 {
	if p.Stages == nil {
		return loadgen.NoTime
	}
	s := &p.Stages[i]
	e := processEnd(s)
	if s.Received == loadgen.NoTime || e == loadgen.NoTime {
		return loadgen.NoTime
	}
	return absNs(e - s.Received)
}

// unitOf is the index of the unit of time holding t (t ≥ 0), or -1.
func unitOf(t, unit int64) int {
	if t < 0 {
		return -1
	}
	return int(t / unit)
}

// ElasticityOptions are the parameters of ComputeElasticity.
type ElasticityOptions struct {
	// Unit is the unit of time i of Table 19 (default DefaultPeakUnit).
	Unit time.Duration
}

// ElasticityUnit is what the tested party records for one unit of time i
// (GB-7.6.5-T19-EL b)): the sample data received, sizeInDuration(i), and the
// maximum T_DIP of the samples received in it.
type ElasticityUnit struct {
	Samples int   `json:"samples"` // samples received in the unit
	Bytes   int64 `json:"bytes"`   // sizeInDuration(i), bytes
	// MaxTDIPNs is max T_DIP in ns; NoTime when no sample received in the
	// unit has a measured T_DIP.
	MaxTDIPNs int64 `json:"max_t_dip_ns"`
}

// ElasticityPair is one qualifying interval (i, i+1) of Table 19 c).
type ElasticityPair struct {
	// I is the first unit of the interval (i, i+1).
	I int `json:"i"`
	// EL is the literal EL(i, i+1), dimensionless.
	EL float64 `json:"el"`
	// Classical is (ΔmaxT/maxT_i) / (ΔS/S_i); PercentPerMB is
	// (ΔmaxT/maxT_i × 100) / ΔS[MB] (IN-76 variants).
	Classical    float64 `json:"classical"`
	PercentPerMB float64 `json:"percent_per_mb"`
}

// Elasticity is the inference elasticity of a peak-mode run
// (GB-7.6.5-T19-EL).
type Elasticity struct {
	// Available is false when EL is undefined (reported "--"); Reason says
	// why.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	// Basis is BasisSUTReceived or BasisTesterIssue.
	Basis string `json:"basis"`
	// Note labels a non-conformant basis.
	Note string `json:"note,omitempty"`
	// UnitNs is the unit of time i.
	UnitNs int64 `json:"unit_ns"`
	// Value is the literal EL = Σ EL(i,i+1) / N, a product of two
	// dimensionless relative changes; Percent is Value × 100, the value
	// reported in the standard's unit (IN-76).
	Value   float64 `json:"el"`
	Percent float64 `json:"el_percent"`
	// Classical and PercentPerMB are the means of the two non-conformant
	// IN-76 variants over the same N intervals, for analysis only.
	Classical    float64 `json:"el_classical"`
	PercentPerMB float64 `json:"el_percent_per_mb"`
	// N is the number of qualifying intervals; Skipped counts intervals
	// with S(i+1) > S(i) left out because S(i) = 0 or a maximum T_DIP is
	// 0 or unmeasured (IN-76).
	N       int `json:"n"`
	Skipped int `json:"skipped"`
	// Pairs lists the qualifying intervals; Units the per-unit records.
	Pairs []ElasticityPair `json:"pairs"`
	Units []ElasticityUnit `json:"units"`
}

// ComputeElasticity computes the inference elasticity of a peak-mode run,
// reading Table 19 literally (GB-7.6.5-T19-EL, IN-76):
//
//	EL(i,i+1) = ((maxT(i+1) − maxT(i)) / maxT(i)) × ((S(i+1) − S(i)) / S(i))
//	EL        = Σ EL(i,i+1) / N
//
// for the consecutive units of time (i, i+1) with S(i+1) > S(i), where
// S(i) = sizeInDuration(i) is the request data (MB = 10^6 bytes) the SUT
// received in unit i (GB-7.6.5-T19-FNa) and maxT(i) the largest T_DIP of
// the samples received in unit i. Units run from the start of issuing. A
// pair with S(i) = 0, maxT(i) = 0 or a unit without any measured T_DIP is
// skipped (IN-76); with N = 0 the result is not available ("--").
//
// Samples are placed by their receipt on the SUT (test clock); when no stage
// time is on the test clock they are placed by their issue time instead and
// Basis says so. T_DIP needs stage times.
func ComputeElasticity(run PeakRun, opts ElasticityOptions) Elasticity {
	run.check("ComputeElasticity")
	unit := int64(opts.Unit)
	if unit <= 0 {
		unit = int64(DefaultPeakUnit)
	}
	el := Elasticity{Basis: run.basis(), UnitNs: unit}
	if el.Basis == BasisTesterIssue {
		el.Note = "not GB-conformant: no SUT receipt time on the test clock; samples are placed by their issue time"
	}
	if run.Stages == nil {
		el.Reason = ReasonNoStages + ": T_DIP is unknown"
		return el
	}
	nUnits := 0
	for i := range run.Records {
		if k := unitOf(run.arrival(el.Basis, i), unit); k >= nUnits {
			nUnits = k + 1
		}
	}
	el.Units = make([]ElasticityUnit, nUnits)
	for k := range el.Units {
		el.Units[k].MaxTDIPNs = loadgen.NoTime
	}
	for i := range run.Records {
		k := unitOf(run.arrival(el.Basis, i), unit)
		if k < 0 {
			continue
		}
		u := &el.Units[k]
		u.Samples++
		u.Bytes += run.RequestBytes[i]
		if t := run.tdip(i); t != loadgen.NoTime && t > u.MaxTDIPNs {
			u.MaxTDIPNs = t
		}
	}
	var sum, sumClassical, sumPerMB float64
	for i := 0; i+1 < len(el.Units); i++ {
		a, b := el.Units[i], el.Units[i+1]
		if !(b.Bytes > a.Bytes) {
			continue
		}
		if a.Bytes <= 0 || a.MaxTDIPNs <= 0 || b.MaxTDIPNs == loadgen.NoTime {
			el.Skipped++
			continue
		}
		relT := float64(b.MaxTDIPNs-a.MaxTDIPNs) / float64(a.MaxTDIPNs)
		relS := float64(b.Bytes-a.Bytes) / float64(a.Bytes)
		p := ElasticityPair{
			I:            i,
			EL:           relT * relS,
			Classical:    relT / relS,
			PercentPerMB: relT * 100 / (float64(b.Bytes-a.Bytes) / bytesPerMB),
		}
		el.Pairs = append(el.Pairs, p)
		sum += p.EL
		sumClassical += p.Classical
		sumPerMB += p.PercentPerMB
	}
	el.N = len(el.Pairs)
	if el.N == 0 {
		el.Reason = "no interval (i, i+1) has more data received in unit i+1 than in unit i with a measured T_DIP (IN-76)"
		return el
	}
	n := float64(el.N)
	el.Available = true
	el.Value = sum / n
	el.Percent = el.Value * 100
	el.Classical = sumClassical / n
	el.PercentPerMB = sumPerMB / n
	return el
}

// Units of the concurrency-pressure threshold (IN-77).
const (
	PressureMBPerSecond   = "MB/s"
	PressureJobsPerSecond = "jobs/s"
)

// PressureOptions are the parameters of ComputePressureTolerance.
type PressureOptions struct {
	// Unit is the period at which the concurrency is sampled (default
	// DefaultPeakUnit, IN-77).
	Unit time.Duration
	// Threshold is the concurrency-pressure threshold, in ThresholdUnit
	// (PressureMBPerSecond or PressureJobsPerSecond, the default). A unit is
	// over the threshold when its received rate is strictly greater.
	Threshold     float64
	ThresholdUnit string
	// Sigma is the peak mode's burst concurrency σ in jobs/s
	// (gbt.Arrival.Concurrency). With Threshold 0, the threshold defaults
	// to σ/2 jobs/s (IN-77 asks for a default derived from σ; half of σ is
	// aimeter's choice: a unit wholly inside a burst receives about σ + λ
	// jobs, one outside about λ ≪ σ). Threshold 0 and Sigma 0 is an error.
	Sigma float64
}

// PressureTolerance is the inference pressure tolerance of a peak-mode run
// (GB-7.6.6-T20-PT).
type PressureTolerance struct {
	// Available is false when no unit was over the threshold; Reason says
	// why.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	// Basis is BasisSUTReceived or BasisTesterIssue; UnitNs the sampling
	// period.
	Basis  string `json:"basis"`
	UnitNs int64  `json:"unit_ns"`
	// Threshold, in ThresholdUnit; ThresholdDerived when it came from σ.
	Threshold        float64 `json:"threshold"`
	ThresholdUnit    string  `json:"threshold_unit"`
	ThresholdDerived bool    `json:"threshold_derived"`
	// OverUnits counts the sampling periods over the threshold; OverNs is
	// T_over, their total length.
	OverUnits int   `json:"over_units"`
	OverNs    int64 `json:"t_over_ns"`
	// OverBytes is D_over: the request data of the samples whose processing
	// ended (t_DIPE) in an over-threshold period.
	OverBytes int64 `json:"d_over_bytes"`
	// MBPerSecond is PT = D_over / T_over (MB/s), the literal metric.
	MBPerSecond float64 `json:"pt_mb_per_s"`
	// OutputMBPerSecond is the result data returned over the same periods
	// (only with ResponseBytes).
	OutputMBPerSecond float64 `json:"output_mb_per_s,omitempty"`
	// Samples and Tokens are the returned (status ok) samples and their
	// tokens that finished in over-threshold periods; SamplesPerSecond and
	// TokensPerSecond are the 7.6.4 throughput over them
	// (GB-7.6.6-T20-note, IN-77: report both).
	Samples          int     `json:"samples"`
	Tokens           int64   `json:"tokens"`
	SamplesPerSecond float64 `json:"samples_per_s"`
	TokensPerSecond  float64 `json:"tokens_per_s"`
	// OverInBurstNs is how much of T_over lies inside the burst windows.
	OverInBurstNs int64 `json:"over_in_burst_ns"`
	// Warnings flag a doubtful threshold or a non-conformant basis.
	Warnings []string `json:"warnings,omitempty"`
}

// ComputePressureTolerance computes the inference pressure tolerance of a
// peak-mode run (GB-7.6.6-T20-PT, IN-77): the concurrency is sampled every
// unit of time as the rate of sample data (MB/s) or of samples (jobs/s) the
// SUT received in that unit; T_over is the total length of the units whose
// concurrency is greater than the threshold, D_over the request data
// processed in them (samples whose t_DIPE falls in them), and
//
//	PT = D_over / T_over   (MB/s)
//
// Alongside it reports the Table 18 throughput over the same units
// (GB-7.6.6-T20-note). Samples are placed as for ComputeElasticity (Basis).
// The burst windows only serve a check: a warning when no over-threshold
// unit touches a burst, or units outside every burst are over it.
func ComputePressureTolerance(run PeakRun, opts PressureOptions) (PressureTolerance, error) {
	run.check("ComputePressureTolerance")
	unit := int64(opts.Unit)
	if unit <= 0 {
		unit = int64(DefaultPeakUnit)
	}
	pt := PressureTolerance{Basis: run.basis(), UnitNs: unit, Threshold: opts.Threshold, ThresholdUnit: opts.ThresholdUnit}
	if pt.ThresholdUnit == "" {
		pt.ThresholdUnit = PressureJobsPerSecond
	}
	if pt.ThresholdUnit != PressureJobsPerSecond && pt.ThresholdUnit != PressureMBPerSecond {
		return pt, fmt.Errorf("gbt: pressure threshold unit %q, want %q or %q (IN-77)", pt.ThresholdUnit, PressureMBPerSecond, PressureJobsPerSecond)
	}
	switch {
	case opts.Threshold < 0 || math.IsNaN(opts.Threshold) || math.IsInf(opts.Threshold, 0):
		return pt, fmt.Errorf("gbt: pressure threshold %v, want a finite number ≥ 0", opts.Threshold)
	case opts.Threshold == 0 && opts.Sigma > 0 && !math.IsInf(opts.Sigma, 0):
		pt.Threshold, pt.ThresholdUnit, pt.ThresholdDerived = opts.Sigma/2, PressureJobsPerSecond, true
	case opts.Threshold == 0:
		return pt, fmt.Errorf("gbt: the concurrency-pressure threshold is a required tester parameter (IN-77): set Threshold or the peak mode's σ")
	}

	nUnits := 0
	for i := range run.Records {
		nUnits = max(nUnits, unitOf(run.arrival(pt.Basis, i), unit)+1, unitOf(run.finish(pt.Basis, i), unit)+1)
	}
	jobs := make([]int64, nUnits)
	bytes := make([]int64, nUnits)
	for i := range run.Records {
		if k := unitOf(run.arrival(pt.Basis, i), unit); k >= 0 {
			jobs[k]++
			bytes[k] += run.RequestBytes[i]
		}
	}
	secs := float64(unit) / nsPerSecond
	over := make([]bool, nUnits)
	outsideBurst := 0
	for k := range over {
		rate := float64(jobs[k]) / secs
		if pt.ThresholdUnit == PressureMBPerSecond {
			rate = float64(bytes[k]) / bytesPerMB / secs
		}
		if !(rate > pt.Threshold) {
			continue
		}
		over[k] = true
		pt.OverUnits++
		in := burstOverlap(run.Bursts, int64(k)*unit, int64(k+1)*unit)
		pt.OverInBurstNs += in
		if in == 0 {
			outsideBurst++
		}
	}
	pt.OverNs = int64(pt.OverUnits) * unit
	if pt.OverUnits == 0 {
		pt.Reason = fmt.Sprintf("the concurrency never exceeded the threshold %v %s", pt.Threshold, pt.ThresholdUnit)
		if len(run.Bursts) > 0 {
			pt.Warnings = append(pt.Warnings, "no unit of time was over the threshold although the run had bursts: the threshold may be too high")
		}
		return pt, nil
	}
	var outBytes int64
	for i := range run.Records {
		k := unitOf(run.finish(pt.Basis, i), unit)
		if k < 0 || !over[k] {
			continue
		}
		pt.OverBytes += run.RequestBytes[i]
		if run.ResponseBytes != nil {
			outBytes += run.ResponseBytes[i]
		}
		if r := &run.Records[i]; r.Status == loadgen.StatusOK {
			pt.Samples++
			pt.Tokens += r.Tokens
		}
	}
	overSecs := float64(pt.OverNs) / nsPerSecond
	pt.Available = true
	pt.MBPerSecond = float64(pt.OverBytes) / bytesPerMB / overSecs
	if run.ResponseBytes != nil {
		pt.OutputMBPerSecond = float64(outBytes) / bytesPerMB / overSecs
	}
	pt.SamplesPerSecond = float64(pt.Samples) / overSecs
	pt.TokensPerSecond = float64(pt.Tokens) / overSecs
	if len(run.Bursts) > 0 {
		if pt.OverInBurstNs == 0 {
			pt.Warnings = append(pt.Warnings, "no over-threshold unit of time overlaps a burst: the threshold may be too low or the bursts misplaced")
		} else if outsideBurst > 0 {
			pt.Warnings = append(pt.Warnings, fmt.Sprintf("%d over-threshold units of time lie outside every burst", outsideBurst))
		}
	}
	if pt.Basis == BasisTesterIssue {
		pt.Warnings = append(pt.Warnings, "not GB-conformant: no SUT receipt time on the test clock; concurrency and processed data are placed by the tester's issue and receipt times")
	}
	return pt, nil
}

// burstOverlap is the length of [start, end) inside the union of bursts.
// Bursts of the peak mode do not overlap (IN-49), so lengths add.
func burstOverlap(bursts []Burst, start, end int64) int64 {
	var total int64
	for _, b := range bursts {
		if s, e := max(start, b.StartNs), min(end, b.EndNs); e > s {
			total += e - s
		}
	}
	return total
}
