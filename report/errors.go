package report

import (
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"aimeter/loadgen"
)

// errorGroupTable lists the groups of failed samples of errors.json: the
// category, the code, how many samples, when the first and the last failed
// (on the clock of their pass) and up to three example messages.
func errorGroupTable(res *loadgen.Result) table {
	t := table{Head: []string{"Category", "Code", "Samples", "First", "Last", "Examples"}}
	for _, e := range res.Errors {
		code := e.CodeName
		if code == "" && e.Code != 0 {
			code = strconv.Itoa(e.Code)
		}
		first, last := "", ""
		if e.FirstNs != 0 || e.LastNs != 0 {
			first, last = fmtDur(e.FirstNs), fmtDur(e.LastNs)
		}
		t.Rows = append(t.Rows, []string{e.Category, code, fmtCount(e.Count), first, last, strings.Join(e.Messages(), " · ")})
	}
	return t
}

// errorSVGBuckets is the most time buckets of the failures chart.
const errorSVGBuckets = 60

// errorPalette colours the categories of the failures chart.
var errorPalette = []string{"#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// errorChart draws failures per second by category over the reported pass
// as an inline SVG (one line per category; no script needed); "" when the
// pass had no failure.
func errorChart(res *loadgen.Result, pass int) template.HTML {
	if pass < 0 || pass >= len(res.Passes) || res.FailedSamples == 0 {
		return ""
	}
	end := res.Passes[pass].EndNs
	if end <= 0 {
		return ""
	}
	width := max(end/errorSVGBuckets, 1)
	n := int(end/width) + 1
	counts := map[string][]float64{}
	var cats []string
	for rec := range res.PassRecords(pass) {
		e, ok := res.ErrorOf(rec)
		if !ok || rec.Status != loadgen.StatusError {
			continue
		}
		c := counts[e.Category]
		if c == nil {
			c = make([]float64, n)
			counts[e.Category] = c
			cats = append(cats, e.Category)
		}
		b := min(max(int(rec.CompletedNs/width), 0), n-1)
		c[b]++
	}
	if len(cats) == 0 {
		return ""
	}
	slices.Sort(cats)
	secs := float64(width) / 1e9
	peak := 0.0
	for _, c := range counts {
		for i := range c {
			c[i] /= secs
			peak = max(peak, c[i])
		}
	}
	const w, h, left, bottom, top = 640.0, 200.0, 50.0, 24.0, 8.0
	x := func(i int) float64 { return left + (w-left-8)*(float64(i)+0.5)/float64(n) }
	y := func(v float64) float64 { return top + (h-top-bottom)*(1-v/peak) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="errors-chart" role="img" viewBox="0 0 %g %g" width="%g" height="%g" xmlns="http://www.w3.org/2000/svg">`, w, h+16*float64(len(cats)), w, h+16*float64(len(cats)))
	fmt.Fprintf(&b, `<title>Failed samples per second by category</title>`)
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#888"/>`, left, h-bottom, w-8, h-bottom)
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#888"/>`, left, top, left, h-bottom)
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11" text-anchor="end">%s/s</text>`, left-4, top+10, fmtSig(peak, 3))
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11" text-anchor="end">0</text>`, left-4, h-bottom)
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11">0 s</text>`, left, h-bottom+14)
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11" text-anchor="end">%s</text>`, w-8, h-bottom+14, template.HTMLEscapeString(fmtDur(end)))
	for k, cat := range cats {
		col := errorPalette[k%len(errorPalette)]
		var pts []string
		for i, v := range counts[cat] {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, col, strings.Join(pts, " "))
		ly := h + 12 + 16*float64(k)
		fmt.Fprintf(&b, `<rect x="%g" y="%g" width="10" height="10" fill="%s"/><text x="%g" y="%g" font-size="11">%s</text>`,
			left, ly-9, col, left+14, ly, template.HTMLEscapeString(cat))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // #nosec G203 -- built here from escaped text
}

// isSampleFailureNote reports whether a detail-log event is the message of
// one failed sample, which the report lists by group instead.
func isSampleFailureNote(e loadgen.Event) bool {
	s, ok := e.Value.(string)
	return ok && e.Key == "error_runtime" && strings.HasPrefix(s, "sample ") && strings.Contains(s, " failed: ")
}
