package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"aimeter/loadgen"
)

// Search phases, as the probes of a search record them.
const (
	PhaseCheck  = "check"  // the starting concurrency
	PhaseWiden  = "widen"  // doubling until a probe fails
	PhaseBisect = "bisect" // halving the bracket
)

// Search stops.
const (
	StopFound   = "found"   // bisected to adjacent concurrencies
	StopLimit   = "limit"   // every probe up to the maximum passed
	StopNone    = "none"    // the starting concurrency failed: no point meets the target
	StopPartial = "partial" // the search ended early (an error, an interrupt)
)

// SearchOptions bound a goodput search.
type SearchOptions struct {
	// Start is the first concurrency probed; 0 means 1.
	Start uint64 `json:"start"`
	// Max is the highest concurrency probed; required, ≥ Start.
	Max uint64 `json:"max"`
	// Target is the goodput fraction a probe must reach to pass, in (0, 1].
	Target float64 `json:"target"`
}

// ProbeFunc runs one probe at concurrency c and returns the fraction of its
// requests that met the SLO.
type ProbeFunc func(ctx context.Context, c uint64, phase string) (float64, error)

// Probe is one probe of a search.
type Probe struct {
	Concurrency uint64  `json:"concurrency"`
	Phase       string  `json:"phase"`
	Fraction    float64 `json:"goodput_fraction"`
	Pass        bool    `json:"pass"`
	// Dir is the probe's bundle, relative to the sweep directory (filled
	// by Summarize).
	Dir string `json:"dir,omitempty"`
}

// SearchResult is the outcome of a search.
type SearchResult struct {
	Options SearchOptions `json:"options"`
	// Best is the highest concurrency found whose goodput fraction reached
	// the target; nil (JSON null) when none did. A summary written before
	// this field could be null recorded 0 for none; SearchResult's
	// UnmarshalJSON reads that 0 as nil, as no search ever finds
	// concurrency 0.
	Best *uint64 `json:"best"`
	// Stop says how the search ended (StopFound, StopLimit, StopNone,
	// StopPartial).
	Stop string `json:"stop"`
	// Shortfall says why no concurrency met the target: which bounds of
	// the SLO the first probe missed and by how much (filled by
	// Summarize, which reads the probe's records); nil when one did, or
	// before any probe finished.
	Shortfall *Miss `json:"shortfall,omitempty"`
	// Probes are every probe, in the order run.
	Probes []Probe `json:"probes"`
}

func (o SearchOptions) check() error {
	if !(o.Target > 0 && o.Target <= 1) {
		return fmt.Errorf("goodput target %v: want a fraction in (0, 1]", o.Target)
	}
	if o.Max < max(o.Start, 1) {
		return fmt.Errorf("search maximum %d: must be ≥ the start %d", o.Max, max(o.Start, 1))
	}
	if o.Max > loadgen.MaxConcurrency {
		return fmt.Errorf("search maximum %d: above the most concurrency aimeter runs (%d)", o.Max, loadgen.MaxConcurrency)
	}
	return nil
}

// FindMaxConcurrency searches the highest concurrency whose goodput
// fraction reaches opts.Target, by LoadGen's find-peak procedure over
// integer concurrency: check the start; widen the bracket [l, l·(1+1))
// (LoadGen's default boundary step of 1: doubling) until a probe fails or
// the maximum is reached; then bisect until the bounds agree to zero
// decimals (loadgen.FindPeakFinished: adjacent integers). Like find-peak,
// it assumes goodput falls as concurrency rises, and reports the last
// passing lower bound. Every probe is kept. An error of probe ends the
// search: the result so far (StopPartial) is returned with it.
func FindMaxConcurrency(ctx context.Context, opts SearchOptions, probe ProbeFunc) (SearchResult, error) {
	if opts.Start == 0 {
		opts.Start = 1
	}
	res := SearchResult{Options: opts}
	if err := opts.check(); err != nil {
		return res, err
	}
	run := func(c uint64, phase string) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		f, err := probe(ctx, c, phase)
		if err != nil {
			return false, fmt.Errorf("goodput probe at concurrency %d: %w", c, err)
		}
		ok := f >= opts.Target
		res.Probes = append(res.Probes, Probe{Concurrency: c, Phase: phase, Fraction: f, Pass: ok})
		return ok, nil
	}
	best, found, stop, err := findPeak(opts.Start, opts.Max, run, func(lower, upper uint64) bool {
		return loadgen.FindPeakFinished(float64(lower), float64(upper), 0)
	})
	res.Stop = stop
	if found {
		res.Best = &best
	}
	return res, err
}

// UnmarshalJSON reads a search result, a best concurrency of 0 (how
// summaries before JSON null said none was found) as nil.
func (r *SearchResult) UnmarshalJSON(data []byte) error {
	type plain SearchResult
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	if p.Best != nil && *p.Best == 0 {
		p.Best = nil
	}
	*r = SearchResult(p)
	return nil
}

// Outcome is the search's result in words: the highest concurrency that
// met the target, or that none did and why (Miss.Describe). It is the
// one text of the outcome, which the console, the page and the exit
// message (Summary.Shortfall) print.
func (r *SearchResult) Outcome() string {
	target := fmtFraction(r.Options.Target)
	if r.Best != nil {
		found := fmt.Sprintf("the highest concurrency whose goodput fraction reached %s is %d", target, *r.Best)
		switch r.Stop {
		case StopLimit:
			return found + ", the maximum searched (it may go higher)"
		case StopPartial:
			return fmt.Sprintf("the search ended early: the highest concurrency whose goodput fraction reached %s so far is %d", target, *r.Best)
		}
		return found
	}
	none := fmt.Sprintf("no concurrency from %d to %d met the goodput target %s", r.Options.Start, r.Options.Max, target)
	switch {
	case r.Shortfall != nil:
		return none + ": " + r.Shortfall.Describe()
	case len(r.Probes) > 0:
		p := r.Probes[0]
		return fmt.Sprintf("%s: at concurrency %d (goodput fraction %s < %s)", none, p.Concurrency, fmtFraction(p.Fraction), target)
	}
	return fmt.Sprintf("the search ended before its first probe finished: no concurrency is known to meet the goodput target %s", target)
}

// errReplayEnd ends the replay of a search whose recorded probes ran out.
var errReplayEnd = errors.New("the recorded probes end here")
