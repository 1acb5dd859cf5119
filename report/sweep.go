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
// Endpoints v1.0 section 5.2), with every point's table, the Offline check and a
// goodput search's probes.
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
		if r := s.Regions; r != nil {
			sv.RegionText = fmt.Sprintf("Cmin %d, Cmax %d: ultra-low 1–%d, low %s, medium %s, high %s, margin %s",
				r.CMin, r.CMax, r.UltraLow.End, rangeText(r.Low), rangeText(r.Medium), rangeText(r.High), rangeText(r.Margin))
		}
		v.Sweeps = append(v.Sweeps, sv)
	}
	v.Title = "Sweep: " + strings.Join(names, " · ")
	v.Pareto = stepChart("pareto", "tps_per_user (1000 / TPOT p90 ms)", "system_tps (output tokens/s)", v.Sweeps, false,
		func(p sweep.Point) (float64, float64, bool) { return p.TPSPerUser, p.SystemTPS, p.TPSPerUser > 0 })
	v.TPS = stepChart("tps-concurrency", "concurrency (log scale)", "system_tps (output tokens/s)", v.Sweeps, true,
		func(p sweep.Point) (float64, float64, bool) { return float64(p.Concurrency), p.SystemTPS, true })
	v.TTFT = stepChart("ttft-concurrency", "concurrency (log scale)", "TTFT p90 (ms)", v.Sweeps, true,
		func(p sweep.Point) (float64, float64, bool) { return float64(p.Concurrency), p.TTFTP90Ms, true })
	if hasGoodput {
		v.Goodput = stepChart("goodput-concurrency", "concurrency (log scale)", "goodput (output tokens/s meeting the SLO)", v.Sweeps, true,
			func(p sweep.Point) (float64, float64, bool) {
				if p.Goodput == nil {
					return 0, 0, false
				}
				return float64(p.Concurrency), p.Goodput.TokensPerS, true
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

// stepChart draws the points of every sweep and, through them, a step
// function: over concurrency (logX) the value holds from one point to the
// next; for the Pareto curve it is the frontier f(x) = the highest y of
// any point at x or to its right, a staircase through the points. No
// line between points is interpolated.
func stepChart(class, xLabel, yLabel string, sweeps []sweepOne, logX bool, xy func(sweep.Point) (float64, float64, bool)) template.HTML {
	const width, height, left, right, top, bottom = 640.0, 360.0, 64.0, 16.0, 16.0, 44.0
	pw, ph := width-left-right, height-top-bottom
	type pt struct {
		x, y float64
		c    uint64
	}
	series := make([][]pt, len(sweeps))
	minX, maxX, maxY := math.Inf(1), math.Inf(-1), 0.0
	for i, s := range sweeps {
		for _, p := range s.Points {
			x, y, ok := xy(p)
			if !ok || math.IsNaN(x) || math.IsNaN(y) || (logX && x <= 0) {
				continue
			}
			series[i] = append(series[i], pt{x, y, p.Concurrency})
			minX, maxX, maxY = math.Min(minX, x), math.Max(maxX, x), math.Max(maxY, y)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="%s" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s over %s">`,
		class, svgNum(width), svgNum(height), svgNum(width), svgNum(height), template.HTMLEscapeString(yLabel), template.HTMLEscapeString(xLabel))
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#bbb"/>`, svgNum(left), svgNum(top), svgNum(pw), svgNum(ph))
	if math.IsInf(minX, 1) {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" fill="currentColor">no points</text></svg>`, svgNum(left+pw/2), svgNum(top+ph/2))
		return template.HTML(b.String())
	}
	if maxY <= 0 {
		maxY = 1
	}
	maxY *= 1.05
	tx := func(x float64) float64 {
		if logX {
			lo, hi := math.Log2(minX), math.Log2(maxX)
			if hi <= lo {
				return left + pw/2
			}
			return left + pw*(math.Log2(x)-lo)/(hi-lo)
		}
		if maxX <= 0 {
			return left + pw/2
		}
		return left + pw*x/(maxX*1.05)
	}
	ty := func(y float64) float64 { return top + ph - ph*y/maxY }
	// Axes' labels: y at 0, half and the top; x at the ends.
	for _, f := range []float64{0, 0.5, 1} {
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="currentColor">%s</text>`,
			svgNum(left-4), svgNum(ty(f*maxY)+4), template.HTMLEscapeString(fmtSig(f*maxY, 3)))
	}
	xs := []float64{minX, maxX}
	if !logX {
		xs = []float64{0, maxX}
	}
	for _, x := range xs {
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="middle" fill="currentColor">%s</text>`,
			svgNum(tx(x)), svgNum(top+ph+14), template.HTMLEscapeString(fmtSig(x, 4)))
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="12" text-anchor="middle" fill="currentColor">%s</text>`,
		svgNum(left+pw/2), svgNum(height-6), template.HTMLEscapeString(xLabel))
	fmt.Fprintf(&b, `<text x="12" y="%s" font-size="12" text-anchor="middle" fill="currentColor" transform="rotate(-90 12 %s)">%s</text>`,
		svgNum(top+ph/2), svgNum(top+ph/2), template.HTMLEscapeString(yLabel))
	for i, pts := range series {
		if len(pts) == 0 {
			continue
		}
		slices.SortFunc(pts, func(a, b pt) int { return cmp.Compare(a.x, b.x) })
		color := sweeps[i].Color
		var d strings.Builder
		if logX {
			// Hold each value until the next point.
			for k, p := range pts {
				if k == 0 {
					fmt.Fprintf(&d, "M%s %s", svgNum(tx(p.x)), svgNum(ty(p.y)))
					continue
				}
				fmt.Fprintf(&d, " H%s V%s", svgNum(tx(p.x)), svgNum(ty(p.y)))
			}
		} else {
			// The Pareto frontier: from the left edge, the best y at or
			// right of x, stepping down after each point.
			ys := make([]float64, len(pts))
			for k, p := range pts {
				ys[k] = p.y
			}
			best := frontier(ys)
			fmt.Fprintf(&d, "M%s %s", svgNum(tx(0)), svgNum(ty(best[0])))
			for k := range pts {
				fmt.Fprintf(&d, " H%s", svgNum(tx(pts[k].x)))
				if k+1 < len(pts) {
					fmt.Fprintf(&d, " V%s", svgNum(ty(best[k+1])))
				}
			}
		}
		fmt.Fprintf(&b, `<path class="step" d="%s" fill="none" stroke="%s" stroke-width="2"/>`, d.String(), color)
		for _, p := range pts {
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="4" fill="%s"><title>%s: concurrency %d, %s</title></circle>`,
				svgNum(tx(p.x)), svgNum(ty(p.y)), color, template.HTMLEscapeString(sweeps[i].Label), p.c,
				template.HTMLEscapeString(fmtSig(p.y, 4)))
		}
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
<style>{{.PageCSS}} .legend span{display:inline-block;margin-right:1.2em} .swatch{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:middle} .charts{display:flex;flex-wrap:wrap;gap:1em} .charts figure{margin:0} svg{max-width:100%;height:auto}</style>
</head><body>
<h1>{{.Title}}</h1>
<p class="legend">{{range .Sweeps}}<span><i class="swatch" style="background:{{.Color}}"></i>{{.Label}}{{if .SLO}} (SLO {{.SLO}}){{end}}</span>{{end}}</p>
<p>Each curve is a step function through the measured points (MLPerf Endpoints v1.0 section 5.2): over concurrency a value holds until the next point; the Pareto curve is the frontier, at each tps_per_user the highest system_tps of a point at least as interactive. Nothing is interpolated. Latencies are from each request's scheduled time; failed requests never count as completions.</p>
<div class="charts">
<figure><figcaption>Pareto curve: system_tps over tps_per_user</figcaption>{{.Pareto}}</figure>
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
