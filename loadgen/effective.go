package loadgen

import (
	"fmt"
	"math"
)

// Effective holds the settings a test actually runs with, derived from the
// requested Settings and the QSL as LoadGen's TestSettingsInternal does. It is
// logged as the effective_* keys of the detail log.
type Effective struct {
	Scenario                Scenario `json:"scenario"`
	Mode                    Mode     `json:"test_mode"`
	SamplesPerQuery         uint64   `json:"samples_per_query"`
	TargetQPS               float64  `json:"target_qps"`
	TargetLatencyNs         int64    `json:"target_latency_ns"`
	TargetLatencyPercentile float64  `json:"target_latency_percentile"`
	MaxAsyncQueries         uint64   `json:"max_async_queries"`
	TargetDurationMs        uint64   `json:"target_duration_ms"`
	MinDurationMs           uint64   `json:"min_duration_ms"`
	MaxDurationMs           uint64   `json:"max_duration_ms"`
	MinQueryCount           uint64   `json:"min_query_count"`
	MaxQueryCount           uint64   `json:"max_query_count"`
	MinSampleCount          uint64   `json:"min_sample_count"`

	QSLRNGSeed         uint64 `json:"qsl_rng_seed"`
	SampleIndexRNGSeed uint64 `json:"sample_index_rng_seed"`
	ScheduleRNGSeed    uint64 `json:"schedule_rng_seed"`
	AccuracyLogRNGSeed uint64 `json:"accuracy_log_rng_seed"`

	AccuracyLogProbability    float64 `json:"accuracy_log_probability"`
	AccuracyLogSamplingTarget uint64  `json:"accuracy_log_sampling_target"`
	PrintTimestamps           bool    `json:"print_timestamps"`
	PerformanceIssueUnique    bool    `json:"performance_issue_unique"`
	PerformanceIssueSame      bool    `json:"performance_issue_same"`
	PerformanceIssueSameIndex uint64  `json:"performance_issue_same_index"`
	PerformanceSampleCount    uint64  `json:"performance_sample_count"`
	AccuracySampleCount       uint64  `json:"accuracy_sample_count"`

	SampleConcatenatePermutation bool   `json:"sample_concatenate_permutation"`
	UseTokenLatencies            bool   `json:"use_token_latencies"`
	TTFTLatencyNs                int64  `json:"ttft_latency"`
	TPOTLatencyNs                int64  `json:"tpot_latency"`
	InferTokenLatencies          bool   `json:"infer_token_latencies"`
	TokenLatencyScalingFactor    uint64 `json:"token_latency_scaling_factor"`

	ServerCoalesceQueries                bool    `json:"server_coalesce_queries"`
	ServerNumIssueQueryThreads           uint64  `json:"server_num_issue_query_threads"`
	ServerFindPeakQPSDecimalsOfPrecision int     `json:"server_find_peak_qps_decimals_of_precision"`
	ServerFindPeakQPSBoundaryStepSize    float64 `json:"server_find_peak_qps_boundary_step_size"`

	// Concurrency is Settings.Concurrency: > 0 in aimeter's fixed-concurrency
	// mode, which keeps this many queries in flight. Absent when 0.
	Concurrency uint64 `json:"concurrency,omitempty"`
	// MaxErrorRate is Settings.MaxErrorRate. Absent when 0.
	MaxErrorRate float64 `json:"max_error_rate,omitempty"`
}

// MaxQSLSize is the largest data set aimeter accepts: sample indices are kept
// as 32-bit numbers to keep per-sample memory small.
const MaxQSLSize = math.MaxUint32

// NewEffective derives the effective settings from s and the QSL's reported
// counts, following LoadGen's TestSettingsInternal (loadgen-reference §2.2).
// It reports settings that cannot run with this QSL as a *FieldError.
func NewEffective(s Settings, qslTotal, qslPerformance uint64) (Effective, error) {
	if err := s.Validate(); err != nil {
		return Effective{}, err
	}
	if qslTotal == 0 {
		return Effective{}, fmt.Errorf("the QSL reports 0 samples: nothing to issue")
	}
	if qslTotal > MaxQSLSize {
		return Effective{}, fmt.Errorf("the QSL reports %d samples; aimeter supports at most %d", qslTotal, uint64(MaxQSLSize))
	}
	if s.Test05 {
		// LoadGen: the TEST05 flag forces performance mode with its own seeds.
		s.Mode = PerformanceOnly
		s.QSLRNGSeed = s.Test05QSLRNGSeed
		s.SampleIndexRNGSeed = s.Test05SampleIndexRNGSeed
		s.ScheduleRNGSeed = s.Test05ScheduleRNGSeed
	}
	e := Effective{
		Scenario:                             s.Scenario,
		Mode:                                 s.Mode,
		SamplesPerQuery:                      1,
		TargetQPS:                            1,
		TargetDurationMs:                     s.MinDurationMs,
		MinDurationMs:                        s.MinDurationMs,
		MaxDurationMs:                        s.MaxDurationMs,
		MinQueryCount:                        s.MinQueryCount,
		MaxQueryCount:                        s.MaxQueryCount,
		QSLRNGSeed:                           s.QSLRNGSeed,
		SampleIndexRNGSeed:                   s.SampleIndexRNGSeed,
		ScheduleRNGSeed:                      s.ScheduleRNGSeed,
		AccuracyLogRNGSeed:                   s.AccuracyLogRNGSeed,
		AccuracyLogProbability:               s.AccuracyLogProbability,
		AccuracyLogSamplingTarget:            s.AccuracyLogSamplingTarget,
		PrintTimestamps:                      s.PrintTimestamps,
		PerformanceIssueUnique:               s.PerformanceIssueUnique,
		PerformanceIssueSame:                 s.PerformanceIssueSame,
		PerformanceIssueSameIndex:            s.PerformanceIssueSameIndex,
		SampleConcatenatePermutation:         s.SampleConcatenatePermutation,
		UseTokenLatencies:                    s.UseTokenLatencies,
		TTFTLatencyNs:                        int64(s.ServerTTFTLatencyNs),
		TPOTLatencyNs:                        int64(s.ServerTPOTLatencyNs),
		InferTokenLatencies:                  s.InferTokenLatencies,
		TokenLatencyScalingFactor:            s.TokenLatencyScalingFactor,
		MaxErrorRate:                         s.MaxErrorRate,
		ServerCoalesceQueries:                s.ServerCoalesceQueries,
		ServerNumIssueQueryThreads:           s.ServerNumIssueQueryThreads,
		ServerFindPeakQPSDecimalsOfPrecision: s.ServerFindPeakQPSDecimalsOfPrecision,
		ServerFindPeakQPSBoundaryStepSize:    s.ServerFindPeakQPSBoundaryStepSize,
	}
	switch s.Scenario {
	case SingleStream:
		e.TargetQPS = 1e9 / float64(s.SingleStreamExpectedLatencyNs)
		e.MaxAsyncQueries = 1
		e.TargetLatencyPercentile = s.SingleStreamTargetLatencyPercentile
		if s.Concurrency > 0 {
			// Fixed concurrency generates its own queries, whatever the
			// SingleStream expected latency: enough for N chains of
			// requests as short as concurrencyRequestNs for the whole
			// duration (twice over, as every closed loop), so that it
			// never runs out before its duration. A closed-loop pass is
			// generated and paged in as it is issued, so the count costs
			// memory only as far as the run gets.
			e.Concurrency = s.Concurrency
			e.TargetQPS = min(float64(s.Concurrency)*(1e9/concurrencyRequestNs), maxConcurrencyQPS)
			e.MaxAsyncQueries = s.Concurrency
		}
	case MultiStream:
		e.TargetQPS = 1e9 / float64(s.MultiStreamExpectedLatencyNs)
		e.MaxAsyncQueries = 1
		e.TargetLatencyPercentile = s.MultiStreamTargetLatencyPercentile
		e.SamplesPerQuery = s.MultiStreamSamplesPerQuery
	case Server:
		e.TargetQPS = s.ServerTargetQPS
		e.TargetLatencyNs = int64(s.ServerTargetLatencyNs)
		e.TargetLatencyPercentile = s.ServerTargetLatencyPercentile
		e.MaxAsyncQueries = s.ServerMaxAsyncQueries
	case Offline:
		// The percentile is unused in Offline; LoadGen fixes it at 0.99.
		e.TargetLatencyPercentile = 0.99
		e.TargetQPS = s.OfflineExpectedQPS
		e.MaxAsyncQueries = 1
	}

	e.PerformanceSampleCount = s.PerformanceSampleCountOverride
	if e.PerformanceSampleCount == 0 {
		e.PerformanceSampleCount = qslPerformance
	}
	if e.PerformanceSampleCount == 0 {
		return Effective{}, &FieldError{Field: "performance_sample_count_override", Value: 0,
			Allowed: "the QSL reports a performance sample count of 0; set a count ≥ 1"}
	}
	// The override is logged as given; the loadable sets cap it at the QSL size.
	e.AccuracySampleCount = s.AccuracySampleCountOverride
	if e.AccuracySampleCount == 0 {
		e.AccuracySampleCount = qslTotal
	}

	if s.Scenario == Offline {
		// kSlack = 1.1 more samples than the expected QPS needs for the
		// minimum duration; the product is a double truncated to uint64.
		seconds := float64(e.TargetDurationMs) / 1000
		target := uint64(float64(float64(1.1)*seconds) * e.TargetQPS)
		if s.PerformanceIssueUnique {
			e.SamplesPerQuery = e.PerformanceSampleCount
		} else {
			e.SamplesPerQuery = max(e.MinQueryCount, target)
		}
		e.MinQueryCount = 1
		e.TargetDurationMs = 0
	}
	if s.Scenario == SingleStream && s.SampleConcatenatePermutation {
		// Equal-issue SingleStream runs at least twice the expected queries
		// and always adds up to the next whole performance set, even when
		// already a multiple (mlcommons/inference#2284). LoadGen uses the
		// QSL-reported count here, not the override.
		seconds := float64(e.MinDurationMs) / 1000
		e.MinQueryCount = max(e.MinQueryCount, uint64(float64(2.0*seconds)*e.TargetQPS))
		if qslPerformance > 0 {
			e.MinQueryCount += qslPerformance - e.MinQueryCount%qslPerformance
		}
	}
	e.MinSampleCount = e.MinQueryCount * e.SamplesPerQuery

	if s.PerformanceIssueSame && e.PerformanceIssueSameIndex >= e.PerformanceSampleCount {
		return Effective{}, &FieldError{Field: "performance_issue_same_index", Value: e.PerformanceIssueSameIndex,
			Allowed: fmt.Sprintf("must be < performance_sample_count (%d)", e.PerformanceSampleCount)}
	}
	if s.Scenario == Offline && e.SamplesPerQuery > 1<<31 {
		return Effective{}, &FieldError{Field: "offline_expected_qps", Value: s.OfflineExpectedQPS,
			Allowed: fmt.Sprintf("gives %d samples in the Offline query; at most 2^31 are supported", e.SamplesPerQuery)}
	}
	return e, nil
}

// concurrencyRequestNs is the shortest request a fixed-concurrency run
// generates queries for, and maxConcurrencyQPS bounds the generation rate
// (a period of at least 2 ns between generated queries).
const (
	concurrencyRequestNs = 1000
	maxConcurrencyQPS    = 5e8
)

// period returns the constant gap between generated queries of the
// non-Server scenarios: duration_cast<nanoseconds>(duration<double>(1/qps)).
// onDemand reports whether a performance pass with these settings is
// generated on demand (see generatedQueries): the closed-loop scenarios.
func (e *Effective) onDemand() bool {
	return (e.Scenario == SingleStream || e.Scenario == MultiStream) && !e.PerformanceIssueUnique && e.period() > 0
}

func (e *Effective) period() int64 {
	return int64((1.0 / e.TargetQPS) * 1e9)
}
