package loadgen

import (
	"errors"
	"math"
	"testing"
)

func TestValidateNamesTheField(t *testing.T) {
	tests := []struct {
		name   string
		reason string
		mutate func(*Settings)
		field  string // "" = valid
	}{
		{"defaults", "LoadGen's defaults are a valid SingleStream test", func(*Settings) {}, ""},
		{"server qps zero", "a Poisson rate must be positive", func(s *Settings) { s.Scenario = Server; s.ServerTargetQPS = 0 }, "server_target_qps"},
		{"server qps negative", "LoadGen logs and falls back; aimeter refuses", func(s *Settings) { s.Scenario = Server; s.ServerTargetQPS = -5 }, "server_target_qps"},
		{"offline qps zero", "Offline sizes its query from the expected QPS", func(s *Settings) { s.Scenario = Offline; s.OfflineExpectedQPS = 0 }, "offline_expected_qps"},
		{"percentile one", "the 100th percentile has no early-stopping estimate", func(s *Settings) { s.SingleStreamTargetLatencyPercentile = 1 }, "single_stream_target_latency_percentile"},
		{"ms spq zero", "a MultiStream query needs samples", func(s *Settings) { s.Scenario = MultiStream; s.MultiStreamSamplesPerQuery = 0 }, "multi_stream_samples_per_query"},
		{"expected latency zero", "target_qps = 1e9/0 is infinite", func(s *Settings) { s.SingleStreamExpectedLatencyNs = 0 }, "single_stream_expected_latency_ns"},
		{"find peak offline", "FindPeakPerformance exists only for Server", func(s *Settings) { s.Scenario = Offline; s.Mode = FindPeakPerformance }, "mode"},
		{"max below min duration", "contradictory run length", func(s *Settings) { s.MinDurationMs = 1000; s.MaxDurationMs = 10 }, "max_duration_ms"},
		{"max below min queries", "contradictory query counts", func(s *Settings) { s.MinQueryCount = 100; s.MaxQueryCount = 10 }, "max_query_count"},
		{"unique and same", "the two issue modes exclude each other", func(s *Settings) { s.PerformanceIssueUnique = true; s.PerformanceIssueSame = true }, "performance_issue_same"},
		{"probability above one", "a probability", func(s *Settings) { s.AccuracyLogProbability = 1.5 }, "accuracy_log_probability"},
		{"bad scenario", "an enum out of range", func(s *Settings) { s.Scenario = 7 }, "scenario"},
		{"server qps 1e-12", "the mean interval of 1e21 ns overflows the int64 schedule", func(s *Settings) { s.Scenario = Server; s.ServerTargetQPS = 1e-12 }, "server_target_qps"},
		{"server qps 1e-300", "an interval of 1e309 ns is infinite", func(s *Settings) { s.Scenario = Server; s.ServerTargetQPS = 1e-300 }, "server_target_qps"},
		{"server qps NaN", "not a rate", func(s *Settings) { s.Scenario = Server; s.ServerTargetQPS = math.NaN() }, "server_target_qps"},
		{"server qps +Inf", "an interval of 0 ns forever", func(s *Settings) { s.Scenario = Server; s.ServerTargetQPS = math.Inf(1) }, "server_target_qps"},
		{"server qps at the bound", "the slowest representable rate is allowed", func(s *Settings) { s.Scenario = Server; s.ServerTargetQPS = MinTargetQPS }, ""},
		{"offline qps 1e-300", "the Offline period overflows too", func(s *Settings) { s.Scenario = Offline; s.OfflineExpectedQPS = 1e-300 }, "offline_expected_qps"},
		{"expected latency 2^64-1", "1e9/latency is below the slowest representable rate", func(s *Settings) { s.SingleStreamExpectedLatencyNs = math.MaxUint64 }, "single_stream_expected_latency_ns"},
		{"multistream expected latency 2^63", "the MultiStream period overflows int64", func(s *Settings) { s.Scenario = MultiStream; s.MultiStreamExpectedLatencyNs = 1 << 63 }, "multi_stream_expected_latency_ns"},
		{"min duration 2^64-5", "a negative number read as unsigned: ms × 1e6 overflows", func(s *Settings) { s.MinDurationMs = math.MaxUint64 - 4 }, "min_duration_ms"},
		{"min duration at the bound", "the longest representable duration is allowed", func(s *Settings) { s.MinDurationMs = MaxDurationMs }, ""},
		{"max duration 2^63", "ms × 1e6 overflows", func(s *Settings) { s.MaxDurationMs = 1 << 63 }, "max_duration_ms"},
		{"inferred tokens without factor", "tokens/s = samples/s × 0 is meaningless", func(s *Settings) { s.InferTokenLatencies = true }, "token_latency_scaling_factor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings()
			tc.mutate(&s)
			err := s.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("%s: unexpected error %v", tc.reason, err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("%s: got %v, want a FieldError for %s", tc.reason, err, tc.field)
			}
		})
	}
}

func TestNewEffectiveHandWorked(t *testing.T) {
	tests := []struct {
		name           string
		reason         string
		mutate         func(*Settings)
		total, psc     uint64
		wantSPQ        uint64
		wantMinQueries uint64
		wantTargetMs   uint64
		wantPSC        uint64
		wantAccCount   uint64
	}{
		{"offline min query count wins", "trunc(1.1×10 s×1 qps) = 11 < min_query_count 100",
			func(s *Settings) { s.Scenario = Offline }, 1000, 100, 100, 1, 0, 100, 1000},
		{"offline expected qps", "trunc(1.1×600 s×5000 qps) = 3,300,000",
			func(s *Settings) { s.Scenario = Offline; s.MinDurationMs = 600000; s.OfflineExpectedQPS = 5000 }, 1000, 100, 3300000, 1, 0, 100, 1000},
		{"offline unique", "performance_issue_unique issues the performance set once",
			func(s *Settings) { s.Scenario = Offline; s.PerformanceIssueUnique = true }, 1000, 256, 256, 1, 0, 256, 1000},
		{"psc override", "performance_sample_count_override replaces the QSL's count",
			func(s *Settings) { s.PerformanceSampleCountOverride = 64 }, 1000, 100, 1, 100, 10000, 64, 1000},
		{"accuracy override kept", "accuracy_sample_count_override is logged as given; only the loadable sets cap it",
			func(s *Settings) { s.AccuracySampleCountOverride = 5000 }, 1000, 100, 1, 100, 10000, 100, 5000},
		{"ms samples per query", "MultiStream queries carry samples_per_query samples",
			func(s *Settings) { s.Scenario = MultiStream; s.MinQueryCount = 662 }, 1000, 100, 8, 662, 10000, 100, 1000},
		{"ss equal issue", "max(100, 2×10 s×1000 qps) = 20000, padded to 20480 = 20×1024",
			func(s *Settings) { s.SampleConcatenatePermutation = true }, 4096, 1024, 1, 20480, 10000, 1024, 4096},
		{"ss equal issue multiple", "2×1.024 s×1000 = 2048 is a multiple of 1024 yet a whole set is added (#2284)",
			func(s *Settings) { s.SampleConcatenatePermutation = true; s.MinDurationMs = 1024 }, 4096, 1024, 1, 3072, 1024, 1024, 4096},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings()
			tc.mutate(&s)
			e, err := NewEffective(s, tc.total, tc.psc)
			if err != nil {
				t.Fatal(err)
			}
			if e.SamplesPerQuery != tc.wantSPQ || e.MinQueryCount != tc.wantMinQueries || e.TargetDurationMs != tc.wantTargetMs ||
				e.PerformanceSampleCount != tc.wantPSC || e.AccuracySampleCount != tc.wantAccCount {
				t.Errorf("%s: got spq %d, min queries %d, target %d ms, psc %d, acc %d; want %d, %d, %d, %d, %d", tc.reason,
					e.SamplesPerQuery, e.MinQueryCount, e.TargetDurationMs, e.PerformanceSampleCount, e.AccuracySampleCount,
					tc.wantSPQ, tc.wantMinQueries, tc.wantTargetMs, tc.wantPSC, tc.wantAccCount)
			}
			if e.MinSampleCount != e.MinQueryCount*e.SamplesPerQuery {
				t.Errorf("min_sample_count %d != %d × %d", e.MinSampleCount, e.MinQueryCount, e.SamplesPerQuery)
			}
		})
	}
}

func TestNewEffectiveRejects(t *testing.T) {
	s := DefaultSettings()
	s.PerformanceIssueSame = true
	s.PerformanceIssueSameIndex = 100
	var fe *FieldError
	if _, err := NewEffective(s, 1000, 100); !errors.As(err, &fe) || fe.Field != "performance_issue_same_index" {
		t.Errorf("same index beyond the performance set: got %v", err)
	}
	if _, err := NewEffective(DefaultSettings(), 0, 0); err == nil {
		t.Error("an empty QSL must be refused before the run")
	}
	if _, err := NewEffective(DefaultSettings(), 10, 0); !errors.As(err, &fe) || fe.Field != "performance_sample_count_override" {
		t.Errorf("a QSL reporting 0 performance samples: got %v", err)
	}
}

func TestPeriodTruncates(t *testing.T) {
	s := DefaultSettings()
	s.SingleStreamExpectedLatencyNs = 3991
	e, err := NewEffective(s, 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	// 1e9/3991 qps, then int64((1/qps)×1e9) = 3990 (reference §5).
	if got := e.period(); got != 3990 {
		t.Errorf("period = %d, want 3990", got)
	}
}
