package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"aimeter/bundle"
	"aimeter/sweep"
)

// RateSearch is what the page of a goodput search over request rate shows
// (`aimeter sweep --max-rate`): the search's SLO, its outcome with every
// probe in the order run, and each probe's measures (Points[i] is probe
// i's; a probe measured but cut short before its verdict may add one point
// more than there are probes).
type RateSearch struct {
	SLO    sweep.SLO
	Result sweep.RateSearchResult
	Points []sweep.Point
}

// WriteRateSearch writes the self-contained HTML page of a rate search
// (rate-search.html): the goodput fraction of every probe over its target
// rate with the target as a line and the elected rate marked, what the
// search concluded, and a table of the probes in order, each with its
// verdict, measures and a link to its bundle's report. The page has no
// script; the same search gives the same bytes.
func WriteRateSearch(w io.Writer, rs RateSearch) error {
	res := rs.Result
	v := rateSearchView{PageCSS: template.CSS(pageCSS), SLO: rs.SLO.String(), Target: fmtSig(res.Options.Target, 4),
		Start: fmtSig(res.Options.Start, 6), Max: fmtSig(res.Options.Max, 6), Stop: res.Stop}
	v.Title = "Goodput search over request rate"
	if v.SLO != "" {
		v.Title += " (SLO " + v.SLO + ")"
	}
	// The outcome is sweep.RateSearchResult.Outcome's text, the console's
	// and the exit message's: the best rate, or none and the bounds that
	// failed.
	stop := "stop: " + res.Stop
	switch res.Stop {
	case sweep.StopFound:
		stop += "; the bracket closed to " + rateBracketText(res.Options)
	case sweep.StopLimit:
		stop += "; the server may sustain more than --max-rate"
	}
	class := "outcome found"
	if res.Best == nil {
		class = "outcome none"
	}
	v.Outcome = template.HTML(fmt.Sprintf(`<strong class="%s">%s</strong> (%s).`, class,
		template.HTMLEscapeString(upperFirst(res.Outcome())), template.HTMLEscapeString(stop)))
	for i, p := range res.Probes {
		row := rateRowView{N: i + 1, Phase: p.Phase, TargetQPS: fmtSig(p.TargetQPS, 6), Fraction: fmt.Sprintf("%.4f", p.Fraction), Result: "fail", Class: "fail", Dir: p.Dir}
		if p.Pass {
			row.Result, row.Class = "pass", "pass"
		}
		if i < len(rs.Points) {
			row.fill(rs.Points[i])
		}
		v.Rows = append(v.Rows, row)
	}
	for i := len(res.Probes); i < len(rs.Points); i++ {
		p := rs.Points[i]
		row := rateRowView{N: i + 1, Phase: "–", TargetQPS: "–", Fraction: "–", Result: "not decided (the search stopped)", Dir: p.Dir}
		if p.Goodput != nil {
			row.Fraction = fmt.Sprintf("%.4f", p.Goodput.Fraction)
		}
		row.fill(p)
		v.Rows = append(v.Rows, row)
	}
	v.Chart = rateChart(res)
	return rateSearchTmpl.Execute(w, &v)
}

// upperFirst starts s with a capital letter.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// rateBracketText is when the bisection of a rate search stops.
func rateBracketText(o sweep.RateSearchOptions) string {
	var s string
	switch o.Decimals {
	case 0:
		s = "bounds agreeing in whole requests/s"
	case 1:
		s = "bounds agreeing to 1 decimal place"
	default:
		s = fmt.Sprintf("bounds agreeing to %d decimal places", o.Decimals)
	}
	if o.Resolution > 0 {
		s += fmt.Sprintf(", or within %s %% of the lower one", fmtSig(100*o.Resolution, 4))
	}
	return s
}

type rateSearchView struct {
	Title, SLO, Target, Start, Max, Stop string
	PageCSS                              template.CSS
	Outcome, Chart                       template.HTML
	Rows                                 []rateRowView
}

type rateRowView struct {
	N                                          int
	Phase, TargetQPS, Fraction, Result, Dir    string
	Class                                      string // pass, fail or none
	Verdict, Rate, TTFT, TPOT, Errors, Goodput string
}

// fill sets the measures of a probe's row from its point.
func (r *rateRowView) fill(p sweep.Point) {
	r.Verdict, r.Rate = p.Verdict, fmtSig(p.RequestRate, 4)+"/s"
	r.TTFT, r.TPOT = fmtSig(p.TTFTP90Ms, 4)+" ms", fmtSig(p.TPOTP90Ms, 4)+" ms"
	r.Errors = fmt.Sprintf("%s of %s", fmtCount(p.Errors), fmtCount(p.Issued))
	if p.Lost > 0 {
		r.Errors += fmt.Sprintf(" (%s lost)", fmtCount(p.Lost))
	}
	if g := p.Goodput; g != nil {
		r.Goodput = fmt.Sprintf("%s req/s · %s tok/s", fmtSig(g.RequestsPerS, 4), fmtSig(g.TokensPerS, 4))
	}
	if r.Dir == "" {
		r.Dir = p.Dir
	}
}

// Colours of the rate chart.
const (
	ratePass    = "#2e9e5b"
	rateFail    = "#c0392b"
	rateTarget  = "#7f8c8d"
	rateElected = "#3b7dd8"
)

// rateChart draws every probe's goodput fraction (up to 1) over its target
// rate (from 0), numbered in the order run, green when it passed and red
// when it failed, the target fraction as a dashed horizontal line and the
// elected rate as a dashed vertical one. Probes are points only: nothing
// is drawn between them.
func rateChart(res sweep.RateSearchResult) template.HTML {
	const width, height, left, right, top, bottom = 640.0, 360.0, 64.0, 16.0, 20.0, 44.0
	pw, ph := width-left-right, height-top-bottom
	maxX := 0.0
	if res.Best != nil {
		maxX = *res.Best
	}
	for _, p := range res.Probes {
		maxX = math.Max(maxX, p.TargetQPS)
	}
	if !(maxX > 0) || math.IsInf(maxX, 0) {
		maxX = 1
	}
	// The fraction axis starts at the tenth below the lowest fraction or
	// target, so that probes close to the target (most of a search's) are
	// told apart rather than drawn on one line at the top.
	minY := 1.0
	if t := res.Options.Target; t > 0 {
		minY = t
	}
	for _, p := range res.Probes {
		minY = math.Min(minY, p.Fraction)
	}
	yLo := math.Min(math.Max(math.Floor(minY*10-0.2)/10, 0), 0.9)
	tx := func(x float64) float64 { return left + pw*x/(maxX*1.05) }
	ty := func(y float64) float64 { return top + ph - ph*(math.Min(math.Max(y, yLo), 1)-yLo)/(1-yLo) }
	var b strings.Builder
	const yLabel, xLabel = "goodput fraction", "target rate (requests/s)"
	fmt.Fprintf(&b, `<svg class="rate-goodput" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s over %s">`,
		svgNum(width), svgNum(height), svgNum(width), svgNum(height), yLabel, xLabel)
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#bbb"/>`, svgNum(left), svgNum(top), svgNum(pw), svgNum(ph))
	for _, f := range []float64{yLo, (yLo + 1) / 2, 1} {
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="currentColor">%s</text>`,
			svgNum(left-4), svgNum(ty(f)+4), fmtSig(f, 3))
	}
	for _, x := range []float64{0, maxX / 2, maxX} {
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="middle" fill="currentColor">%s</text>`,
			svgNum(tx(x)), svgNum(top+ph+14), template.HTMLEscapeString(fmtSig(x, 4)))
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="12" text-anchor="middle" fill="currentColor">%s</text>`,
		svgNum(left+pw/2), svgNum(height-6), xLabel)
	fmt.Fprintf(&b, `<text x="12" y="%s" font-size="12" text-anchor="middle" fill="currentColor" transform="rotate(-90 12 %s)">%s</text>`,
		svgNum(top+ph/2), svgNum(top+ph/2), yLabel)
	if t := res.Options.Target; t > 0 {
		fmt.Fprintf(&b, `<line class="target" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-dasharray="6 4"/>`,
			svgNum(left), svgNum(ty(t)), svgNum(left+pw), svgNum(ty(t)), rateTarget)
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="end" fill="%s">target %s</text>`,
			svgNum(left+pw-4), svgNum(ty(t)-4), rateTarget, template.HTMLEscapeString(fmtSig(t, 4)))
	}
	if res.Best != nil {
		best := *res.Best
		fmt.Fprintf(&b, `<line class="elected" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-dasharray="2 3"/>`,
			svgNum(tx(best)), svgNum(top), svgNum(tx(best)), svgNum(top+ph), rateElected)
		anchor := "start"
		x := tx(best) + 4
		if best > maxX/2 {
			anchor, x = "end", tx(best)-4
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="11" text-anchor="%s" fill="%s">elected %s req/s</text>`,
			svgNum(x), svgNum(top+ph-6), anchor, rateElected, template.HTMLEscapeString(fmtSig(best, 6)))
	}
	for i, p := range res.Probes {
		color, verdict := rateFail, "fail"
		if p.Pass {
			color, verdict = ratePass, "pass"
		}
		cx, cy := tx(p.TargetQPS), ty(p.Fraction)
		fmt.Fprintf(&b, `<circle class="probe %s" cx="%s" cy="%s" r="4" fill="%s"><title>probe %d (%s): %s requests/s, goodput fraction %.4f, %s</title></circle>`,
			verdict, svgNum(cx), svgNum(cy), color, i+1, template.HTMLEscapeString(p.Phase), template.HTMLEscapeString(fmtSig(p.TargetQPS, 6)), p.Fraction, verdict)
		// The probe's number above its point, or below it at the top.
		ly := cy - 7
		if ly < top+10 {
			ly = cy + 15
		}
		fmt.Fprintf(&b, `<text class="probe-n" x="%s" y="%s" font-size="10" text-anchor="middle" fill="%s">%d</text>`,
			svgNum(cx), svgNum(ly), color, i+1)
	}
	if len(res.Probes) == 0 {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" fill="currentColor">no probes</text>`, svgNum(left+pw/2), svgNum(top+ph/2))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

var rateSearchTmpl = template.Must(template.New("rate-search").Funcs(template.FuncMap{
	"report": func(dir string) string { return dir + "/" + bundle.ReportFile },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{{.PageCSS}} svg{max-width:100%;height:auto} .pass{color:` + ratePass + `} .fail{color:` + rateFail + `}</style>
</head><body>
<h1>{{.Title}}</h1>
<p>{{.Outcome}}</p>
<p>Each probe is a Server run at its target rate (LoadGen's Poisson schedule); its goodput fraction is the share of its requests that met the SLO{{if .SLO}} ({{.SLO}}){{end}}, and it passes when that reaches the target {{.Target}}. The search follows LoadGen's find-peak procedure from {{.Start}} to at most {{.Max}} requests/s: check the starting rate, double while probes pass, then bisect between the last pass and the first failure. Latencies are from each request's scheduled time; failed requests never count as meeting the SLO.</p>
<figure><figcaption>Goodput fraction over target rate: probes numbered in the order run, <span class="pass">passed</span> or <span class="fail">failed</span>; the dashed lines are the target and the elected rate</figcaption>{{.Chart}}</figure>
<table><thead><tr><th>#</th><th>phase</th><th>target_qps</th><th>goodput fraction</th><th>result</th><th>verdict</th><th>requests/s</th><th>TTFT p90</th><th>TPOT p90</th><th>errors</th><th>goodput</th><th>bundle</th></tr></thead><tbody>
{{range .Rows}}<tr><td>{{.N}}</td><td>{{.Phase}}</td><td>{{.TargetQPS}}</td><td>{{.Fraction}}</td><td{{if .Class}} class="{{.Class}}"{{end}}>{{.Result}}</td><td>{{.Verdict}}</td><td>{{.Rate}}</td><td>{{.TTFT}}</td><td>{{.TPOT}}</td><td>{{.Errors}}</td><td>{{.Goodput}}</td><td>{{if .Dir}}<a href="{{report .Dir}}">{{.Dir}}</a>{{end}}</td></tr>
{{end}}</tbody></table>
</body></html>
`))
