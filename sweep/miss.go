package sweep

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"aimeter/derived/metrics"
	"aimeter/loadgen"
	"aimeter/stats"
)

// BoundCheck is one bound of an SLO measured over one probe: where the
// probe's requests stand against it alone.
type BoundCheck struct {
	// Bound names it: "TTFT", "TPOT" or "E2E".
	Bound string `json:"bound"`
	// LimitMs is the bound, ms.
	LimitMs float64 `json:"limit_ms"`
	// Percentile is the goodput target as a percentile (90 for a target
	// of 0.9), and ValueMs the probe's value at that percentile, ms:
	// LoadGen's percentile over the successful requests (for TPOT, those
	// of at least 2 tokens), as the sweep's p90 columns are computed; the
	// largest value for a target of 1. 0 when no request has a value.
	Percentile float64 `json:"percentile"`
	ValueMs    float64 `json:"value_ms"`
	// Within is the share of the probe's issued requests that completed
	// within this bound alone; failed and lost requests never do, and a
	// one-token response is within any TPOT bound (metrics.SLO.Met).
	Within float64 `json:"within_fraction"`
	// Over says ValueMs > LimitMs: this bound alone keeps the probe below
	// the target.
	Over bool `json:"over"`
}

// Miss says why a goodput search found no concurrency (or no request
// rate): its first probe, at the lowest concurrency (rate) searched, fell
// short of the target, and the search (which assumes goodput falls as
// the load rises) went no further.
type Miss struct {
	// Concurrency is the probe's concurrency, for a search over
	// concurrency; 0 (left out of the JSON) for a search over rate.
	Concurrency uint64 `json:"concurrency,omitempty"`
	// TargetQPS is the probe's target rate, requests/s, for a search over
	// request rate; 0 (left out of the JSON) for a search over
	// concurrency.
	TargetQPS float64 `json:"target_qps,omitempty"`
	// Fraction is the probe's goodput fraction, below Target.
	Fraction float64 `json:"goodput_fraction"`
	Target   float64 `json:"target"`
	// Issued counts the probe's requests; Failed those that failed or were
	// lost, which never meet an SLO.
	Issued uint64 `json:"issued"`
	Failed uint64 `json:"failed"`
	// Bounds are the SLO's bounds measured over the probe, in the order
	// TTFT, TPOT, E2E; nil when its bundle held no measured pass.
	Bounds []BoundCheck `json:"bounds"`
	// Text is the miss in words (Miss.Describe), as the console and the
	// page say it.
	Text string `json:"text"`
}

// CheckBounds measures every bound of slo over the reported performance
// pass of res (the pass metrics.Measure reads) at the percentile of the
// goodput target (0 < target ≤ 1); nil for a result without one or an SLO
// without bounds.
func CheckBounds(res *loadgen.Result, slo SLO, target float64) []BoundCheck {
	pass := -1
	if res != nil {
		for i, p := range res.Passes {
			if p.Reported && p.Kind != loadgen.PassAccuracy {
				pass = i
			}
		}
	}
	if pass < 0 || slo.IsZero() {
		return nil
	}
	type bound struct {
		name  string
		limit time.Duration
		value func(metrics.Sample) (int64, bool)
		vals  []int64
		met   uint64
	}
	bounds := []*bound{
		{name: "TTFT", limit: slo.TTFT, value: func(x metrics.Sample) (int64, bool) { return x.TTFTNs, true }},
		{name: "TPOT", limit: slo.TPOT, value: func(x metrics.Sample) (int64, bool) { return x.TPOTNs, x.HasTPOT }},
		{name: "E2E", limit: slo.E2E, value: func(x metrics.Sample) (int64, bool) { return x.E2ENs, true }},
	}
	bounds = slices.DeleteFunc(bounds, func(b *bound) bool { return b.limit <= 0 })
	var issued uint64
	for r := range res.PassRecords(pass) {
		issued++
		x := metrics.SampleOf(r)
		if !x.OK {
			continue
		}
		for _, b := range bounds {
			v, ok := b.value(x)
			if !ok {
				b.met++ // no gap between tokens: within any TPOT bound
				continue
			}
			b.vals = append(b.vals, v)
			if v <= int64(b.limit) {
				b.met++
			}
		}
	}
	var out []BoundCheck
	for _, b := range bounds {
		c := BoundCheck{Bound: b.name, LimitMs: ms(int64(b.limit)), Percentile: 100 * target}
		if len(b.vals) > 0 {
			slices.Sort(b.vals)
			v := b.vals[len(b.vals)-1]
			if target < 1 {
				v = stats.Percentile(b.vals, target)
			}
			c.ValueMs, c.Over = ms(v), v > int64(b.limit)
		}
		if issued > 0 {
			c.Within = float64(b.met) / float64(issued)
		}
		out = append(out, c)
	}
	return out
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// load names the probe's load: "concurrency 4" or "5 requests/s".
func (m *Miss) load() string {
	if m.TargetQPS > 0 {
		return fmtRate(m.TargetQPS) + " requests/s"
	}
	return fmt.Sprintf("concurrency %d", m.Concurrency)
}

// fmtRate writes a request rate as the search chose it: 5, 13.625.
func fmtRate(q float64) string { return strconv.FormatFloat(q, 'g', -1, 64) }

// ReadBestQPS is how a rate search's best rate is read back from a file:
// a 0, what files before JSON null recorded when no rate met the target,
// is nil.
func ReadBestQPS(best *float64) *float64 {
	if best != nil && *best == 0 {
		return nil
	}
	return best
}

// Outcome is the rate search's result in words: the highest rate that
// met the target, or that none did and why (Miss.Describe of its
// Shortfall). It is the one text of the outcome, which the console, the
// page (rate-search.html) and the exit message print, as
// SearchResult.Outcome is a concurrency search's.
func (r *RateSearchResult) Outcome() string {
	target := fmtFraction(r.Options.Target)
	if r.Best != nil {
		best := fmtRate(*r.Best)
		switch r.Stop {
		case StopLimit:
			return fmt.Sprintf("the highest rate whose goodput fraction reached %s is %s requests/s, the maximum searched (it may go higher)", target, best)
		case StopPartial:
			return fmt.Sprintf("the search ended early: the highest rate whose goodput fraction reached %s so far is %s requests/s", target, best)
		}
		return fmt.Sprintf("the highest rate whose goodput fraction reached %s is %s requests/s", target, best)
	}
	none := fmt.Sprintf("no request rate from %s to %s requests/s met the goodput target %s", fmtRate(r.Options.Start), fmtRate(r.Options.Max), target)
	switch {
	case r.Shortfall != nil:
		return none + ": " + r.Shortfall.Describe()
	case len(r.Probes) > 0:
		p := r.Probes[0]
		return fmt.Sprintf("%s: at %s requests/s (goodput fraction %s < %s)", none, fmtRate(p.TargetQPS), fmtFraction(p.Fraction), target)
	}
	return fmt.Sprintf("the search ended before its first probe finished: no request rate is known to meet the goodput target %s", target)
}

// Describe says in words which bounds kept the probe below the target and
// by how much, e.g. "TPOT p90 3.2 ms > 1 ms (12 % of requests within it)
// at concurrency 4 (goodput fraction 0.12 < 0.9)", or "… at 5
// requests/s (…)" for a search over rate; where no bound alone is over,
// that failed requests or the bounds together are the cause. It is the
// one text of a miss: Miss.Text, the console's and the page's.
func (m *Miss) Describe() string {
	at := fmt.Sprintf("at %s (goodput fraction %s < %s)", m.load(), fmtFraction(m.Fraction), fmtFraction(m.Target))
	failed := ""
	if m.Failed > 0 {
		failed = fmt.Sprintf("; %d of %d requests failed or were lost, and these never meet an SLO", m.Failed, m.Issued)
	}
	if m.Issued == 0 || m.Bounds == nil {
		return "no request was measured " + at
	}
	if m.Failed == m.Issued {
		return fmt.Sprintf("all %d requests failed or were lost %s", m.Issued, at)
	}
	var over, under []string
	for _, b := range m.Bounds {
		p := "p" + fmtNum(b.Percentile)
		if b.Over {
			over = append(over, fmt.Sprintf("%s %s %s ms > %s ms (%s %% of requests within it)",
				b.Bound, p, fmtNum(b.ValueMs), fmtNum(b.LimitMs), fmtNum(100*b.Within)))
		} else {
			under = append(under, fmt.Sprintf("%s %s %s ms ≤ %s ms", b.Bound, p, fmtNum(b.ValueMs), fmtNum(b.LimitMs)))
		}
	}
	if len(over) > 0 {
		return strings.Join(over, ", ") + " " + at + failed
	}
	if failed != "" {
		return fmt.Sprintf("each bound alone is met at its percentile (%s), but %d of %d requests failed or were lost, and these never meet an SLO, %s",
			strings.Join(under, ", "), m.Failed, m.Issued, at)
	}
	return fmt.Sprintf("each bound alone is met at its percentile (%s), but fewer requests met all of them together %s",
		strings.Join(under, ", "), at)
}

// fmtNum writes v with 4 significant digits and no exponent, trailing
// zeros dropped: 5.009, 23.59, 1, 1234.
func fmtNum(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	dec := max(0, 3-int(math.Floor(math.Log10(math.Abs(v)))))
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// fmtFraction writes a goodput fraction or target as it was given or
// measured, to at most 4 decimals: 0.9, 0.1234, 0.
func fmtFraction(f float64) string {
	s := strconv.FormatFloat(f, 'f', 4, 64)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}
