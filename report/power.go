package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"
)

// Power is what the run's power meters read (the bundle's telemetry.json),
// as the report draws it under the client's timeline: the power of each
// node and device over time, with the run's phases shaded, and the energy
// of each phase.
type Power struct {
	// Series are the power of each device, one line each.
	Series []PowerSeries
	// Phases are the run's phases (warm-up, passes, the MLPerf power
	// window), shaded on the chart and listed in the table.
	Phases []PowerPhase
	// Gaps counts the reads that gave nothing.
	Gaps int
	// Note says what limits the figures; "" for nothing.
	Note string
}

// PowerSeries is one device's power over time.
type PowerSeries struct {
	// Label names it in the legend, e.g. "rapl node-1/package-0".
	Label string
	// TimesNs are the times of the values, from the reported pass's start
	// (negative before it, as a warm-up is); Watts the values, W, NaN for
	// none. A counter's series is its mean power between two readings,
	// at their midpoint.
	TimesNs []int64
	Watts   []float64
}

// PowerPhase is one phase of the run with its energy figures; a nil
// figure is one the readings could not give.
type PowerPhase struct {
	Name string
	// FromNs and ToNs bound it on the reported pass's clock.
	FromNs, ToNs int64
	EnergyJ      *float64
	AvgW, PeakW  *float64
	Coverage     float64
	// JPerSample and JPerToken are the energy per successful sample and
	// per output token.
	JPerSample, JPerToken *float64
	Note                  string
}

// powerView is the power part of a scenario's section.
type powerView struct {
	Anchor  string
	Caption string
	SVG     template.HTML
	Table   table
	Notes   []string
}

// powerPalette colours the devices; phasePalette shades the phases.
var (
	powerPalette = []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}
	phasePalette = []string{"rgba(127,127,127,0.14)", "rgba(31,119,180,0.12)", "rgba(44,160,44,0.12)", "rgba(255,127,14,0.12)"}
)

// buildPower lays out p over the reported pass (endNs long) and its
// phases; nil for none.
func buildPower(p *Power, endNs int64) *powerView {
	if p == nil {
		return nil
	}
	v := &powerView{Table: table{Head: []string{"Phase", "From", "To", "Energy", "Average power", "Peak power", "Coverage", "Per sample", "Per output token"}}}
	opt := func(f *float64, unit string) string {
		if f == nil {
			return "–"
		}
		return fmtSig(*f, 4) + " " + unit
	}
	for _, ph := range p.Phases {
		v.Table.Rows = append(v.Table.Rows, []string{ph.Name, fmtDur(ph.FromNs), fmtDur(ph.ToNs), opt(ph.EnergyJ, "J"), opt(ph.AvgW, "W"), opt(ph.PeakW, "W"),
			fmt.Sprintf("%.1f %%", ph.Coverage*100), opt(ph.JPerSample, "J"), opt(ph.JPerToken, "J")})
		if ph.Note != "" {
			v.Notes = append(v.Notes, ph.Name+": "+ph.Note)
		}
	}
	if p.Note != "" {
		v.Notes = append([]string{p.Note}, v.Notes...)
	}
	if p.Gaps > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("%d reads gave nothing (telemetry.json lists them)", p.Gaps))
	}
	from, to := int64(0), endNs
	for _, ph := range p.Phases {
		from, to = min(from, ph.FromNs), max(to, ph.ToNs)
	}
	if to <= from || len(p.Series) == 0 {
		return v
	}
	v.Caption = "Power (W) of each device over time; shaded: the run's phases; 0 s is the reported pass's start"
	v.SVG = powerChart(p, from, to)
	return v
}

// powerChart draws p's series from fromNs to toNs as an inline SVG, with
// the phases shaded and labelled.
func powerChart(p *Power, fromNs, toNs int64) template.HTML {
	peak := 0.0
	for _, s := range p.Series {
		for i, w := range s.Watts {
			if t := s.TimesNs[i]; t >= fromNs && t <= toNs && !math.IsNaN(w) && !math.IsInf(w, 0) {
				peak = max(peak, w)
			}
		}
	}
	if peak == 0 {
		peak = 1
	}
	const w, h, left, bottom, top = 640.0, 200.0, 50.0, 28.0, 22.0
	x := func(t int64) float64 { return left + (w-left-8)*float64(t-fromNs)/float64(toNs-fromNs) }
	y := func(v float64) float64 { return top + (h-top-bottom)*(1-v/peak) }
	var b strings.Builder
	legend := 16 * float64(len(p.Series))
	fmt.Fprintf(&b, `<svg class="power-chart" role="img" viewBox="0 0 %g %g" width="%g" height="%g" xmlns="http://www.w3.org/2000/svg">`, w, h+legend, w, h+legend)
	b.WriteString(`<title>Power of each device over the run</title>`)
	for i, ph := range p.Phases {
		x0, x1 := x(max(ph.FromNs, fromNs)), x(min(ph.ToNs, toNs))
		if x1 <= x0 {
			continue
		}
		// Phases that hold one another (a pass and its power window) are
		// drawn on top of each other: each in its own band of the top.
		band := float64(i%3) * 6
		fmt.Fprintf(&b, `<rect class="power-phase" data-phase="%s" x="%.1f" y="%g" width="%.1f" height="%g" fill="%s"><title>%s</title></rect>`,
			template.HTMLEscapeString(ph.Name), x0, top, x1-x0, h-bottom-top, phasePalette[i%len(phasePalette)], template.HTMLEscapeString(ph.Name))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#555" stroke-width="3"/>`, x0, 4+band, x1, 4+band)
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" font-size="9">%s</text>`, x0+1, 12+band, template.HTMLEscapeString(ph.Name))
	}
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#888"/>`, left, h-bottom, w-8, h-bottom)
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#888"/>`, left, top, left, h-bottom)
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11" text-anchor="end">%s W</text>`, left-4, top+10, template.HTMLEscapeString(fmtSig(peak, 3)))
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11" text-anchor="end">0</text>`, left-4, h-bottom)
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11">%s</text>`, left, h-bottom+14, template.HTMLEscapeString(fmtDur(fromNs)))
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11" text-anchor="end">%s</text>`, w-8, h-bottom+14, template.HTMLEscapeString(fmtDur(toNs)))
	if fromNs < 0 {
		fmt.Fprintf(&b, `<line class="power-zero" x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#888" stroke-dasharray="3,3"/>`, x(0), top, x(0), h-bottom)
	}
	for k, s := range p.Series {
		col := powerPalette[k%len(powerPalette)]
		var pts []string
		flush := func() {
			switch len(pts) {
			case 0:
			case 1:
				xy := strings.Split(pts[0], ",")
				fmt.Fprintf(&b, `<circle class="power-point" cx="%s" cy="%s" r="2" fill="%s"/>`, xy[0], xy[1], col)
			default:
				fmt.Fprintf(&b, `<polyline class="power-line" fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, col, strings.Join(pts, " "))
			}
			pts = pts[:0]
		}
		for i, v := range s.Watts {
			t := s.TimesNs[i]
			if t < fromNs || t > toNs || math.IsNaN(v) || math.IsInf(v, 0) {
				flush()
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(t), y(v)))
		}
		flush()
		ly := h + 12 + 16*float64(k)
		fmt.Fprintf(&b, `<rect x="%g" y="%g" width="10" height="10" fill="%s"/><text x="%g" y="%g" font-size="11">%s</text>`,
			left, ly-9, col, left+14, ly, template.HTMLEscapeString(s.Label))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // #nosec G203 -- built here from escaped text
}
