package benchmark

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"aimeter/loadgen"
	"aimeter/mlperfconf"
)

// The sizing of performance runs against a network SUT (SizeForSUT).
const (
	// sizeStreamHeadroom divides the probed query interval for
	// SingleStream and MultiStream: their expected latency only sizes the
	// queries LoadGen generates (1.1 x min_duration / the expected
	// latency), and issuing stops once min_duration and min_query_count
	// are met, so generous headroom costs memory, not time.
	sizeStreamHeadroom = 4
	// sizeProbeMin and sizeProbeMax bound how long a probe pass must last
	// to be measured: a tenth of min_duration within them.
	sizeProbeMin, sizeProbeMax = 200 * time.Millisecond, time.Second
	// sizeProbeRounds is the most probe passes.
	sizeProbeRounds = 6
	// sizeSaturated: an Offline pass whose throughput is under this
	// multiple of the previous, smaller pass's has saturated the SUT.
	sizeSaturated = 1.2
	// sizeOpenAIConns bounds the connections of an Offline run against an
	// OpenAI-compatible server that has no SUT.Net.MaxConns: its client opens
	// a connection per sample in flight otherwise, and a sized Offline
	// query of tens of thousands of samples runs out of file descriptors.
	sizeOpenAIConns = 512
)

// Sizing is how SizeForSUT sized the performance runs of a plan for its
// SUT: what the probe measured and the settings it chose.
type Sizing struct {
	// Scenario is the runs' scenario.
	Scenario string `json:"scenario"`
	// MinDuration is the runs' min_duration.
	MinDuration time.Duration `json:"min_duration_ns"`
	// Probes are the probe passes, in order.
	Probes []SizingProbe `json:"probes,omitempty"`
	// Rate is the throughput of the last probe (samples per second), and
	// QueryInterval its mean time per query (SingleStream and
	// MultiStream).
	Rate          float64       `json:"samples_per_second,omitempty"`
	QueryInterval time.Duration `json:"query_interval_ns,omitempty"`
	// Set are the overrides that size the runs ("target_qps=3300"), to
	// append to Plan.Settings.Set; nil when nothing was sized.
	Set []string `json:"set,omitempty"`
	// MaxConns, if not 0, is the connection bound the runs need
	// (sut.Net.MaxConns): an Offline run against an
	// OpenAI-compatible server that had none gets sizeOpenAIConns.
	MaxConns int `json:"max_conns,omitempty"`
	// Skipped says why the runs were left as planned; "" when Set sizes
	// them.
	Skipped string `json:"skipped,omitempty"`
}

// SizingProbe is one probe pass: its samples and queries and how long
// they took.
type SizingProbe struct {
	Samples uint64        `json:"samples"`
	Queries uint64        `json:"queries"`
	Pass    time.Duration `json:"pass_ns"`
}

// String says in one line what was measured and chosen, or why nothing
// was.
func (s *Sizing) String() string {
	if s.Skipped != "" {
		return "runs not sized: " + s.Skipped
	}
	p := s.Probes[len(s.Probes)-1]
	measured := fmt.Sprintf("%s samples/s", formatQPS(s.Rate))
	if s.QueryInterval > 0 {
		measured = fmt.Sprintf("%v per query", s.QueryInterval.Round(time.Microsecond))
	}
	conns := ""
	if s.MaxConns > 0 {
		conns = fmt.Sprintf(" SUT.Net.MaxConns %d", s.MaxConns)
	}
	return fmt.Sprintf("%d probe passes of %s (the last %d samples in %v) measured %s; runs of min_duration %v sized with Settings.Set %s%s",
		len(s.Probes), s.Scenario, p.Samples, p.Pass.Round(time.Millisecond), measured, s.MinDuration, strings.Join(s.Set, " Settings.Set "), conns)
}

// SizeForSUT sizes the performance runs of p for its SUT, so that they
// last min_duration and are VALID: the self-test or gentle defaults
// (gentleDefaults) guess an Offline rate and a stream latency, and a
// server faster than the guess ends an Offline pass, or runs out of
// SingleStream and MultiStream queries, before min_duration (INVALID).
//
// It runs short probe passes of p's own scenario against the SUT (each an
// ordinary Run with min_duration 0 and min_query_count the pass's size,
// into a temporary directory removed afterwards; nothing is recorded or
// notified). From 16 samples (2 MultiStream queries) each pass grows
// until one lasts a tenth of min_duration (within 0.2 and 1 s); an
// Offline probe grows on, 4 times a pass, until its throughput stops
// rising (a server that batches does more with a larger query), within
// 6 passes and, at each pass's speed, half of min_duration (at least 2 s)
// in all. It returns the
// overrides to append to p.Settings.Set: an Offline target_qps of twice
// the fastest measured throughput (the pass then lasts about 2.2 x
// min_duration), or a SingleStream or MultiStream target_latency of a
// quarter of the measured time per query; and, for an Offline run
// against an OpenAI-compatible server without a connection bound, the
// bound of 512 connections the probe ran with (Sizing.MaxConns).
//
// Runs are left as planned (Sizing.Skipped says why) where sizing does
// not apply: a SUT that is not a network server (the null SUT, the
// in-process models, a Custom SUT), explicit settings, a GB/T, replay,
// sessions or fixed-concurrency plan, the Server scenario (whose
// target_qps is the load under test), a min_duration of 0, a setting
// chosen by a user.conf, an audit.config or Settings.Set, or a probe whose
// samples failed. An error is a plan that cannot run or a probe that did
// not (its SUT could not be reached).
//
// The audit tests that compare performance runs (TEST01 and TEST04,
// aimeter audit) size their runs with it: the same overrides for the
// reference and the audit run, so that a SUT answering TEST04's repeated
// sample from a cache ends its audit run early instead.
func SizeForSUT(ctx context.Context, p Plan) (*Sizing, error) {
	skip := func(why string, args ...any) (*Sizing, error) {
		return &Sizing{Skipped: fmt.Sprintf(why, args...)}, nil
	}
	switch kind := p.SUT.KindOrNull(); {
	case p.Custom != nil || !kind.IsNetwork():
		return skip("SUT.Kind %s is not a network server: its defaults are sized for it", kind)
	case p.Settings.Explicit != nil:
		return skip("the plan has explicit settings")
	case p.GBT != nil || p.Replay != nil || p.Sessions != nil:
		return skip("a GB/T, replay or sessions plan brings its own load")
	case p.Settings.Concurrency > 0:
		return skip("a fixed-concurrency run lasts min_duration whatever the SUT's speed")
	}
	p.Settings.Mode = "performance"
	p.Notify, p.Done, p.Progress, p.Phase = nil, nil, nil, nil
	st, err := (&runner{plan: &p, ctx: ctx}).cascade()
	if err != nil {
		return nil, err
	}
	s := st.settings
	sz := &Sizing{Scenario: s.Scenario.String(), MinDuration: time.Duration(s.MinDurationMs) * time.Millisecond}
	key := "target_latency"
	switch s.Scenario {
	case loadgen.Server:
		sz.Skipped = "a Server run's target_qps is the load under test (choose it with Settings.Set target_qps=…)"
		return sz, nil
	case loadgen.Offline:
		key = "target_qps"
	}
	if sz.MinDuration == 0 {
		sz.Skipped = "min_duration is 0"
		return sz, nil
	}
	if src := st.sources[key]; !sizable(src) {
		sz.Skipped = fmt.Sprintf("%s is set by %s", key, src)
		return sz, nil
	}
	if s.Scenario == loadgen.Offline && p.SUT.Backend() == "openai" && p.SUT.Net.MaxConns == 0 {
		sz.MaxConns = sizeOpenAIConns
		p.SUT.Net.MaxConns = sizeOpenAIConns
	}
	dir, err := os.MkdirTemp("", "aimeter-sizing-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	want := min(max(sz.MinDuration/10, sizeProbeMin), sizeProbeMax)
	budget := max(sz.MinDuration/2, 2*time.Second)
	// The first pass is small, for a slow SUT: 16 samples.
	n := uint64(16)
	if s.Scenario == loadgen.MultiStream {
		n = 2
	}
	var spent time.Duration
	for round := range sizeProbeRounds {
		q := p
		q.OutputDir = fmt.Sprintf("%s/probe%d", dir, round+1)
		q.Name = "sizing probe"
		q.NoReport = true
		q.FindPeakResolution, q.KeepProbeRecords = 0, false // a performance pass
		q.Settings.Set = append(append([]string(nil), p.Settings.Set...), "min_duration=0", "max_duration=0",
			"min_query_count="+strconv.FormatUint(n, 10), "max_query_count=0")
		out, err := Run(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("sizing probe: %w", err)
		}
		sum := out.Result.Summary
		if sum == nil {
			return nil, fmt.Errorf("sizing probe: the pass left no summary")
		}
		if bad := sum.Result.FailedSamples + sum.Result.LostSamples; bad > 0 || sum.SampleCount == 0 {
			sz.Skipped = fmt.Sprintf("%d of the probe's %d samples failed or were lost", bad, sum.SampleCount+sum.Result.FailedSamples)
			return sz, nil
		}
		pass := time.Duration(sum.Result.FinalQueryAllSamplesDoneTime * float64(time.Second))
		sz.Probes = append(sz.Probes, SizingProbe{Samples: sum.SampleCount, Queries: sum.QueryCount, Pass: pass})
		spent += pass
		grow := 64.0
		if pass > 0 {
			grow = min(max(1.5*float64(want)/float64(pass), 2), 64)
		}
		if pass >= want {
			// Long enough to measure. A stream's rate is its query
			// interval, whatever the pass's size; an Offline query's
			// throughput grows with its size until the SUT saturates
			// (an LLM server batches more of a larger one).
			if s.Scenario != loadgen.Offline || (round > 0 && probeRate(sz.Probes[round]) < sizeSaturated*probeRate(sz.Probes[round-1])) {
				break
			}
			grow = 4
		}
		// The next pass must fit in what is left of the budget at this
		// pass's speed.
		if pass > 0 {
			grow = min(grow, float64(budget-spent)/float64(pass))
		}
		if spent >= budget || grow < 1.5 {
			break
		}
		n = uint64(math.Ceil(float64(n) * grow))
	}
	// The fastest pass long enough to measure (the last one if none is):
	// a rate measured too low ends the runs before min_duration, one too
	// high only lengthens them.
	pr := sz.Probes[len(sz.Probes)-1]
	for _, x := range sz.Probes {
		if x.Pass >= want/2 && probeRate(x) > probeRate(pr) {
			pr = x
		}
	}
	if pr.Pass <= 0 {
		sz.Skipped = "the probe's pass took no measurable time"
		return sz, nil
	}
	sz.Rate = probeRate(pr)
	if s.Scenario != loadgen.Offline {
		sz.QueryInterval = pr.Pass / time.Duration(max(pr.Queries, 1))
	}
	sz.Set = sz.Calibration().sizeSet(s.Scenario, sz.MinDuration)
	return sz, nil
}

// Calibration is what the probe measured as a Calibration: the time per
// query of a SingleStream or MultiStream probe as Single, the rate of the
// fastest pass long enough to measure as BatchRate and BatchRateMax.
func (s *Sizing) Calibration() Calibration {
	return Calibration{Single: s.QueryInterval, BatchRate: s.Rate, BatchRateMax: s.Rate}
}

// sizeSet are the overrides that size a run of the scenario for a SUT of
// calibration c: an Offline target_qps of c.OfflineQPS (at most LoadGen's
// largest query over 1.1 x minDuration), or a SingleStream or MultiStream
// target_latency of c.Single / sizeStreamHeadroom (at least 1 µs).
func (c Calibration) sizeSet(scenario loadgen.Scenario, minDuration time.Duration) []string {
	if scenario == loadgen.Offline {
		// LoadGen supports an Offline query of at most 2^31 samples.
		qps := min(c.OfflineQPS(), math.Floor(float64(1<<31)/(1.1*minDuration.Seconds())))
		return []string{"target_qps=" + strconv.FormatFloat(qps, 'f', -1, 64)}
	}
	ms := max(float64(c.Single)/sizeStreamHeadroom/1e6, 0.001)
	return []string{"target_latency=" + strconv.FormatFloat(ms, 'g', 4, 64)}
}

// probeRate is a probe pass's throughput, in samples per second.
func probeRate(x SizingProbe) float64 {
	if x.Pass <= 0 {
		return 0
	}
	return float64(x.Samples) / x.Pass.Seconds()
}

// sizable reports whether SizeForSUT may replace a setting from src: one
// from LoadGen's, the self-test or aimeter's gentle defaults, or
// mlperf.conf, not one a user chose.
func sizable(src mlperfconf.Source) bool {
	switch src.Layer {
	case mlperfconf.LayerDefault, mlperfconf.LayerSelfTest, mlperfconf.LayerMLPerfConf:
		return true
	case mlperfconf.LayerImposed:
		return strings.HasPrefix(src.By, defaultsBy)
	}
	return false
}
