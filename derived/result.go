package derived

import (
	"aimeter/bandwidth"
	"encoding/json"
	"io"
	"math"

	"aimeter/bundle"
	"aimeter/derived/metrics"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/verdict"
	"aimeter/workload/trace"
)

// ResultFile is the machine-readable result of a run (result.json), for
// scripts that must never parse the console: the verdict, the headline
// metric, the success and failure counts by category, the latency and
// token statistics of the successful samples, and the settings that
// matter. Its schema is ResultSchema (docs/result-json.md describes it).
const ResultFile = bundle.ResultFile

// ResultSchema names the schema of result.json; a change that removes or
// renames a field changes its version.
const ResultSchema = "aimeter.result/1"

// VerdictKind says which rules decided a run's verdict (verdict.Kind).
type VerdictKind = verdict.Kind

// The rules that decide a verdict.
const (
	VerdictMLPerf   = verdict.MLPerf
	VerdictGBT      = verdict.GBT
	VerdictAccuracy = verdict.Accuracy
	VerdictNone     = verdict.None
)

// Verdict is what a run found, the same on the console, in the summary,
// the report, result.json and the exit code (verdict.Verdict).
type Verdict = verdict.Verdict

// VerdictOf is verdict.Of: the one function that decides a run's verdict.
func VerdictOf(b *bundle.Bundle, m *gbt.Metrics) Verdict { return verdict.Of(b, m) }

// Verdict is the verdict of the Set's bundle (VerdictOf), computed from
// the bundle alone.
func (s *Set) Verdict() (Verdict, error) {
	var m *gbt.Metrics
	if gbt.TestOf(s.b) != nil {
		gm, err := s.GBTMetrics()
		if err != nil {
			return Verdict{}, err
		}
		m = &gm
	}
	return VerdictOf(s.b, m), nil
}

// ResultJSON is result.json.
type ResultJSON struct {
	Schema  string  `json:"schema"`
	Verdict Verdict `json:"verdict"`
	// VerdictWord is Verdict.Word: VALID, INVALID, PASS, FAIL or "-".
	VerdictWord string `json:"verdict_word"`
	// Reasons are Verdict.Reasons, kept at the top level where earlier
	// versions had aimeter's own reasons: every rule the run broke, one
	// line each.
	Reasons []string `json:"reasons,omitempty"`
	SUT     string   `json:"sut"`
	QSL     string   `json:"qsl"`
	// Scenario and Mode are LoadGen's; Concurrency > 0 is aimeter's
	// fixed-concurrency mode; ArrivalMode is the GB/T arrival mode (-1
	// for an MLPerf run).
	Scenario    string `json:"scenario"`
	Mode        string `json:"mode"`
	Concurrency uint64 `json:"concurrency,omitempty"`
	ArrivalMode int    `json:"arrival_mode"`
	// Headline is the run's main figure: LoadGen's metric of the
	// scenario (over successful samples), or a GB/T test's throughput.
	Headline *Figure `json:"headline,omitempty"`
	// Samples counts the samples of the reported pass by outcome.
	Samples SampleCounts `json:"samples"`
	// Errors are the failures by category (with the code where there is
	// one) and example messages.
	Errors []ErrorGroup `json:"errors,omitempty"`
	// LatencyNs are the sample latencies (completion − scheduled) of the
	// successful samples, ns; nil without a performance pass.
	LatencyNs *Stats `json:"latency_ns,omitempty"`
	// Tokens are the token statistics of a token-latency run.
	Tokens *TokenStats `json:"tokens,omitempty"`
	// Streaming are the inter-token and end-to-end latencies and the
	// output token rate of a streamed run's successful samples
	// (metrics.StreamingOf); nil for a run without token times.
	Streaming *metrics.Streaming `json:"streaming,omitempty"`
	// Accuracy is the accuracy check, where scored.
	Accuracy *bundle.AccuracyCheck `json:"accuracy,omitempty"`
	// GBT holds a GB/T test's loss and throughput, the foreign jobs' too.
	GBT *GBTFigures `json:"gbt,omitempty"`
	// Power is the run's power and energy over the MLPerf power window,
	// from its telemetry (aimeter run --power); nil without one.
	Power *PowerFigures `json:"power,omitempty"`
	// Goodput is the part of the reported pass that met the run's
	// per-request SLO (the one it was given, else its TTFT and TPOT
	// bounds); nil without either.
	Goodput *GoodputFigures `json:"goodput,omitempty"`
	// SendLateness is how late the samples of a run on a schedule (the
	// Server scenario, a trace replay) were sent: issue − scheduled time;
	// nil for other runs.
	SendLateness *trace.LatenessSummary `json:"send_lateness,omitempty"`
	// Steady is the steady state of a streaming LLM run: every metric
	// over the whole pass and over each detector's window (metrics.SteadyOf);
	// nil for other runs.
	Steady *SteadyFigures `json:"steady_state,omitempty"`
	// Sessions are the per-turn and overall figures of a multi-turn run;
	// nil for other runs.
	Sessions *SessionFigures `json:"sessions,omitempty"`
	// Bandwidth is the MLPerf datacenter bandwidth check of a network
	// run: the rules' requirement against the NIC and what the wire
	// carried (bandwidth.json, package bandwidth); nil for a run without
	// the declaration (an in-process SUT without --input-dtype).
	Bandwidth *bandwidth.Report `json:"bandwidth,omitempty"`
	// Network is the network of a run that reached servers, or that
	// declared an MLPerf division or carried a system description; nil
	// for neither (NetworkOf).
	Network *NetworkFigures `json:"network,omitempty"`
	// Settings are the settings that decide the result.
	Settings ResultSettings `json:"settings"`
	// Dir is not stored: the bundle's directory, for --json's output.
	Dir string `json:"dir,omitempty"`
}

// Figure is one named value.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// SampleCounts count the samples of the reported pass by outcome.
type SampleCounts struct {
	Issued    uint64  `json:"issued"`
	OK        uint64  `json:"ok"`
	Failed    uint64  `json:"failed"`
	Lost      uint64  `json:"lost"`
	ErrorRate float64 `json:"error_rate"`
}

// ErrorGroup is one group of failures: a category of the error taxonomy
// with its HTTP or gRPC code, how many samples failed so, a few example
// messages, and when the first and the last failed (ns on the run clock).
type ErrorGroup struct {
	// Group is the category with its code, e.g. "http_5xx/501".
	Group    string   `json:"group"`
	Category string   `json:"category"`
	Code     int      `json:"code,omitempty"`
	CodeName string   `json:"code_name,omitempty"`
	Count    uint64   `json:"count"`
	Message  string   `json:"message"`
	Examples []string `json:"examples,omitempty"`
	FirstNs  int64    `json:"first_ns,omitempty"`
	LastNs   int64    `json:"last_ns,omitempty"`
}

// Stats summarise a distribution (LoadGen's percentiles: index trunc(n×p)
// of the sorted values); metrics.Stats.
type Stats = metrics.Stats

// TokenStats are the time to first token and time per output token of a
// token-latency run, ns, over successful samples.
type TokenStats struct {
	OutputTokens int64 `json:"output_tokens"`
	TTFTNs       Stats `json:"ttft_ns"`
	TPOTNs       Stats `json:"tpot_ns"`
}

// GBTFigures are a GB/T test's verdict figures.
type GBTFigures struct {
	Loss       gbt.Loss       `json:"loss"`
	Throughput gbt.Throughput `json:"throughput"`
	Foreign    *gbt.Loss      `json:"foreign_loss,omitempty"`
}

// ResultSettings are the settings that decide a result.
type ResultSettings struct {
	TargetQPS         float64 `json:"target_qps,omitempty"`
	TargetLatencyNs   int64   `json:"target_latency_ns,omitempty"`
	TargetPercentile  float64 `json:"target_latency_percentile,omitempty"`
	MinDurationMs     uint64  `json:"min_duration_ms"`
	MinQueryCount     uint64  `json:"min_query_count"`
	MaxErrorRate      float64 `json:"max_error_rate"`
	UseTokenLatencies bool    `json:"use_token_latencies,omitempty"`
	TTFTLatencyNs     int64   `json:"ttft_latency_ns,omitempty"`
	TPOTLatencyNs     int64   `json:"tpot_latency_ns,omitempty"`
}

// Result computes result.json of the Set's bundle.
func (s *Set) Result() (*ResultJSON, error) {
	b := s.b
	res := b.Result
	v, err := s.Verdict()
	if err != nil {
		return nil, err
	}
	e := res.Effective
	r := &ResultJSON{Schema: ResultSchema, Verdict: v, VerdictWord: v.Word(), Reasons: v.Reasons, SUT: res.SUTName, QSL: res.QSLName,
		Scenario: e.Scenario.String(), Mode: e.Mode.String(), Concurrency: e.Concurrency, ArrivalMode: -1,
		Accuracy: b.AccuracyCheck,
		Settings: ResultSettings{TargetQPS: e.TargetQPS, TargetLatencyNs: e.TargetLatencyNs, TargetPercentile: e.TargetLatencyPercentile,
			MinDurationMs: e.MinDurationMs, MinQueryCount: e.MinQueryCount, MaxErrorRate: e.MaxErrorRate,
			UseTokenLatencies: e.UseTokenLatencies},
	}
	if e.UseTokenLatencies {
		r.Settings.TTFTLatencyNs, r.Settings.TPOTLatencyNs = e.TTFTLatencyNs, e.TPOTLatencyNs
	}
	if e.Concurrency > 0 {
		r.Settings.TargetQPS = 0 // the generation rate, not a target
	}
	if sum := res.Summary; sum != nil {
		name, value := sum.Metric()
		unit := "samples/s"
		if e.Scenario == loadgen.SingleStream || e.Scenario == loadgen.MultiStream {
			unit = "ns"
		}
		// An empty pass, or one whose every sample failed or was lost,
		// has no headline: 0 would read as a result (the reasons say why).
		if ok := sum.SampleCount - sum.Result.LostSamples; ok > 0 && !math.IsNaN(value) && !math.IsInf(value, 0) {
			r.Headline = &Figure{Name: name, Value: value, Unit: unit}
		}
		r.LatencyNs = &Stats{Count: sum.SampleCount, Min: sum.SampleLatencyMin, Mean: sum.SampleLatencyMean, Max: sum.SampleLatencyMax}
		fillPercentiles(r.LatencyNs, sum.Percentiles)
		if e.UseTokenLatencies && sum.FirstTokenLatencyMax > 0 {
			t := &TokenStats{OutputTokens: sum.TokenCount,
				TTFTNs: Stats{Count: sum.SampleCount, Min: sum.FirstTokenLatencyMin, Mean: sum.FirstTokenLatencyMean, Max: sum.FirstTokenLatencyMax},
				TPOTNs: Stats{Count: sum.SampleCount, Min: sum.TimePerOutputTokenMin, Mean: sum.TimePerOutputTokenMean, Max: sum.TimePerOutputTokenMax}}
			fillPercentiles(&t.TTFTNs, sum.TokenPercentiles)
			fillPercentiles(&t.TPOTNs, sum.TPOTPercentiles)
			r.Tokens = t
		}
	}
	r.Streaming = s.Streaming()
	r.Samples = sampleCounts(res)
	r.Power = powerFigures(b, r.Samples)
	if res.Summary != nil {
		r.Goodput = goodputOf(b)
		r.SendLateness = s.SendLateness()
		r.Steady = steadyOf(s.Steady())
	}
	r.Sessions = sessionsOf(b)
	r.Bandwidth = s.Bandwidth()
	r.Network = NetworkOf(b)
	for _, e := range res.Errors {
		r.Errors = append(r.Errors, ErrorGroup{Group: e.Label(), Category: e.Category, Code: e.Code, CodeName: e.CodeName, Count: e.Count,
			Message: e.Message, Examples: e.Examples, FirstNs: e.FirstNs, LastNs: e.LastNs})
	}
	if gbt.TestOf(b) != nil {
		m, err := s.GBTMetrics()
		if err != nil {
			return nil, err
		}
		r.ArrivalMode = int(gbt.TestOf(b).Arrival.Mode)
		r.GBT = &GBTFigures{Loss: m.Loss, Throughput: m.Throughput}
		if m.Foreign != nil {
			fl := m.Foreign.Loss
			r.GBT.Foreign = &fl
		}
		r.Headline = nil
		// No headline when no job returned: 0 would read as a result.
		if v := m.Throughput.SamplesPerSecond; m.Throughput.Samples > 0 && !math.IsNaN(v) && !math.IsInf(v, 0) {
			r.Headline = &Figure{Name: m.Throughput.Name(), Value: v, Unit: "samples/s"}
		}
	}
	return r, nil
}

// sampleCounts counts the samples of the reported pass by status: from
// its summary, which has counted them (SampleCount holds the completed and
// the lost ones, Result.FailedSamples the failed), or, for a run without a
// performance pass, from the records.
func sampleCounts(res *loadgen.Result) SampleCounts {
	var c SampleCounts
	if sum := res.Summary; sum != nil {
		c.Failed, c.Lost = sum.Result.FailedSamples, sum.Result.LostSamples
		c.OK = sum.SampleCount - c.Lost
		c.Issued = sum.SampleCount + c.Failed
		if c.Issued > 0 {
			c.ErrorRate = float64(c.Failed) / float64(c.Issued)
		}
		return c
	}
	pass := res.ReportedPass()
	count := func(r loadgen.Record) {
		c.Issued++
		switch r.Status {
		case loadgen.StatusOK:
			c.OK++
		case loadgen.StatusError:
			c.Failed++
		case loadgen.StatusLost:
			c.Lost++
		}
	}
	if pass >= 0 {
		for r := range res.PassRecords(pass) {
			count(r)
		}
	} else {
		for r := range res.Records() {
			count(r)
		}
	}
	if c.Issued > 0 {
		c.ErrorRate = float64(c.Failed) / float64(c.Issued)
	}
	return c
}

func fillPercentiles(s *Stats, ps [6]loadgen.PercentileEntry) {
	// ReportedPercentiles: .50, .90, .95, .97, .99, .999.
	s.P50, s.P90, s.P95, s.P99, s.P999 = ps[0].SampleLatency, ps[1].SampleLatency, ps[2].SampleLatency, ps[4].SampleLatency, ps[5].SampleLatency
}

// WriteResult writes r as indented JSON with a final newline.
func WriteResult(w io.Writer, r *ResultJSON) error {
	enc, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(enc, '\n'))
	return err
}

func writeResult(s *Set, b *bundle.Bundle, w io.Writer) error {
	r, err := s.Result()
	if err != nil {
		return err
	}
	return WriteResult(w, r)
}
