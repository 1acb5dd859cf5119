package sweep

import (
	"context"
	"fmt"
	"math"

	"aimeter/loadgen"
)

// RateSearchOptions bound a goodput search over request rate: the Server
// scenario's target_qps, LoadGen's Poisson schedule.
type RateSearchOptions struct {
	// Start is the first rate probed, requests/s; required, > 0.
	Start float64 `json:"start_qps"`
	// Max is the highest rate probed; required, ≥ Start.
	Max float64 `json:"max_qps"`
	// Target is the goodput fraction a probe must reach to pass, in (0, 1].
	Target float64 `json:"target"`
	// Decimals ends the bisection once the bounds agree to this many
	// decimal places (LoadGen's server_find_peak_qps_decimals_of_precision,
	// loadgen.FindPeakFinished); 0 means whole requests/s. At most 6.
	Decimals int `json:"decimals"`
	// Resolution, when > 0, ends the bisection earlier, once the bracket
	// is within this fraction of the lower bound (loadgen.Options'
	// FindPeakResolution); 0 bisects to Decimals.
	Resolution float64 `json:"resolution,omitempty"`
}

// RateProbeFunc runs one probe at qps requests/s and returns the fraction
// of its requests that met the SLO.
type RateProbeFunc func(ctx context.Context, qps float64, phase string) (float64, error)

// RateProbe is one probe of a rate search.
type RateProbe struct {
	TargetQPS float64 `json:"target_qps"`
	Phase     string  `json:"phase"`
	Fraction  float64 `json:"goodput_fraction"`
	Pass      bool    `json:"pass"`
	// Dir is the probe's bundle, relative to the search directory (set
	// by the caller).
	Dir string `json:"dir,omitempty"`
}

// RateSearchResult is the outcome of a rate search.
type RateSearchResult struct {
	Options RateSearchOptions `json:"options"`
	// Best is the highest rate found whose goodput fraction reached the
	// target; nil (JSON null) when none did. A file written before this
	// field could be null recorded 0 for none; benchmark.ReadRateSearch
	// reads that 0 as nil (ReadBestQPS), as no search probes 0
	// requests/s.
	Best *float64 `json:"best_qps"`
	// Stop says how the search ended (StopFound, StopLimit, StopNone,
	// StopPartial).
	Stop string `json:"stop"`
	// Shortfall says why no rate met the target: which bounds of the SLO
	// the first probe missed and by how much (Miss, filled by the caller,
	// which has the probe's records); nil when one did, or before any
	// probe finished.
	Shortfall *Miss `json:"shortfall,omitempty"`
	// Probes are every probe, in the order run.
	Probes []RateProbe `json:"probes"`
}

func (o RateSearchOptions) check() error {
	switch {
	case !(o.Target > 0 && o.Target <= 1):
		return fmt.Errorf("goodput target %v: want a fraction in (0, 1]", o.Target)
	case !(o.Start > 0) || math.IsInf(o.Start, 0):
		return fmt.Errorf("search start %v requests/s: want a finite rate > 0", o.Start)
	case !(o.Max >= o.Start) || math.IsInf(o.Max, 0):
		return fmt.Errorf("search maximum %v requests/s: want a finite rate ≥ the start %v", o.Max, o.Start)
	case o.Decimals < 0 || o.Decimals > 6:
		return fmt.Errorf("search decimals %d: want 0 to 6", o.Decimals)
	case o.Resolution < 0 || math.IsNaN(o.Resolution) || o.Resolution >= 1:
		return fmt.Errorf("search resolution %v: want a fraction in [0, 1)", o.Resolution)
	}
	return nil
}

// FindMaxRate searches the highest request rate whose goodput fraction
// reaches opts.Target, by LoadGen's find-peak procedure for the Server
// scenario (loadgen's FindPeakPerformanceMode) with the goodput fraction
// instead of the latency percentile deciding each probe: check the start;
// widen the bracket [l, 2l) (LoadGen's default boundary step of 1) until a
// probe fails or the maximum is reached; then bisect at l + (u − l)/2 until
// the bounds agree to opts.Decimals places (or within opts.Resolution). It
// assumes goodput falls as the rate rises, and reports the last passing
// lower bound. Every probe is kept. An error of probe ends the search: the
// result so far (StopPartial) is returned with it.
func FindMaxRate(ctx context.Context, opts RateSearchOptions, probe RateProbeFunc) (RateSearchResult, error) {
	res := RateSearchResult{Options: opts}
	if err := opts.check(); err != nil {
		return res, err
	}
	run := func(q float64, phase string) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		f, err := probe(ctx, q, phase)
		if err != nil {
			return false, fmt.Errorf("goodput probe at %g requests/s: %w", q, err)
		}
		ok := f >= opts.Target
		res.Probes = append(res.Probes, RateProbe{TargetQPS: q, Phase: phase, Fraction: f, Pass: ok})
		return ok, nil
	}
	best, found, stop, err := findPeak(opts.Start, opts.Max, run, func(lower, upper float64) bool {
		r := opts.Resolution
		return loadgen.FindPeakFinished(lower, upper, opts.Decimals) || r > 0 && upper-lower <= r*lower
	})
	res.Stop = stop
	if found {
		res.Best = &best
	}
	return res, err
}
