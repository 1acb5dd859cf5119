package metrics

import (
	"errors"
	"math"
	"slices"

	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/stats"
)

// Point is what one run of a sweep measured: MLPerf Endpoints v1.0's
// per-point metrics (section 4.1) and aimeter's counts, over the run's reported
// pass. Latency percentiles are LoadGen's (the value at index
// trunc(n·p) of the sorted values), over successful requests only.
type Point struct {
	// Concurrency is the fixed concurrency of the run (for the Offline
	// point, the whole data set in flight).
	Concurrency uint64 `json:"concurrency"`
	// Offline marks the Offline point.
	Offline bool `json:"offline,omitempty"`
	// Region is the Endpoints region of the concurrency ("" when the sweep
	// has no regions: listed points below 33, or the Offline point).
	Region string `json:"region,omitempty"`
	// Dir is the point's bundle, relative to the sweep directory.
	Dir string `json:"dir"`
	// Verdict is the run's verdict word (VALID, INVALID, …).
	Verdict string `json:"verdict"`
	// Issued counts the requests issued; Completed the successful ones;
	// Errors the failed ones; Lost those that never completed. Failures
	// are never completions.
	Issued    uint64 `json:"issued"`
	Completed uint64 `json:"completed"`
	Errors    uint64 `json:"errors"`
	Lost      uint64 `json:"lost"`
	// OutputTokens is the output tokens of the successful requests.
	OutputTokens int64 `json:"output_tokens"`
	// ElapsedS is the length of the pass, s: from the start of issuing to
	// its end.
	ElapsedS float64 `json:"elapsed_s"`
	// SystemTPS is OutputTokens / ElapsedS (system_tps).
	SystemTPS float64 `json:"system_tps"`
	// TPOTP90Ms is the 90th percentile of the per-request TPOT, ms, over
	// successful responses of at least 2 tokens; TPSPerUser is 1000 /
	// TPOTP90Ms (tps_per_user). Both 0 when no response has a TPOT.
	TPOTP90Ms  float64 `json:"tpot_p90_ms"`
	TPSPerUser float64 `json:"tps_per_user"`
	// TTFTP90Ms is the 90th percentile of the time to first token, ms,
	// from the scheduled time (ttft_p90_ms).
	TTFTP90Ms float64 `json:"ttft_p90_ms"`
	// E2EP90Ms is the 90th percentile of the end-to-end latency, ms.
	E2EP90Ms float64 `json:"e2e_p90_ms"`
	// RequestRate is Completed / ElapsedS, requests/s.
	RequestRate float64 `json:"request_rate"`
	// Goodput is the part of the load that met the sweep's SLO; nil
	// without an SLO.
	Goodput *Goodput `json:"goodput,omitempty"`
}

// Goodput is the requests that met an SLO, as rates over the pass.
type Goodput struct {
	// Met counts the requests that met every bound.
	Met uint64 `json:"met"`
	// Fraction is Met / issued requests: failed and lost ones count as
	// missing the SLO.
	Fraction float64 `json:"fraction"`
	// RequestsPerS is Met / elapsed s.
	RequestsPerS float64 `json:"requests_per_s"`
	// TokensPerS is the output tokens of the requests that met the SLO,
	// per elapsed s.
	TokensPerS float64 `json:"tokens_per_s"`
}

// ErrNoPass is the error of measuring a run without a reported
// performance pass (an accuracy run, or one interrupted before issuing).
var ErrNoPass = errors.New("the run has no reported performance pass")

// Measure measures the reported pass of a bundle (read by bundle.Read or
// just written): its records, through the bundle's reader, are the only
// input, so that a sweep's summary is a function of its bundles. slo may
// be zero (no goodput).
func Measure(b *bundle.Bundle, slo SLO) (Point, error) {
	if b == nil || b.Result == nil {
		return Point{}, ErrNoPass
	}
	return MeasureResult(b.Result, slo)
}

// MeasureResult is Measure of a run's result.
func MeasureResult(res *loadgen.Result, slo SLO) (Point, error) {
	pass := -1
	for i, p := range res.Passes {
		if p.Reported && p.Kind != loadgen.PassAccuracy {
			pass = i
		}
	}
	if pass < 0 {
		return Point{}, ErrNoPass
	}
	info := res.Passes[pass]
	p := Point{Concurrency: res.Effective.Concurrency, ElapsedS: float64(info.EndNs) / 1e9}
	var met, withTPOT uint64
	var metTokens int64
	for r := range res.PassRecords(pass) {
		p.Issued++
		switch r.Status {
		case loadgen.StatusError:
			p.Errors++
		case loadgen.StatusLost:
			p.Lost++
		}
		x := SampleOf(r)
		if !x.OK {
			continue
		}
		p.Completed++
		p.OutputTokens += x.Tokens
		if x.HasTPOT {
			withTPOT++
		}
		if !slo.IsZero() && slo.Met(x) {
			met++
			metTokens += x.Tokens
		}
	}
	// Each percentile from one buffer refilled by another read of the
	// records: 8 bytes a sample at most, not three slices grown by
	// appending (issue 43: a long run's report must fit where its run did).
	buf := make([]int64, 0, max(p.Completed, withTPOT))
	p90 := func(pick func(x Sample) (int64, bool)) float64 {
		buf = buf[:0]
		for r := range res.PassRecords(pass) {
			if x := SampleOf(r); x.OK {
				if v, ok := pick(x); ok {
					buf = append(buf, v)
				}
			}
		}
		if len(buf) == 0 {
			return 0
		}
		slices.Sort(buf)
		return float64(stats.Percentile(buf, 0.9)) / 1e6
	}
	p.TTFTP90Ms = p90(func(x Sample) (int64, bool) { return x.TTFTNs, true })
	p.TPOTP90Ms = p90(func(x Sample) (int64, bool) { return x.TPOTNs, x.HasTPOT })
	p.E2EP90Ms = p90(func(x Sample) (int64, bool) { return x.E2ENs, true })
	if p.TPOTP90Ms > 0 {
		p.TPSPerUser = 1000 / p.TPOTP90Ms
	}
	rate := func(x float64) float64 {
		if p.ElapsedS <= 0 {
			return 0
		}
		return x / p.ElapsedS
	}
	p.SystemTPS = rate(float64(p.OutputTokens))
	p.RequestRate = rate(float64(p.Completed))
	if !slo.IsZero() {
		g := &Goodput{Met: met, RequestsPerS: rate(float64(met)), TokensPerS: rate(float64(metTokens))}
		if p.Issued > 0 {
			g.Fraction = float64(met) / float64(p.Issued)
		}
		p.Goodput = g
	}
	for _, f := range []*float64{&p.SystemTPS, &p.RequestRate} {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0
		}
	}
	return p, nil
}
