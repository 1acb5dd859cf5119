package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
)

// ServerMetrics is what the server's own Prometheus endpoints said during
// the run (bundle's server_metrics.jsonl, read by package scrape), on the
// clock of the reported pass, as the report draws it beside the client's
// timeline.
type ServerMetrics struct {
	// IntervalNs is the time between two scrapes of one endpoint.
	IntervalNs int64
	// Endpoints are the endpoints scraped, each with its counts.
	Endpoints []ServerEndpoint
	// Series are the known quantities the endpoints exposed.
	Series []ServerSeries
	// Gaps are the failed scrapes.
	Gaps []ServerGap
}

// ServerEndpoint is one scraped endpoint.
type ServerEndpoint struct {
	Name    string // short name for legends (host:port)
	URL     string // the endpoint, without any password
	Scrapes int    // scrapes made
	Failed  int    // of them, failed (gaps)
}

// ServerSeries is one quantity of one endpoint over time.
type ServerSeries struct {
	// Quantity is what it is ("running requests", "KV-cache usage", …);
	// series of one quantity share a chart.
	Quantity string
	// Fraction marks a quantity between 0 and 1, drawn as a percentage.
	Fraction bool
	// Endpoint indexes ServerMetrics.Endpoints.
	Endpoint int
	// Source says which server's names it was read by and from which
	// metric, e.g. "vLLM: vllm:num_requests_running".
	Source string
	// TimesNs are the times of the values, from the reported pass's
	// start; Values are the values, NaN for a gap.
	TimesNs []int64
	Values  []float64
}

// ServerGap is a failed scrape.
type ServerGap struct {
	Endpoint int
	TimeNs   int64 // from the reported pass's start
	Error    string
}

// serverView is the server-metrics part of a scenario's section.
type serverView struct {
	Anchor  string // the scenario's anchor
	Note    string
	Charts  []serverChartView
	Sources table
	Table   table
}

// serverChartView is one chart: its caption and its SVG.
type serverChartView struct {
	Caption string
	SVG     template.HTML
}

// serverPalette colours the endpoints.
var serverPalette = []string{"#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"}

// buildServer lays out m over a pass of endNs nanoseconds: one chart per
// quantity, one line per endpoint, failed scrapes as red ticks under the
// axis; values before the pass's start or after its end are left out.
func buildServer(m *ServerMetrics, endNs int64, windows []windowMark) *serverView {
	if m == nil {
		return nil
	}
	v := &serverView{Table: table{Head: []string{"Endpoint", "Scrapes", "Failed (gaps)", "First failure"}}}
	for i, e := range m.Endpoints {
		first := ""
		for _, g := range m.Gaps {
			if g.Endpoint == i {
				first = fmt.Sprintf("%s: %s", fmtDur(g.TimeNs), g.Error)
				break
			}
		}
		v.Table.Rows = append(v.Table.Rows, []string{e.URL, fmtCount(uint64(e.Scrapes)), fmtCount(uint64(e.Failed)), first})
	}
	v.Sources = table{Head: []string{"Quantity", "Endpoint", "Read from"}}
	var quantities []string
	for _, s := range m.Series {
		if !slices.Contains(quantities, s.Quantity) {
			quantities = append(quantities, s.Quantity)
		}
		v.Sources.Rows = append(v.Sources.Rows, []string{s.Quantity, m.Endpoints[s.Endpoint].Name, s.Source})
	}
	if len(m.Series) == 0 {
		v.Note = "The endpoints exposed none of the series aimeter knows (running and waiting requests, KV-cache usage, prefix-cache hit rate of vLLM, SGLang, TGI or Triton); every sample is in server_metrics.jsonl."
	}
	if endNs <= 0 {
		return v
	}
	for _, q := range quantities {
		var ss []ServerSeries
		for _, s := range m.Series {
			if s.Quantity == q {
				ss = append(ss, s)
			}
		}
		caption := q + " (server)"
		if ss[0].Fraction {
			caption += ", 0–100 %"
		}
		if len(windows) > 0 {
			caption += "; shaded: the steady-state windows"
		}
		v.Charts = append(v.Charts, serverChartView{Caption: caption, SVG: serverChart(q, ss, m, endNs, windows)})
	}
	return v
}

// serverChart draws the series of one quantity as an inline SVG on the
// x axis of the client's timeline (0 to the pass's end).
func serverChart(q string, ss []ServerSeries, m *ServerMetrics, endNs int64, windows []windowMark) template.HTML {
	frac := ss[0].Fraction
	peak := 0.0
	for _, s := range ss {
		for i, v := range s.Values {
			if t := s.TimesNs[i]; t >= 0 && t <= endNs && !math.IsNaN(v) && !math.IsInf(v, 0) {
				peak = max(peak, v)
			}
		}
	}
	if frac {
		peak = 1
	}
	if peak == 0 {
		peak = 1
	}
	const w, h, left, bottom, top = 640.0, 180.0, 50.0, 28.0, 8.0
	x := func(t int64) float64 { return left + (w-left-8)*float64(t)/float64(endNs) }
	y := func(v float64) float64 { return top + (h-top-bottom)*(1-v/peak) }
	var b strings.Builder
	legend := 16 * float64(len(ss))
	fmt.Fprintf(&b, `<svg class="server-chart" data-quantity="%s" role="img" viewBox="0 0 %g %g" width="%g" height="%g" xmlns="http://www.w3.org/2000/svg">`,
		template.HTMLEscapeString(q), w, h+legend, w, h+legend)
	fmt.Fprintf(&b, `<title>%s (server) over the reported pass</title>`, template.HTMLEscapeString(q))
	for i, wm := range windows {
		x0 := x(max(int64(float64(wm.From)*1e9), 0))
		x1 := x(min(int64(float64(wm.To)*1e9), endNs))
		if x1 <= x0 {
			continue
		}
		fill := "rgba(31,119,180,0.10)"
		if i%2 == 1 {
			fill = "rgba(44,160,44,0.10)"
		}
		fmt.Fprintf(&b, `<rect class="steady-window" x="%.1f" y="%g" width="%.1f" height="%g" fill="%s"><title>%s</title></rect>`,
			x0, top, x1-x0, h-bottom-top, fill, template.HTMLEscapeString(wm.Label))
	}
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#888"/>`, left, h-bottom, w-8, h-bottom)
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#888"/>`, left, top, left, h-bottom)
	top1 := fmtSig(peak, 3)
	if frac {
		top1 = "100%"
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11" text-anchor="end">%s</text>`, left-4, top+10, top1)
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11" text-anchor="end">0</text>`, left-4, h-bottom)
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11">0 s</text>`, left, h-bottom+14)
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11" text-anchor="end">%s</text>`, w-8, h-bottom+14, template.HTMLEscapeString(fmtDur(endNs)))
	for k, s := range ss {
		col := serverPalette[s.Endpoint%len(serverPalette)]
		// A gap (NaN) or a point outside the pass breaks the line.
		var pts []string
		flush := func() {
			switch len(pts) {
			case 0:
			case 1:
				xy := strings.Split(pts[0], ",")
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2" fill="%s"/>`, xy[0], xy[1], col)
			default:
				fmt.Fprintf(&b, `<polyline class="server-line" fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, col, strings.Join(pts, " "))
			}
			pts = pts[:0]
		}
		for i, v := range s.Values {
			t := s.TimesNs[i]
			if t < 0 || t > endNs || math.IsNaN(v) || math.IsInf(v, 0) {
				flush()
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(t), y(min(v, peak))))
		}
		flush()
		ly := h + 12 + 16*float64(k)
		fmt.Fprintf(&b, `<rect x="%g" y="%g" width="10" height="10" fill="%s"/><text x="%g" y="%g" font-size="11">%s — %s</text>`,
			left, ly-9, col, left+14, ly, template.HTMLEscapeString(m.Endpoints[s.Endpoint].Name), template.HTMLEscapeString(s.Source))
	}
	for _, g := range m.Gaps {
		if g.TimeNs < 0 || g.TimeNs > endNs || !slices.ContainsFunc(ss, func(s ServerSeries) bool { return s.Endpoint == g.Endpoint }) {
			continue
		}
		fmt.Fprintf(&b, `<line class="server-gap" x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#d62728" stroke-width="2"><title>%s</title></line>`,
			x(g.TimeNs), h-bottom+2, x(g.TimeNs), h-bottom+8, template.HTMLEscapeString("scrape failed at "+fmtDur(g.TimeNs)+": "+g.Error))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // #nosec G203 -- built here from escaped text
}
