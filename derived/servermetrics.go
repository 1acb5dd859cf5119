package derived

import (
	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/report"
	"aimeter/scrape"
)

// ReportServerMetrics is a bundle's server metrics as the report draws
// them: the known series of every endpoint (scrape.Known) and its failed
// scrapes, moved from the run's clock to the clock of res's reported pass
// (whose start is PassInfo.StartUnixNs − StartTime after the run's); nil
// for nil.
func ReportServerMetrics(m *bundle.ServerMetrics, res *loadgen.Result) *report.ServerMetrics {
	if m == nil {
		return nil
	}
	shift := int64(0)
	if res != nil && !res.StartTime.IsZero() {
		if i := res.ReportedPass(); i >= 0 {
			shift = res.Passes[i].StartUnixNs - res.StartTime.UnixNano()
		}
	}
	out := &report.ServerMetrics{IntervalNs: m.IntervalNs}
	for _, t := range m.Targets {
		out.Endpoints = append(out.Endpoints, report.ServerEndpoint{Name: scrape.TargetName(t), URL: t})
	}
	for _, s := range m.Scrapes {
		e := &out.Endpoints[s.Target]
		e.Scrapes++
		if s.Error != "" {
			e.Failed++
			out.Gaps = append(out.Gaps, report.ServerGap{Endpoint: s.Target, TimeNs: s.TimeNs + s.DurationNs/2 - shift, Error: s.Error})
		}
	}
	for _, s := range scrape.Known(m) {
		rs := report.ServerSeries{Quantity: string(s.Quantity), Fraction: s.Quantity == scrape.KVCache || s.Quantity == scrape.PrefixHR,
			Endpoint: s.Target, Source: s.Server + ": " + s.Metric}
		for _, p := range s.Points {
			rs.TimesNs = append(rs.TimesNs, p.TimeNs-shift)
			rs.Values = append(rs.Values, p.Value)
		}
		out.Series = append(out.Series, rs)
	}
	return out
}
