package gbt

import (
	"errors"
	"fmt"
	"time"

	"aimeter/loadgen"
)

// RunPart is the per-sample data of one workload of a run.
//
// Stages, when not nil, is as long as Records and in the same order:
// Stages[i] are the stage times of Records[i]. The caller joins the two by
// sequence id (loadgen.Result.Records and Stages already yield them so, and
// a stored run's reader joins its files on the sequence id); Evaluate does
// not re-sort them. Stages is nil when the SUT reported none.
type RunPart struct {
	Records []loadgen.Record
	Stages  []loadgen.StageTimes
}

// RunData is the input of Evaluate: the test description and what was measured.
type RunData struct {
	// Test describes the test (Plan's Test, completed by the caller).
	Test *Test
	// Main are the main jobs' samples.
	Main RunPart
	// Foreign are a mixed test's foreign jobs' samples (IN-50); nil for
	// other modes, or when they did not run.
	Foreign *RunPart
	// Power is the SUT's power during the run, resampled to common
	// instants on the records' clock; nil without a power meter. With it
	// Evaluate computes Metrics.Power (Table 17, Annex E).
	Power *PowerGrid
}

// Loss is the loss of a run's samples (GB-7.6.2-TOUT, GB-7.7.1-c-2).
type Loss struct {
	// Lost and Sent count the lost and the issued samples. Lost includes
	// the samples the SUT failed (IsLost), which Failed counts apart.
	Lost   int `json:"lost_samples"`
	Sent   int `json:"sent_samples"`
	Failed int `json:"failed_samples"`
	// LossCheck holds the rate, the threshold and the verdict (IN-79).
	LossCheck
	// PerSecond counts the samples lost in each second of the run, at
	// their deadlines.
	PerSecond []int `json:"lost_per_second"`
}

// PartMetrics are the metrics of one workload: the foreign jobs of a mixed
// test are reported apart from the main jobs (IN-50).
type PartMetrics struct {
	Time       Breakdown  `json:"time"`
	Throughput Throughput `json:"throughput"`
	Loss       Loss       `json:"loss"`
}

// Metrics are the clause 7.6 metrics of a GB/T inference test.
type Metrics struct {
	// Time is the time breakdown of Table 16 (GB-7.6.2).
	Time Breakdown `json:"time"`
	// Throughput is the inference actual throughput of Table 18 (GB-7.6.4).
	Throughput Throughput `json:"throughput"`
	// Loss is the loss rate and its verdict against the threshold.
	Loss Loss `json:"loss"`
	// Elasticity and PressureTolerance are computed for peak tests (mode 3,
	// or mode 5 over mode 3; GB-7.6.5-T19-EL, GB-7.6.6-T20-PT).
	Elasticity        *Elasticity        `json:"elasticity,omitempty"`
	PressureTolerance *PressureTolerance `json:"pressure_tolerance,omitempty"`
	// Foreign are the metrics of a mixed test's foreign jobs (IN-50).
	Foreign *PartMetrics `json:"foreign_jobs,omitempty"`
	// EffectiveComputingPower is the Table 18 effective computing power,
	// when computed over several runs (GB-7.6.4-T18-ecp).
	EffectiveComputingPower *ECPResult `json:"effective_computing_power,omitempty"`
	// VideoStreams is the maximum number of video streams (GB-7.6.7), when
	// searched.
	VideoStreams *StreamsResult `json:"max_video_streams,omitempty"`
	// Power holds the Table 17 powers (GB-7.6.3) and the Annex E
	// inference energy efficiencies (GB-E.2.1-vision, GB-E.2.2-single), when the run
	// had a power meter (RunData.Power).
	Power *PowerMetrics `json:"power,omitempty"`
}

// Passed is the verdict of a GB/T inference test (GB-7.7.1-c-2): the main
// jobs' loss rate within the threshold and, in a mixed test, the foreign
// jobs' too (IN-50): a foreign job lost is a job the system failed.
func (m Metrics) Passed() bool {
	return m.Loss.Valid && (m.Foreign == nil || m.Foreign.Loss.Valid)
}

// Evaluate computes the clause 7.6 metrics of a run: a pure function of the
// test description and the records and stage times.
func Evaluate(run RunData) (Metrics, error) {
	if run.Test == nil {
		return Metrics{}, errors.New("gbt: Evaluate needs the test description")
	}
	t := run.Test
	if err := checkPart("main", run.Main); err != nil {
		return Metrics{}, err
	}
	timeout := t.Arrival.Timeout
	pm, err := evaluatePart(run.Main, timeout, t.LossThreshold)
	if err != nil {
		return Metrics{}, err
	}
	m := Metrics{Time: pm.Time, Throughput: pm.Throughput, Loss: pm.Loss}
	if t.MainMode() == ModePeak {
		recs := run.Main.Records
		peak := PeakRun{Records: recs, Stages: run.Main.Stages, RequestBytes: make([]int64, len(recs))}
		for i := range peak.RequestBytes {
			peak.RequestBytes[i] = t.SampleBytes
		}
		for _, start := range t.Arrival.BurstStarts {
			peak.Bursts = append(peak.Bursts, Burst{StartNs: int64(start), EndNs: int64(start + t.Arrival.BurstLength)})
		}
		el := ComputeElasticity(peak, ElasticityOptions{})
		pt, err := ComputePressureTolerance(peak, PressureOptions{Sigma: t.Arrival.Concurrency()})
		if err != nil {
			return Metrics{}, fmt.Errorf("gbt: pressure tolerance: %w", err)
		}
		m.Elasticity, m.PressureTolerance = &el, &pt
	}
	if run.Power != nil {
		unit := ""
		if e, ok := Lookup(t.Scenario); ok {
			unit = itemOf(e.ThroughputUnit)
		}
		pm, err := ComputePower(*run.Power, PowerOptions{Records: run.Main.Records, Stages: run.Main.Stages, RunNs: t.EndNs,
			Throughput: m.Throughput, Unit: unit, Accuracy: t.Accuracy})
		if err != nil {
			return Metrics{}, err
		}
		m.Power = &pm
	}
	if run.Foreign != nil {
		if err := checkPart("foreign", *run.Foreign); err != nil {
			return Metrics{}, err
		}
		fm, err := evaluatePart(*run.Foreign, timeout, t.LossThreshold)
		if err != nil {
			return Metrics{}, fmt.Errorf("gbt: foreign jobs: %w", err)
		}
		m.Foreign = &fm
	}
	return m, nil
}

// checkPart refuses stage times that are not parallel to the records.
func checkPart(name string, p RunPart) error {
	if p.Stages != nil && len(p.Stages) != len(p.Records) {
		return fmt.Errorf("gbt: %s jobs: %d records but %d stage times (join them by sequence id)", name, len(p.Records), len(p.Stages))
	}
	return nil
}

func evaluatePart(p RunPart, timeout time.Duration, threshold float64) (PartMetrics, error) {
	var m PartMetrics
	m.Time = ComputeBreakdown(p.Records, p.Stages, BreakdownOptions{Timeout: timeout})
	m.Throughput = InferenceThroughput(p.Records, p.Stages, ThroughputOptions{})
	var rate float64
	m.Loss.Lost, m.Loss.Sent, rate = LossRate(p.Records)
	for i := range p.Records {
		if p.Records[i].Status == loadgen.StatusError {
			m.Loss.Failed++
		}
	}
	var err error
	if m.Loss.LossCheck, err = LossVerdict(rate, threshold); err != nil {
		return m, err
	}
	m.Loss.PerSecond = LossPerSecond(p.Records, timeout)
	return m, nil
}

// ScheduleOf returns the schedule seed and hash of a run (IN-53): the
// test's, computed by Plan from the offsets it scheduled; when LoadGen drew
// the schedule itself (modes 0, 2, 4), the hash of the scheduled time of
// each job (query) in the records.
func ScheduleOf(t *Test, records []loadgen.Record) ScheduleInfo {
	if t.Schedule.Hash != "" {
		return t.Schedule
	}
	var sched []int64
	for i := range records {
		if i == 0 || records[i].QueryID != records[i-1].QueryID {
			sched = append(sched, records[i].ScheduledNs)
		}
	}
	return ScheduleInfo{Seed: t.Schedule.Seed, Hash: ScheduleHash(sched)}
}
