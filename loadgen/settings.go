package loadgen

import (
	"fmt"
	"math"
	"strings"
)

// Scenario is one of the four MLPerf load patterns. The numeric values match
// the C++ enum mlperf::TestScenario.
type Scenario int

// The four scenarios of the MLPerf Inference rules.
const (
	// SingleStream issues one single-sample query at a time, the next as soon
	// as the previous completes. Metric: the 90th percentile latency.
	SingleStream Scenario = iota
	// MultiStream issues one query of samples_per_query contiguous samples at
	// a time. Metric: the 99th percentile query latency.
	MultiStream
	// Server issues single-sample queries on a Poisson schedule. Metric: the
	// completed samples per second with the latency bound met.
	Server
	// Offline issues every sample in one query. Metric: samples per second.
	Offline
)

var scenarioNames = [...]string{"SingleStream", "MultiStream", "Server", "Offline"}

// String returns the name LoadGen logs ("SingleStream", "Server", …).
func (s Scenario) String() string {
	if s < 0 || int(s) >= len(scenarioNames) {
		return fmt.Sprintf("Scenario(%d)", int(s))
	}
	return scenarioNames[s]
}

// ParseScenario accepts a scenario name, case-insensitively, with or without
// spaces or dashes ("single-stream", "Single Stream", "singlestream").
func ParseScenario(name string) (Scenario, error) {
	norm := strings.NewReplacer(" ", "", "-", "", "_", "").Replace(strings.ToLower(name))
	for i, n := range scenarioNames {
		if strings.ToLower(n) == norm {
			return Scenario(i), nil
		}
	}
	return 0, fmt.Errorf("unknown scenario %q (want SingleStream, MultiStream, Server or Offline)", name)
}

// Mode selects what a test does. The numeric values match mlperf::TestMode and
// the "mode" key of mlperf.conf.
type Mode int

// The four test modes.
const (
	// SubmissionRun runs AccuracyOnly and then PerformanceOnly in one test.
	SubmissionRun Mode = iota
	// AccuracyOnly issues every sample of the accuracy set exactly once and
	// logs every response.
	AccuracyOnly
	// PerformanceOnly runs the scenario's timed traffic and reports results.
	PerformanceOnly
	// FindPeakPerformance searches the highest Server QPS that meets the
	// latency constraint.
	FindPeakPerformance
)

var modeNames = [...]string{"SubmissionRun", "AccuracyOnly", "PerformanceOnly", "FindPeakPerformance"}

// String returns the name LoadGen logs ("PerformanceOnly", …).
func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return fmt.Sprintf("Mode(%d)", int(m))
	}
	return modeNames[m]
}

// ParseMode accepts the LoadGen names and the short CLI names
// ("submission", "accuracy", "performance", "find-peak").
func ParseMode(name string) (Mode, error) {
	norm := strings.NewReplacer(" ", "", "-", "", "_", "").Replace(strings.ToLower(name))
	switch norm {
	case "submission", "submissionrun":
		return SubmissionRun, nil
	case "accuracy", "accuracyonly":
		return AccuracyOnly, nil
	case "performance", "performanceonly":
		return PerformanceOnly, nil
	case "findpeak", "findpeakperformance":
		return FindPeakPerformance, nil
	}
	return 0, fmt.Errorf("unknown mode %q (want performance, accuracy, submission or find-peak)", name)
}

// Settings mirrors mlperf::TestSettings field for field, with the same units
// and, from DefaultSettings, the same defaults. JSON names are the C++ names so
// that settings.json reads like LoadGen's detail log.
//
// The zero value is not a useful configuration (a zero min_query_count and
// min_duration make an empty test); start from DefaultSettings.
type Settings struct {
	Scenario Scenario `json:"scenario"`
	Mode     Mode     `json:"mode"`

	// SingleStreamExpectedLatencyNs is a hint used only to pre-generate
	// enough queries: target_qps = 1e9 / it.
	SingleStreamExpectedLatencyNs uint64 `json:"single_stream_expected_latency_ns"`
	// SingleStreamTargetLatencyPercentile is the reported percentile.
	SingleStreamTargetLatencyPercentile float64 `json:"single_stream_target_latency_percentile"`

	// MultiStreamExpectedLatencyNs is the MultiStream pre-generation hint.
	MultiStreamExpectedLatencyNs uint64 `json:"multi_stream_expected_latency_ns"`
	// MultiStreamTargetLatencyPercentile is the reported query-latency percentile.
	MultiStreamTargetLatencyPercentile float64 `json:"multi_stream_target_latency_percentile"`
	// MultiStreamSamplesPerQuery is the number of contiguous samples per query.
	MultiStreamSamplesPerQuery uint64 `json:"multi_stream_samples_per_query"`

	// ServerTargetQPS is the Poisson arrival rate (and find-peak lower bound).
	ServerTargetQPS float64 `json:"server_target_qps"`
	// ServerTargetLatencyNs is the latency bound of the Server scenario.
	ServerTargetLatencyNs uint64 `json:"server_target_latency_ns"`
	// ServerTargetLatencyPercentile is the percentile that must meet the bound.
	ServerTargetLatencyPercentile float64 `json:"server_target_latency_percentile"`
	// ServerCoalesceQueries merges overdue queries into one IssueQuery call.
	ServerCoalesceQueries bool `json:"server_coalesce_queries"`
	// ServerFindPeakQPSDecimalsOfPrecision is where the find-peak search stops.
	ServerFindPeakQPSDecimalsOfPrecision int `json:"server_find_peak_qps_decimals_of_precision"`
	// ServerFindPeakQPSBoundaryStepSize widens the upper bound: u = l × (1+step).
	ServerFindPeakQPSBoundaryStepSize float64 `json:"server_find_peak_qps_boundary_step_size"`
	// ServerMaxAsyncQueries ends issuing once more queries are outstanding (0 = no limit).
	ServerMaxAsyncQueries uint64 `json:"server_max_async_queries"`
	// ServerNumIssueQueryThreads is the number of issuing goroutines for
	// Server (0 = the calling goroutine); query k goes to issuer k mod N.
	ServerNumIssueQueryThreads uint64 `json:"server_num_issue_query_threads"`

	// OfflineExpectedQPS sizes the single Offline query.
	OfflineExpectedQPS float64 `json:"offline_expected_qps"`
	// SampleConcatenatePermutation is equal-issue mode.
	SampleConcatenatePermutation bool `json:"sample_concatenate_permutation"`

	// MinDurationMs, MaxDurationMs (0 = none), MinQueryCount and
	// MaxQueryCount (0 = none) bound the length of a performance run.
	MinDurationMs uint64 `json:"min_duration_ms"`
	MaxDurationMs uint64 `json:"max_duration_ms"`
	MinQueryCount uint64 `json:"min_query_count"`
	MaxQueryCount uint64 `json:"max_query_count"`

	// QSLRNGSeed shuffles the loadable sets; SampleIndexRNGSeed picks samples
	// for queries; ScheduleRNGSeed draws Server arrival gaps;
	// AccuracyLogRNGSeed offsets accuracy-log sampling. Only the low 32 bits
	// matter, as in std::mt19937.
	QSLRNGSeed         uint64 `json:"qsl_rng_seed"`
	SampleIndexRNGSeed uint64 `json:"sample_index_rng_seed"`
	ScheduleRNGSeed    uint64 `json:"schedule_rng_seed"`
	AccuracyLogRNGSeed uint64 `json:"accuracy_log_rng_seed"`
	// AccuracyLogProbability is the fraction of performance-mode responses
	// copied to the accuracy log.
	AccuracyLogProbability float64 `json:"accuracy_log_probability"`
	// AccuracyLogSamplingTarget, when > 0, overrides the probability so that
	// about this many responses are logged.
	AccuracyLogSamplingTarget uint64 `json:"accuracy_log_sampling_target"`

	// Test05 replaces the three seeds with the Test05* ones and forces
	// PerformanceOnly (the retired TEST05 audit).
	Test05                   bool   `json:"test05"`
	Test05QSLRNGSeed         uint64 `json:"test05_qsl_rng_seed"`
	Test05SampleIndexRNGSeed uint64 `json:"test05_sample_index_rng_seed"`
	Test05ScheduleRNGSeed    uint64 `json:"test05_schedule_rng_seed"`

	// PrintTimestamps asks the caller to print wall-clock start and stop of
	// the performance run (the CLI does; the library never prints).
	PrintTimestamps bool `json:"print_timestamps"`
	// PerformanceIssueUnique issues each loaded sample once.
	PerformanceIssueUnique bool `json:"performance_issue_unique"`
	// PerformanceIssueSame always issues the loaded sample at PerformanceIssueSameIndex.
	PerformanceIssueSame      bool   `json:"performance_issue_same"`
	PerformanceIssueSameIndex uint64 `json:"performance_issue_same_index"`
	// PerformanceSampleCountOverride replaces the QSL's performance sample count when non-zero.
	PerformanceSampleCountOverride uint64 `json:"performance_sample_count_override"`
	// AccuracySampleCountOverride limits accuracy mode to indices [0, N) when non-zero.
	AccuracySampleCountOverride uint64 `json:"accuracy_sample_count_override"`

	// UseTokenLatencies turns on TTFT/TPOT accounting for LLMs.
	UseTokenLatencies bool `json:"use_token_latencies"`
	// ServerTTFTLatencyNs and ServerTPOTLatencyNs are the token latency bounds.
	ServerTTFTLatencyNs uint64 `json:"server_ttft_latency"`
	ServerTPOTLatencyNs uint64 `json:"server_tpot_latency"`
	// InferTokenLatencies reports tokens/s as samples/s × TokenLatencyScalingFactor.
	InferTokenLatencies       bool   `json:"infer_token_latencies"`
	TokenLatencyScalingFactor uint64 `json:"token_latency_scaling_factor"`

	// Concurrency, when > 0, selects aimeter's fixed-concurrency load mode
	// (no MLPerf scenario has it): Concurrency queries are always in
	// flight, the next issued the moment one completes, as in the
	// concurrency sweeps of MLPerf Endpoints, vLLM, AIPerf and GuideLLM.
	// It runs on the SingleStream machinery (the Scenario must be
	// SingleStream, whose key the MLPerf files keep) with its minimum
	// duration and query count; each query's scheduled time is the moment
	// it is issued, the completion of the one it replaces (the first
	// Concurrency at the start). 0, the default, is LoadGen's behaviour.
	// Not a LoadGen setting: absent from settings.json when 0.
	Concurrency uint64 `json:"concurrency,omitempty"`
	// MaxErrorRate is the fraction of a pass's issued samples that may
	// fail (the SUT reported an error: an HTTP 5xx, a reset, a malformed
	// answer) with the pass still VALID. Failures never count as
	// completions: they are left out of every latency and of the
	// throughput either way. 0, the default, makes any failure INVALID.
	// Not a LoadGen setting: absent from settings.json when 0.
	MaxErrorRate float64 `json:"max_error_rate,omitempty"`
}

// MaxConcurrency bounds Settings.Concurrency.
const MaxConcurrency = 1 << 20

// DefaultSettings returns the defaults of mlperf::TestSettings.
func DefaultSettings() Settings {
	return Settings{
		Scenario:                             SingleStream,
		Mode:                                 PerformanceOnly,
		SingleStreamExpectedLatencyNs:        1_000_000,
		SingleStreamTargetLatencyPercentile:  0.90,
		MultiStreamExpectedLatencyNs:         8_000_000,
		MultiStreamTargetLatencyPercentile:   0.99,
		MultiStreamSamplesPerQuery:           8,
		ServerTargetQPS:                      1,
		ServerTargetLatencyNs:                100_000_000,
		ServerTargetLatencyPercentile:        0.99,
		ServerFindPeakQPSDecimalsOfPrecision: 1,
		ServerFindPeakQPSBoundaryStepSize:    1,
		OfflineExpectedQPS:                   1,
		MinDurationMs:                        10_000,
		MinQueryCount:                        100,
		ServerTTFTLatencyNs:                  100_000_000,
		ServerTPOTLatencyNs:                  100_000_000,
	}
}

// FieldError reports an invalid setting: which key, the value, and what is allowed.
type FieldError struct {
	Field   string // the C++/JSON name of the setting, e.g. "server_target_qps"
	Value   any
	Allowed string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("invalid setting %s = %v: %s", e.Field, e.Value, e.Allowed)
}

// Bounds that keep every schedule representable in int64 nanoseconds: a
// duration of at most MaxDurationMs (about 73 years; generation doubles it
// and adds one interval), and a mean query interval of at most
// 1e17 ns (MinTargetQPS), whose largest exponential draw (under 37 mean
// intervals for libstdc++'s 53-bit canonical draw) fits beside it.
const (
	// MaxDurationMs bounds min_duration_ms and max_duration_ms.
	MaxDurationMs = math.MaxInt64 / 4 / 1_000_000
	// MinTargetQPS bounds the query rate of every scenario from below
	// (server_target_qps, offline_expected_qps, and 1e9 over the
	// expected latency of SingleStream and MultiStream).
	MinTargetQPS = 1e-8
)

// Validate reports the first invalid or contradictory setting as a
// *FieldError naming the key. LoadGen itself logs many of these as errors and
// carries on with a fallback; aimeter refuses them before issuing anything.
func (s *Settings) Validate() error {
	bad := func(field string, v any, allowed string) error {
		return &FieldError{Field: field, Value: v, Allowed: allowed}
	}
	if s.Scenario < SingleStream || s.Scenario > Offline {
		return bad("scenario", int(s.Scenario), "must be 0 SingleStream, 1 MultiStream, 2 Server or 3 Offline")
	}
	if s.Mode < SubmissionRun || s.Mode > FindPeakPerformance {
		return bad("mode", int(s.Mode), "must be 0 SubmissionRun, 1 AccuracyOnly, 2 PerformanceOnly or 3 FindPeakPerformance")
	}
	if s.Mode == FindPeakPerformance && s.Scenario != Server {
		return bad("mode", s.Mode, "FindPeakPerformance is only supported in the Server scenario")
	}
	percentile := func(field string, p float64) error {
		if !(p > 0 && p < 1) {
			return bad(field, p, "must be in (0, 1)")
		}
		return nil
	}
	positive := func(field string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return bad(field, v, "must be a finite number > 0")
		}
		return nil
	}
	rate := func(field string, v float64) error {
		if err := positive(field, v); err != nil {
			return err
		}
		if v < MinTargetQPS {
			return bad(field, v, fmt.Sprintf("must be ≥ %g: a slower schedule cannot be represented in int64 nanoseconds", MinTargetQPS))
		}
		return nil
	}
	const maxExpectedNs = uint64(1e9 / MinTargetQPS)
	if s.MinDurationMs > MaxDurationMs {
		return bad("min_duration_ms", s.MinDurationMs, fmt.Sprintf("must be ≤ %d ms: a longer schedule cannot be represented in int64 nanoseconds", uint64(MaxDurationMs)))
	}
	if s.MaxDurationMs > MaxDurationMs {
		return bad("max_duration_ms", s.MaxDurationMs, fmt.Sprintf("must be ≤ %d ms: a longer schedule cannot be represented in int64 nanoseconds", uint64(MaxDurationMs)))
	}
	switch s.Scenario {
	case SingleStream:
		if err := percentile("single_stream_target_latency_percentile", s.SingleStreamTargetLatencyPercentile); err != nil {
			return err
		}
		if s.SingleStreamExpectedLatencyNs == 0 || s.SingleStreamExpectedLatencyNs > maxExpectedNs {
			return bad("single_stream_expected_latency_ns", s.SingleStreamExpectedLatencyNs, fmt.Sprintf("must be in [1, %d] ns", maxExpectedNs))
		}
	case MultiStream:
		if err := percentile("multi_stream_target_latency_percentile", s.MultiStreamTargetLatencyPercentile); err != nil {
			return err
		}
		if s.MultiStreamExpectedLatencyNs == 0 || s.MultiStreamExpectedLatencyNs > maxExpectedNs {
			return bad("multi_stream_expected_latency_ns", s.MultiStreamExpectedLatencyNs, fmt.Sprintf("must be in [1, %d] ns", maxExpectedNs))
		}
		if s.MultiStreamSamplesPerQuery == 0 {
			return bad("multi_stream_samples_per_query", 0, "must be ≥ 1")
		}
	case Server:
		if err := percentile("server_target_latency_percentile", s.ServerTargetLatencyPercentile); err != nil {
			return err
		}
		if err := rate("server_target_qps", s.ServerTargetQPS); err != nil {
			return err
		}
		if s.Mode == FindPeakPerformance {
			if err := positive("server_find_peak_qps_boundary_step_size", s.ServerFindPeakQPSBoundaryStepSize); err != nil {
				return err
			}
			if s.ServerFindPeakQPSDecimalsOfPrecision < 0 || s.ServerFindPeakQPSDecimalsOfPrecision > 9 {
				return bad("server_find_peak_qps_decimals_of_precision", s.ServerFindPeakQPSDecimalsOfPrecision, "must be in [0, 9]")
			}
		}
		if s.ServerNumIssueQueryThreads > 64 {
			return bad("server_num_issue_query_threads", s.ServerNumIssueQueryThreads, "must be in [0, 64]")
		}
		if s.UseTokenLatencies && (s.ServerTTFTLatencyNs == 0 || s.ServerTPOTLatencyNs == 0) {
			return bad("server_ttft_latency", s.ServerTTFTLatencyNs, "token latency bounds must be > 0 ns when use_token_latencies is set")
		}
	case Offline:
		if err := rate("offline_expected_qps", s.OfflineExpectedQPS); err != nil {
			return err
		}
	}
	if s.MaxDurationMs != 0 && s.MaxDurationMs < s.MinDurationMs {
		return bad("max_duration_ms", s.MaxDurationMs, fmt.Sprintf("must be 0 (no limit) or ≥ min_duration_ms (%d)", s.MinDurationMs))
	}
	if s.MaxQueryCount != 0 && s.MaxQueryCount < s.MinQueryCount && s.Scenario != Offline {
		return bad("max_query_count", s.MaxQueryCount, fmt.Sprintf("must be 0 (no limit) or ≥ min_query_count (%d)", s.MinQueryCount))
	}
	if !(s.AccuracyLogProbability >= 0 && s.AccuracyLogProbability <= 1) {
		return bad("accuracy_log_probability", s.AccuracyLogProbability, "must be in [0, 1]")
	}
	if s.PerformanceIssueUnique && s.PerformanceIssueSame {
		return bad("performance_issue_same", true, "cannot be combined with performance_issue_unique")
	}
	if !(s.MaxErrorRate >= 0 && s.MaxErrorRate <= 1) {
		return bad("max_error_rate", s.MaxErrorRate, "must be a fraction in [0, 1]")
	}
	if s.Concurrency != 0 {
		if s.Scenario != SingleStream {
			return bad("concurrency", s.Concurrency, fmt.Sprintf("fixed concurrency runs on the SingleStream scenario's issuing, not %v: use SingleStream or concurrency 0", s.Scenario))
		}
		if s.Concurrency > MaxConcurrency {
			return bad("concurrency", s.Concurrency, fmt.Sprintf("must be in [0, %d]", MaxConcurrency))
		}
	}
	if s.InferTokenLatencies && s.TokenLatencyScalingFactor == 0 {
		return bad("token_latency_scaling_factor", 0, "must be ≥ 1 when infer_token_latencies is set")
	}
	return nil
}
