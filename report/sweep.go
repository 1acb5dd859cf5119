package report

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"

	"aimeter/sweep"
)

// sweepColors tell the sweeps of one page apart.
var sweepColors = []string{"#3b7dd8", "#d8613b", "#2e9e5b", "#9b59b6", "#c0392b", "#7f8c8d"}

// WriteSweeps writes the self-contained HTML page of one or more sweeps
// (sweep.html; `aimeter report` over several sweep directories puts them
// side by side): the Pareto curve of system_tps over tps_per_user and
// system_tps, TTFT p90 and goodput over concurrency, each drawn as a step
// function through the measured points and never interpolated (MLPerf
// Endpoints v1.0 section 5.2), on axes fitted to the points (fitAxis); the
// Pareto chart labels each point with its concurrency and draws the
// Offline point. Then every point's table (the Offline point its last
// row), the Offline check and a goodput search's probes and outcome.
func WriteSweeps(w io.Writer, sums []*sweep.Summary) error {
	if len(sums) == 0 {
		return fmt.Errorf("report: no sweep to write")
	}
	v := sweepView{PageCSS: template.CSS(pageCSS)}
	var names []string
	hasGoodput := false
	for i, s := range sums {
		sv := sweepOne{Summary: s, Color: sweepColors[i%len(sweepColors)], Label: sweepLabel(s, i)}
		names = append(names, sv.Label)
		for _, p := range s.Points {
			sv.Rows = append(sv.Rows, sweepRow(p))
			if p.Goodput != nil {
				hasGoodput = true
			}
		}
		if o := s.Offline; o != nil {
			r := sweepRow(o.Point)
			r.Concurrency = fmt.Sprintf("Offline (%s in flight)", fmtCount(o.Point.Concurrency))
			sv.Rows = append(sv.Rows, r)
		}
		if r := s.Regions; r != nil {
			sv.RegionText = fmt.Sprintf("Cmin %d, Cmax %d: ultra-low 1–%d, low %s, medium %s, high %s, margin %s",
				r.CMin, r.CMax, r.UltraLow.End, rangeText(r.Low), rangeText(r.Medium), rangeText(r.High), rangeText(r.Margin))
		}
		v.Sweeps = append(v.Sweeps, sv)
	}
	v.Title = "Sweep: " + strings.Join(names, " · ")
	v.Pareto = stepChart(chartSpec{class: "pareto", xLabel: "tps_per_user (1000 / TPOT p90 ms)", yLabel: "system_tps (output tokens/s)",
		width: paretoWidth, height: paretoHeight, pareto: true,
		xy: func(p sweep.Point) (float64, float64, bool) { return p.TPSPerUser, p.SystemTPS, p.TPSPerUser > 0 }}, v.Sweeps)
	overC := func(class, yLabel string, y func(sweep.Point) (float64, bool)) template.HTML {
		return stepChart(chartSpec{class: class, xLabel: "concurrency (log scale)", yLabel: yLabel, width: chartWidth, height: chartHeight,
			xy: func(p sweep.Point) (float64, float64, bool) {
				v, ok := y(p)
				return float64(p.Concurrency), v, ok
			}}, v.Sweeps)
	}
	v.TPS = overC("tps-concurrency", "system_tps (output tokens/s)", func(p sweep.Point) (float64, bool) { return p.SystemTPS, true })
	v.TTFT = overC("ttft-concurrency", "TTFT p90 (ms)", func(p sweep.Point) (float64, bool) { return p.TTFTP90Ms, true })
	if hasGoodput {
		v.Goodput = overC("goodput-concurrency", "goodput (output tokens/s meeting the SLO)", func(p sweep.Point) (float64, bool) {
			if p.Goodput == nil {
				return 0, false
			}
			return p.Goodput.TokensPerS, true
		})
	}
	return sweepTmpl.Execute(w, &v)
}

func sweepLabel(s *sweep.Summary, i int) string {
	name := s.Name
	if name == "" {
		name = "sweep"
	}
	return fmt.Sprintf("%d. %s", i+1, name)
}

func rangeText(r sweep.Range) string {
	if r.Start > r.End {
		return "empty"
	}
	return fmt.Sprintf("%d–%d", r.Start, r.End)
}

type sweepView struct {
	Title                      string
	PageCSS                    template.CSS
	Sweeps                     []sweepOne
	Pareto, TPS, TTFT, Goodput template.HTML
}

type sweepOne struct {
	*sweep.Summary
	Color, Label string
	RegionText   string
	Rows         []sweepRowView
}

type sweepRowView struct {
	Concurrency, Region, Dir, Verdict               string
	SystemTPS, TPSPerUser, TTFT, TPOT, Rate, Errors string
	Goodput                                         string
}

func sweepRow(p sweep.Point) sweepRowView {
	r := sweepRowView{Concurrency: fmtCount(p.Concurrency), Region: p.Region, Dir: p.Dir, Verdict: p.Verdict,
		SystemTPS: fmtSig(p.SystemTPS, 4), TPSPerUser: fmtSig(p.TPSPerUser, 4), TTFT: fmtSig(p.TTFTP90Ms, 4) + " ms",
		TPOT: fmtSig(p.TPOTP90Ms, 4) + " ms", Rate: fmtSig(p.RequestRate, 4) + "/s",
		Errors: fmt.Sprintf("%s of %s", fmtCount(p.Errors), fmtCount(p.Issued))}
	if p.Lost > 0 {
		r.Errors += fmt.Sprintf(" (%s lost)", fmtCount(p.Lost))
	}
	if g := p.Goodput; g != nil {
		r.Goodput = fmt.Sprintf("%s %% · %s req/s · %s tok/s", fmtSig(100*g.Fraction, 4), fmtSig(g.RequestsPerS, 4), fmtSig(g.TokensPerS, 4))
	}
	return r
}

// Chart sizes, px: the Pareto chart spans the page; the charts over
// concurrency sit two abreast at 1400 px.
const (
	paretoWidth, paretoHeight = 1000.0, 560.0
	chartWidth, chartHeight   = 640.0, 360.0
)

// chartSpec is one chart of a sweep page.
type chartSpec struct {
	class, xLabel, yLabel string
	width, height         float64
	// pareto draws the Pareto frontier over axes fitted to the data, the
	// Offline point beside the fixed-concurrency ones, and labels every
	// point with its concurrency; otherwise x is the concurrency (log 2)
	// and each value holds until the next point.
	pareto bool
	xy     func(sweep.Point) (float64, float64, bool)
}

// chartPt is one point of a chart.
type chartPt struct {
	x, y    float64
	c       uint64
	offline bool
	// inStep: the point is on the step curve (the Offline point only
	// where it reaches 98 % of the Cmax point, as the rules' Offline
	// point; one that misses is drawn hollow, the Cmax point standing in).
	inStep bool
}

// pxBox is a rectangle of the chart, px.
type pxBox struct{ x0, y0, x1, y1 float64 }

func (b pxBox) overlaps(o pxBox) bool {
	return b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1
}

func (b pxBox) inside(o pxBox) bool {
	return b.x0 >= o.x0 && b.x1 <= o.x1 && b.y0 >= o.y0 && b.y1 <= o.y1
}

// stepChart draws the points of every sweep and, through them, a step
// function: over concurrency the value holds from one point to the next;
// for the Pareto curve it is the frontier f(x) = the highest y of any
// point at x or to its right, a staircase through the points. No line
// between points is interpolated. The axes are fitted to the data
// (fitAxis, concurrencyAxis), each with its ticks and a light grid.
func stepChart(spec chartSpec, sweeps []sweepOne) template.HTML {
	const left, right, top, bottom = 72.0, 20.0, 16.0, 48.0
	width, height := spec.width, spec.height
	pw, ph := width-left-right, height-top-bottom
	frame := pxBox{left, top, left + pw, top + ph}
	series := make([][]chartPt, len(sweeps))
	var xs, ys []float64
	add := func(i int, p sweep.Point, offline, inStep bool) {
		x, y, ok := spec.xy(p)
		if !ok || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) || (!spec.pareto && x <= 0) {
			return
		}
		series[i] = append(series[i], chartPt{x: x, y: y, c: p.Concurrency, offline: offline, inStep: inStep})
		xs, ys = append(xs, x), append(ys, y)
	}
	for i, s := range sweeps {
		for _, p := range s.Points {
			add(i, p, false, true)
		}
		if o := s.Offline; spec.pareto && o != nil {
			add(i, o.Point, true, o.Meets)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="%s" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s over %s">`,
		spec.class, svgNum(width), svgNum(height), svgNum(width), svgNum(height), template.HTMLEscapeString(spec.yLabel), template.HTMLEscapeString(spec.xLabel))
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#bbb"/>`, svgNum(left), svgNum(top), svgNum(pw), svgNum(ph))
	if len(xs) == 0 {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" fill="currentColor">no points</text></svg>`, svgNum(left+pw/2), svgNum(top+ph/2))
		return template.HTML(b.String())
	}
	ya := fitAxis(ys, top+ph, top)
	xa := concurrencyAxis(xs, left, left+pw)
	if spec.pareto {
		xa = fitAxis(xs, left, left+pw)
	}
	b.WriteString(`<g class="ticks">`)
	for _, t := range ya.ticks {
		y := ya.px(t)
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="currentColor" stroke-opacity="0.12"/>`, svgNum(left), svgNum(left+pw), svgNum(y), svgNum(y))
		fmt.Fprintf(&b, `<text class="y-tick" x="%s" y="%s" font-size="12" text-anchor="end" fill="currentColor">%s</text>`,
			svgNum(left-6), svgNum(y+4), template.HTMLEscapeString(ya.label(t)))
	}
	for _, t := range xa.ticks {
		x := xa.px(t)
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="currentColor" stroke-opacity="0.12"/>`, svgNum(x), svgNum(x), svgNum(top), svgNum(top+ph))
		fmt.Fprintf(&b, `<text class="x-tick" x="%s" y="%s" font-size="12" text-anchor="middle" fill="currentColor">%s</text>`,
			svgNum(x), svgNum(top+ph+16), template.HTMLEscapeString(xa.label(t)))
	}
	b.WriteString(`</g>`)
	xLabel, yLabel := spec.xLabel, spec.yLabel
	if xa.kind == axisLog10 {
		xLabel += ", log scale"
	}
	if ya.kind == axisLog10 {
		yLabel += ", log scale"
	}
	fmt.Fprintf(&b, `<text class="x-label" x="%s" y="%s" font-size="13" text-anchor="middle" fill="currentColor">%s</text>`,
		svgNum(left+pw/2), svgNum(height-8), template.HTMLEscapeString(xLabel))
	fmt.Fprintf(&b, `<text class="y-label" x="14" y="%s" font-size="13" text-anchor="middle" fill="currentColor" transform="rotate(-90 14 %s)">%s</text>`,
		svgNum(top+ph/2), svgNum(top+ph/2), template.HTMLEscapeString(yLabel))
	type label struct {
		text  string
		color string
		x, y  float64
	}
	var labels []label
	var marks, lines []pxBox // the point markers and the step curves' segments
	for i, pts := range series {
		if len(pts) == 0 {
			continue
		}
		slices.SortFunc(pts, func(a, b chartPt) int { return cmp.Compare(a.x, b.x) })
		color := sweeps[i].Color
		var step []chartPt
		for _, p := range pts {
			if p.inStep {
				step = append(step, p)
			}
		}
		var d strings.Builder
		if !spec.pareto {
			// Hold each value until the next point.
			for k, p := range step {
				if k == 0 {
					fmt.Fprintf(&d, "M%s %s", svgNum(xa.px(p.x)), svgNum(ya.px(p.y)))
					continue
				}
				fmt.Fprintf(&d, " H%s V%s", svgNum(xa.px(p.x)), svgNum(ya.px(p.y)))
			}
		} else if len(step) > 0 {
			// The Pareto frontier: from the left edge, the best y at or
			// right of x, stepping down after each point.
			levels := make([]float64, len(step))
			for k, p := range step {
				levels[k] = p.y
			}
			best := frontier(levels)
			fmt.Fprintf(&d, "M%s %s", svgNum(left), svgNum(ya.px(best[0])))
			x0, y0 := left, ya.px(best[0])
			for k := range step {
				x1 := xa.px(step[k].x)
				fmt.Fprintf(&d, " H%s", svgNum(x1))
				lines = append(lines, pxBox{x0, y0 - 2, x1, y0 + 2})
				x0 = x1
				if k+1 < len(step) {
					y1 := ya.px(best[k+1])
					fmt.Fprintf(&d, " V%s", svgNum(y1))
					lines = append(lines, pxBox{x0 - 2, min(y0, y1), x0 + 2, max(y0, y1)})
					y0 = y1
				}
			}
		}
		if d.Len() > 0 {
			fmt.Fprintf(&b, `<path class="step" d="%s" fill="none" stroke="%s" stroke-width="2"/>`, d.String(), color)
		}
		for _, p := range pts {
			x, y := xa.px(p.x), ya.px(p.y)
			name := fmt.Sprintf("concurrency %d", p.c)
			text := fmt.Sprintf("c=%d", p.c)
			if p.offline {
				name = fmt.Sprintf("the Offline point (%d in flight)", p.c)
				if !p.inStep {
					name += ", below 98 % of the Cmax point: not on the curve"
				}
				text = "Offline"
			}
			tip := template.HTMLEscapeString(fmt.Sprintf("%s: %s, %s", sweeps[i].Label, name, fmtSig(p.y, 4)))
			if spec.pareto {
				tip = template.HTMLEscapeString(fmt.Sprintf("%s: %s, %s at %s", sweeps[i].Label, name, fmtSig(p.y, 4), fmtSig(p.x, 4)))
			}
			if p.offline {
				fill := color
				if !p.inStep {
					fill = "none"
				}
				fmt.Fprintf(&b, `<rect class="point offline" x="%s" y="%s" width="10" height="10" fill="%s" stroke="%s" stroke-width="2"><title>%s</title></rect>`,
					svgNum(x-5), svgNum(y-5), fill, color, tip)
			} else {
				fmt.Fprintf(&b, `<circle class="point" cx="%s" cy="%s" r="4" fill="%s"><title>%s</title></circle>`, svgNum(x), svgNum(y), color, tip)
			}
			marks = append(marks, pxBox{x - 6, y - 6, x + 6, y + 6})
			if spec.pareto {
				labels = append(labels, label{text, color, x, y})
			}
		}
	}
	// Each label goes to the first place around its point that covers no
	// marker, no segment of a curve and no label placed before it, inside
	// the plot; where there is none, to the first place around its point
	// that covers no marker.
	placed := append(slices.Clone(marks), lines...)
	for _, l := range labels {
		w := 7.2 * float64(len(l.text))
		type spot struct {
			dx, dy float64
			anchor string
		}
		spots := []spot{{9, 4, "start"}, {-9, 4, "end"}, {0, -10, "middle"}, {0, 19, "middle"},
			{7, -8, "start"}, {7, 17, "start"}, {-7, -8, "end"}, {-7, 17, "end"},
			{0, -24, "middle"}, {0, 33, "middle"}, {9, -18, "start"}, {9, 27, "start"}, {-9, -18, "end"}, {-9, 27, "end"}}
		at := func(s spot) pxBox {
			x0 := l.x + s.dx
			switch s.anchor {
			case "end":
				x0 -= w
			case "middle":
				x0 -= w / 2
			}
			return pxBox{x0, l.y + s.dy - 11, x0 + w, l.y + s.dy + 3}
		}
		choice, found := spots[0], false
		for _, obstacles := range [][]pxBox{placed, marks} {
			for _, s := range spots {
				bx := at(s)
				if bx.inside(frame) && !slices.ContainsFunc(obstacles, bx.overlaps) {
					choice, found = s, true
					break
				}
			}
			if found {
				break
			}
		}
		placed = append(placed, at(choice))
		fmt.Fprintf(&b, `<text class="point-label" x="%s" y="%s" font-size="12" text-anchor="%s" fill="%s">%s</text>`,
			svgNum(l.x+choice.dx), svgNum(l.y+choice.dy), choice.anchor, l.color, template.HTMLEscapeString(l.text))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// frontier is the Pareto staircase's levels over points sorted by x: at
// point k, the highest y of the points k, k+1, … (those at least as far
// right, i.e. as interactive).
func frontier(ys []float64) []float64 {
	best := make([]float64, len(ys))
	for k := len(ys) - 1; k >= 0; k-- {
		best[k] = ys[k]
		if k+1 < len(ys) {
			best[k] = math.Max(best[k], best[k+1])
		}
	}
	return best
}

var sweepTmpl = template.Must(template.New("sweep").Funcs(template.FuncMap{
	"mul100": func(f float64) float64 { return 100 * f },
	"inc":    func(i int) int { return i + 1 },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{{.PageCSS}} .legend span{display:inline-block;margin-right:1.2em} .swatch{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:middle} .charts{display:flex;flex-wrap:wrap;gap:1em} .charts figure{margin:0} .pareto-figure{margin:0 0 1em} svg{max-width:100%;height:auto}</style>
</head><body>
<h1>{{.Title}}</h1>
<p class="legend">{{range .Sweeps}}<span><i class="swatch" style="background:{{.Color}}"></i>{{.Label}}{{if .SLO}} (SLO {{.SLO}}){{end}}</span>{{end}}</p>
<p>Each curve is a step function through the measured points (MLPerf Endpoints v1.0 section 5.2): over concurrency a value holds until the next point; the Pareto curve is the frontier, at each tps_per_user the highest system_tps of a point at least as interactive. Nothing is interpolated. Latencies are from each request's scheduled time; failed requests never count as completions.</p>
<figure class="pareto-figure"><figcaption>Pareto curve: system_tps over tps_per_user. Each point is labelled with its concurrency (c=N); the square is the Offline point, hollow where it misses 98 % of the Cmax point's system_tps and the Cmax point stands in for it. Axes are fitted to the points, logarithmic where their values span more than 10×.</figcaption>{{.Pareto}}</figure>
<div class="charts">
<figure><figcaption>system_tps over concurrency</figcaption>{{.TPS}}</figure>
<figure><figcaption>TTFT p90 over concurrency</figcaption>{{.TTFT}}</figure>
{{if .Goodput}}<figure><figcaption>Goodput over concurrency</figcaption>{{.Goodput}}</figure>{{end}}
</div>
{{range .Sweeps}}
<h2><i class="swatch" style="background:{{.Color}}"></i>{{.Label}}</h2>
{{if .RegionText}}<p>Regions (MLPerf Endpoints v1.0 section 5.4): {{.RegionText}}.{{if .Uncovered}} <strong>No point in: {{range $i, $r := .Uncovered}}{{if $i}}, {{end}}{{$r}}{{end}}.</strong>{{end}}</p>{{end}}
<table><thead><tr><th>concurrency</th><th>region</th><th>verdict</th><th>system_tps</th><th>tps_per_user</th><th>TTFT p90</th><th>TPOT p90</th><th>requests/s</th><th>errors</th>{{if .SLO}}<th>goodput ({{.SLO}})</th>{{end}}<th>bundle</th></tr></thead><tbody>
{{$slo := .SLO}}{{range .Rows}}<tr><td>{{.Concurrency}}</td><td>{{.Region}}</td><td>{{.Verdict}}</td><td>{{.SystemTPS}}</td><td>{{.TPSPerUser}}</td><td>{{.TTFT}}</td><td>{{.TPOT}}</td><td>{{.Rate}}</td><td>{{.Errors}}</td>{{if $slo}}<td>{{.Goodput}}</td>{{end}}<td>{{.Dir}}</td></tr>
{{end}}</tbody></table>
{{with .Offline}}<p>Offline point: {{.Point.Concurrency}} in flight, system_tps {{printf "%.1f" .Point.SystemTPS}}, {{printf "%.1f" (mul100 .Ratio)}} % of the Cmax point's ({{.CMax}}: {{printf "%.1f" .CMaxSystemTPS}}). {{if .Meets}}It reaches 98 %.{{else}}It misses 98 %: the Cmax point is elected as the Offline point.{{end}}</p>{{end}}
{{with .Search}}<p class="search-outcome">Goodput search (concurrency {{.Options.Start}} to {{.Options.Max}} by LoadGen's find-peak procedure: widen by doubling, then bisect; stop: {{.Stop}}): <strong>{{.Outcome}}</strong>.</p>
<table><thead><tr><th>#</th><th>phase</th><th>concurrency</th><th>goodput fraction</th><th>result</th><th>bundle</th></tr></thead><tbody>
{{range $i, $p := .Probes}}<tr><td>{{inc $i}}</td><td>{{$p.Phase}}</td><td>{{$p.Concurrency}}</td><td>{{printf "%.4f" $p.Fraction}}</td><td>{{if $p.Pass}}pass{{else}}fail{{end}}</td><td>{{$p.Dir}}</td></tr>
{{end}}</tbody></table>{{end}}
{{end}}
</body></html>
`))
