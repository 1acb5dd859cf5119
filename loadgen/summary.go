package loadgen

import (
	"fmt"
	"slices"

	"aimeter/stats"
)

// PerformanceResult is the raw outcome of one performance pass, the input
// of Summarize (LoadGen's PerformanceResult).
type PerformanceResult struct {
	// SampleLatencies holds completed − scheduled for every issued sample.
	// A lost sample is censored at the end of the pass (a lower bound).
	SampleLatencies []int64
	// QueryLatencies holds all-done − scheduled per issued query (MultiStream only).
	QueryLatencies []int64
	QueriesIssued  uint64
	// MaxLatency is the largest sample latency, in seconds.
	MaxLatency float64
	// FinalQuery* are the final issued query's times, in seconds from the
	// start of issuing.
	FinalQueryScheduledTime      float64
	FinalQueryIssuedTime         float64
	FinalQueryAllSamplesDoneTime float64
	// Token mode: TTFT and TPOT per sample and the token count per sample.
	FirstTokenLatencies []int64
	TimePerOutputToken  []int64
	TokensPerSample     []int64
	// Aimeter's additions to LoadGen's validity: samples that failed or were
	// lost, and why the pass stopped early, if it did.
	FailedSamples uint64
	LostSamples   uint64
	StopReason    string
	// ProtocolErrors counts the SUT's protocol errors during the pass
	// (PassInfo.ProtocolErrors).
	ProtocolErrors uint64
}

// PercentileEntry is one reported percentile.
type PercentileEntry struct {
	Percentile    float64
	SampleLatency int64
	QueryLatency  int64 // MultiStream only
}

// ReportedPercentiles are the percentiles every summary lists.
var ReportedPercentiles = [6]float64{.50, .90, .95, .97, .99, .999}

// Summary is the verdict and statistics of a performance pass, computed as
// LoadGen's PerformanceSummary does.
type Summary struct {
	SUTName string
	// Effective are the effective settings the pass ran with (a find-peak
	// probe's own target QPS included).
	Effective Effective
	Result    PerformanceResult

	// SampleCount counts the completed and the lost samples of the pass
	// (a lost one censored at the end of the pass); failed samples are
	// counted apart, in Result.FailedSamples, and enter no statistic.
	SampleCount           uint64
	QueryCount            uint64
	OverLatencyQueryCount uint64
	SampleLatencyMin      int64
	SampleLatencyMax      int64
	SampleLatencyMean     int64
	QueryLatencyMin       int64
	QueryLatencyMax       int64
	QueryLatencyMean      int64
	TargetPercentile      PercentileEntry
	Percentiles           [6]PercentileEntry
	// SampleLatencyMoments are the exact mean and the standard deviation
	// of the same latencies (aimeter's, for comparisons between runs;
	// LoadGen prints the integer mean SampleLatencyMean).
	SampleLatencyMoments stats.Moments

	TokenCount                 int64
	FirstTokenLatencyMin       int64
	FirstTokenLatencyMax       int64
	FirstTokenLatencyMean      int64
	TimePerOutputTokenMin      int64
	TimePerOutputTokenMax      int64
	TimePerOutputTokenMean     int64
	TokenTargetPercentile      PercentileEntry // TTFT at the target percentile
	TPOTTargetPercentile       PercentileEntry
	TokenPercentiles           [6]PercentileEntry // TTFT
	TPOTPercentiles            [6]PercentileEntry
	OverLatencyFirstTokenCount uint64
	// FirstTokenLatencyMoments are the exact mean and the standard
	// deviation of the first-token latencies (aimeter's).
	FirstTokenLatencyMoments stats.Moments

	MinDurationMet     bool
	MinQueriesMet      bool
	PerfConstraintsMet bool
	EarlyStoppingMet   bool
	// Valid is LoadGen's verdict and aimeter's: every LoadGen check passed
	// and no sample failed or was lost.
	Valid bool

	// Recommendations are LoadGen's text (without the " * " bullet): perf
	// constraints, min duration, and early exit, in that order, for those
	// that failed.
	PerfConstraintsRecommendation string
	MinDurationRecommendation     string
	// AimeterReasons explain invalidity LoadGen has no words for (lost or
	// failed samples, an interrupted run).
	AimeterReasons []string
	// FailuresDecided says the pass is INVALID because more samples
	// failed than Effective.MaxErrorRate allows; LoadGen's
	// recommendations are then left out.
	FailuresDecided bool

	// EarlyStoppingLines is the "Early Stopping Result:" text; in token mode
	// the TTFT and TPOT texts are separate (TTFT empty if TPOT failed, as the
	// C++ short-circuits).
	EarlyStoppingLines     []string
	EarlyStoppingTTFTLines []string
	EarlyStoppingTPOTLines []string
	EarlyStoppingLatencySS int64
	EarlyStoppingLatencyMS int64

	pass int // index of the pass in the test, for Result.Passes[].Reported
}

// Summarize computes the summary of a performance pass from its raw result,
// following LoadGen's results.cc: percentiles at index trunc(n×p), integer
// means, early stopping (d = 0, c = 0.99) and the validity checks.
//
// Summarize sorts the latency slices of pr in place (of the sample
// latencies, outside SingleStream, it only moves the ranks it reads into
// place: stats.SelectRanks) and does not keep them:
// the Summary's Result has them set to nil (the records of the pass hold
// every latency).
func Summarize(sutName string, e Effective, pr PerformanceResult) *Summary {
	s := &Summary{SUTName: sutName, Effective: e, Result: pr}
	s.processLatencies()

	s.MinDurationMet = s.minDurationMet()
	// Issued samples count toward the minimum, failed ones included:
	// SampleCount holds the completed and lost ones only.
	s.MinQueriesMet = s.Result.QueriesIssued >= e.MinQueryCount && s.SampleCount+pr.FailedSamples >= e.MinSampleCount
	s.PerfConstraintsMet = s.perfConstraintsMet()
	if !e.UseTokenLatencies {
		s.EarlyStoppingMet, s.EarlyStoppingLines = s.earlyStopping(s.Result.SampleLatencies, e.TargetLatencyNs)
	} else {
		// TPOT first, then TTFT only if TPOT passed: the C++ `&&` short-circuits.
		var ok bool
		ok, s.EarlyStoppingTPOTLines = s.earlyStopping(s.Result.TimePerOutputToken, e.TPOTLatencyNs)
		if ok {
			ok, s.EarlyStoppingTTFTLines = s.earlyStopping(s.Result.FirstTokenLatencies, e.TTFTLatencyNs)
		}
		s.EarlyStoppingMet = ok
	}
	s.judge()
	s.Result.SampleLatencies = nil
	s.Result.QueryLatencies = nil
	s.Result.FirstTokenLatencies = nil
	s.Result.TimePerOutputToken = nil
	s.Result.TokensPerSample = nil
	return s
}

// judge adds aimeter's own reasons for an invalid run (lost samples,
// failures above max_error_rate, SUT protocol errors, issuing stopped
// early) to LoadGen's verdict, and sets Valid from both. Summarize and
// the streamed summary share it, so their words are the same.
func (s *Summary) judge() {
	e, pr := &s.Effective, &s.Result
	if pr.LostSamples > 0 {
		s.AimeterReasons = append(s.AimeterReasons, fmt.Sprintf("%d samples were lost: the SUT never completed them.", pr.LostSamples))
	}
	if pr.FailedSamples > 0 {
		issued := s.SampleCount + pr.FailedSamples // SampleCount holds the lost ones
		rate := float64(pr.FailedSamples) / float64(issued)
		if rate > e.MaxErrorRate {
			allowed := "none is allowed (max_error_rate 0)"
			if e.MaxErrorRate > 0 {
				allowed = fmt.Sprintf("at most %.4g %% is allowed (max_error_rate)", 100*e.MaxErrorRate)
			}
			s.AimeterReasons = append(s.AimeterReasons, fmt.Sprintf("%d of %d samples failed (%.4g %%): the SUT reported an error for them, and %s.",
				pr.FailedSamples, issued, 100*rate, allowed))
			// The failures decided the verdict: LoadGen's advice on the
			// load (reduce the target QPS, lengthen the run) would
			// mislead.
			s.FailuresDecided = true
			s.PerfConstraintsRecommendation, s.MinDurationRecommendation = "", ""
		}
	}
	if pr.ProtocolErrors > 0 {
		s.AimeterReasons = append(s.AimeterReasons, fmt.Sprintf("%d SUT protocol errors: completions for unknown, not yet issued, already completed or lost samples, or token times outside a sample's issue-to-completion window.", pr.ProtocolErrors))
	}
	if pr.StopReason != "" {
		s.AimeterReasons = append(s.AimeterReasons, "Issuing stopped early: "+pr.StopReason+".")
	}
	s.Valid = s.LoadGenValid() && len(s.AimeterReasons) == 0
}

// LoadGenValid is LoadGen's own verdict (all_constraints_met).
func (s *Summary) LoadGenValid() bool {
	return s.MinDurationMet && s.MinQueriesMet && s.PerfConstraintsMet && s.EarlyStoppingMet
}

// HasPerfConstraints reports whether the scenario has a latency constraint (Server).
func (s *Summary) HasPerfConstraints() bool { return s.Effective.Scenario == Server }

func percentileAt(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	return stats.Percentile(sorted, p)
}

func (s *Summary) processLatencies() {
	pr := &s.Result
	// The percentiles are labelled even for a pass without samples (an
	// interrupted run), whose latencies all read 0.
	s.TargetPercentile.Percentile = s.Effective.TargetLatencyPercentile
	for i, p := range ReportedPercentiles {
		s.Percentiles[i].Percentile = p
	}
	if s.Effective.UseTokenLatencies {
		s.TokenTargetPercentile.Percentile = s.Effective.TargetLatencyPercentile
		s.TPOTTargetPercentile.Percentile = s.Effective.TargetLatencyPercentile
		for i, p := range ReportedPercentiles {
			s.TokenPercentiles[i].Percentile, s.TPOTPercentiles[i].Percentile = p, p
		}
	}
	if len(pr.SampleLatencies) == 0 {
		return
	}
	s.SampleCount = uint64(len(pr.SampleLatencies))
	s.SampleLatencyMean = stats.MeanInt(pr.SampleLatencies)
	s.SampleLatencyMoments = stats.MomentsOf(pr.SampleLatencies)
	lat := pr.SampleLatencies
	if s.Effective.Scenario == SingleStream {
		// Early stopping reads the whole order.
		slices.Sort(lat)
	} else {
		// Only these ranks are read: select them, in linear time.
		n := len(lat)
		ranks := []int{0, n - 1, stats.PercentileRank(n, s.Effective.TargetLatencyPercentile)}
		for _, p := range ReportedPercentiles {
			ranks = append(ranks, stats.PercentileRank(n, p))
		}
		stats.SelectRanks(lat, ranks)
	}
	s.TargetPercentile = PercentileEntry{Percentile: s.Effective.TargetLatencyPercentile, SampleLatency: percentileAt(lat, s.Effective.TargetLatencyPercentile)}
	s.SampleLatencyMin, s.SampleLatencyMax = lat[0], lat[len(lat)-1]
	for i, p := range ReportedPercentiles {
		s.Percentiles[i] = PercentileEntry{Percentile: p, SampleLatency: percentileAt(lat, p)}
	}
	s.QueryCount = pr.QueriesIssued
	if s.Effective.Scenario == Server {
		s.OverLatencyQueryCount = uint64(stats.CountAbove(lat, s.Effective.TargetLatencyNs))
	}
	if s.Effective.UseTokenLatencies {
		s.processTokenLatencies()
	}
	if s.Effective.Scenario != MultiStream || len(pr.QueryLatencies) == 0 {
		return
	}
	slices.Sort(pr.QueryLatencies)
	q := pr.QueryLatencies
	s.QueryLatencyMean = stats.MeanInt(q)
	s.QueryLatencyMin, s.QueryLatencyMax = q[0], q[len(q)-1]
	s.TargetPercentile.QueryLatency = percentileAt(q, s.Effective.TargetLatencyPercentile)
	for i, p := range ReportedPercentiles {
		s.Percentiles[i].QueryLatency = percentileAt(q, p)
	}
}

func (s *Summary) processTokenLatencies() {
	pr := &s.Result
	for _, n := range pr.TokensPerSample {
		s.TokenCount += n
	}
	if len(pr.FirstTokenLatencies) == 0 {
		return
	}
	// LoadGen divides both sums by the sample count.
	n := int64(s.SampleCount)
	var sumTTFT, sumTPOT int64
	for _, v := range pr.FirstTokenLatencies {
		sumTTFT += v
	}
	for _, v := range pr.TimePerOutputToken {
		sumTPOT += v
	}
	s.FirstTokenLatencyMean = sumTTFT / n
	s.FirstTokenLatencyMoments = stats.MomentsOf(pr.FirstTokenLatencies)
	s.TimePerOutputTokenMean = sumTPOT / n
	slices.Sort(pr.FirstTokenLatencies)
	slices.Sort(pr.TimePerOutputToken)
	ttft, tpot := pr.FirstTokenLatencies, pr.TimePerOutputToken
	p := s.Effective.TargetLatencyPercentile
	s.TokenTargetPercentile = PercentileEntry{Percentile: p, SampleLatency: percentileAt(ttft, p)}
	s.FirstTokenLatencyMin, s.FirstTokenLatencyMax = ttft[0], ttft[len(ttft)-1]
	for i, rp := range ReportedPercentiles {
		s.TokenPercentiles[i] = PercentileEntry{Percentile: rp, SampleLatency: percentileAt(ttft, rp)}
	}
	if len(tpot) > 0 {
		s.TPOTTargetPercentile = PercentileEntry{Percentile: p, SampleLatency: percentileAt(tpot, p)}
		s.TimePerOutputTokenMin, s.TimePerOutputTokenMax = tpot[0], tpot[len(tpot)-1]
		for i, rp := range ReportedPercentiles {
			s.TPOTPercentiles[i] = PercentileEntry{Percentile: rp, SampleLatency: percentileAt(tpot, rp)}
		}
	}
	if s.Effective.Scenario == Server {
		s.OverLatencyFirstTokenCount = uint64(stats.CountAbove(ttft, s.Effective.TargetLatencyNs))
	}
}

func (s *Summary) minDurationMet() bool {
	minDuration := float64(s.Effective.MinDurationMs) / 1000
	var met bool
	switch s.Effective.Scenario {
	case Offline:
		met = s.Result.MaxLatency >= minDuration
	case Server:
		met = s.Result.FinalQueryScheduledTime >= minDuration
	default:
		met = s.Result.FinalQueryIssuedTime >= minDuration
	}
	if met {
		return true
	}
	switch s.Effective.Scenario {
	case SingleStream, MultiStream:
		s.MinDurationRecommendation = "Decrease the expected latency so the loadgen pre-generates more queries."
	case Server:
		s.MinDurationRecommendation = "Increase the target QPS so the loadgen pre-generates more queries."
	case Offline:
		s.MinDurationRecommendation = "Increase expected QPS so the loadgen pre-generates a larger (coalesced) query."
	}
	return false
}

func (s *Summary) perfConstraintsMet() bool {
	if s.Effective.Scenario != Server {
		return true
	}
	if s.SampleCount == 0 && s.Result.FailedSamples > 0 {
		// Every sample failed: none met the bound.
		return false
	}
	if !s.Effective.UseTokenLatencies {
		if s.TargetPercentile.SampleLatency > s.Effective.TargetLatencyNs {
			s.PerfConstraintsRecommendation = "Reduce target QPS to improve latency."
			return false
		}
		return true
	}
	met := true
	if s.TokenTargetPercentile.SampleLatency > s.Effective.TTFTLatencyNs {
		s.PerfConstraintsRecommendation = "TTFT constrain not met: Reduce target QPS to improve latency."
		met = false
	}
	if s.TPOTTargetPercentile.SampleLatency > s.Effective.TPOTLatencyNs {
		if s.PerfConstraintsRecommendation == "" {
			s.PerfConstraintsRecommendation = "TPOT constrain not met: Reduce target QPS to improve latency."
		} else {
			s.PerfConstraintsRecommendation += "\n * TPOT constrain not met: Reduce target QPS to improve latency."
		}
		met = false
	}
	return met
}

// earlyStopping runs LoadGen's per-scenario early-stopping check on sorted
// latencies with a fresh finder, as each C++ call does.
func (s *Summary) earlyStopping(sorted []int64, bound int64) (bool, []string) {
	n := int64(s.Result.QueriesIssued)
	p := s.Effective.TargetLatencyPercentile
	es := stats.NewEarlyStopping()
	switch s.Effective.Scenario {
	case SingleStream:
		r := es.SingleStream(sorted[:min(int64(len(sorted)), n)], p)
		if r.Satisfied {
			s.EarlyStoppingLatencySS = r.Target.Estimate
			if r.P99 != nil && r.P99.Satisfied {
				s.EarlyStoppingLatencyMS = r.P99.Estimate
			}
		}
		return r.Satisfied, r.Lines
	case MultiStream:
		r := es.MultiStream(s.Result.QueryLatencies[:min(int64(len(s.Result.QueryLatencies)), n)], p)
		if r.Satisfied {
			s.EarlyStoppingLatencyMS = r.Estimate.Estimate
		}
		return r.Satisfied, r.Lines
	case Server:
		r := es.Server(n, stats.CountAbove(sorted, bound), p)
		return r.Satisfied, r.Lines
	}
	return true, nil
}

// CompletedSamplesPerSecond is the Server metric: (samples − 1) / all-done
// time of the final query. A pass whose every sample failed completed
// none: 0.
func (s *Summary) CompletedSamplesPerSecond() float64 {
	if s.SampleCount == 0 && s.Result.FailedSamples > 0 {
		return 0
	}
	return float64(s.SampleCount-1) / s.Result.FinalQueryAllSamplesDoneTime
}

// ScheduledSamplesPerSecond is (samples − 1) / scheduled time of the final query.
func (s *Summary) ScheduledSamplesPerSecond() float64 {
	if s.SampleCount == 0 && s.Result.FailedSamples > 0 {
		return 0
	}
	return float64(s.SampleCount-1) / s.Result.FinalQueryScheduledTime
}

// SamplesPerSecond is the Offline metric: samples / max latency (0 when
// every sample failed).
func (s *Summary) SamplesPerSecond() float64 {
	if s.SampleCount == 0 && s.Result.FailedSamples > 0 {
		return 0
	}
	return float64(s.SampleCount) / s.Result.MaxLatency
}

// QPSWithLoadgenOverhead is the SingleStream (samples − 1) / final issue time.
func (s *Summary) QPSWithLoadgenOverhead() float64 {
	if s.SampleCount == 0 && s.Result.FailedSamples > 0 {
		return 0
	}
	return float64(s.SampleCount-1) / s.Result.FinalQueryIssuedTime
}

// QPSWithoutLoadgenOverhead is the SingleStream 1 / mean latency.
func (s *Summary) QPSWithoutLoadgenOverhead() float64 {
	return 1 / (float64(s.SampleLatencyMean) / 1e9)
}

// Metric returns the scenario's headline number and its name: the target
// percentile latency for SingleStream and MultiStream (ns), completed
// samples per second for Server, samples per second for Offline.
func (s *Summary) Metric() (name string, value float64) {
	switch s.Effective.Scenario {
	case SingleStream:
		return fmt.Sprintf("%.1fth percentile latency (ns)", s.TargetPercentile.Percentile*100), float64(s.TargetPercentile.SampleLatency)
	case MultiStream:
		return fmt.Sprintf("%.1fth percentile latency (ns)", s.TargetPercentile.Percentile*100), float64(s.TargetPercentile.QueryLatency)
	case Server:
		return "Completed samples per second", s.CompletedSamplesPerSecond()
	default:
		return "Samples per second", s.SamplesPerSecond()
	}
}
