package console

import (
	"fmt"
	"io"
	"strings"

	"aimeter/benchmark"
	"aimeter/telemetry"
)

// WritePower writes the run's power figures over the MLPerf power window
// (result.json's power), or why there are none; nothing for a run that
// sampled no power.
func WritePower(w io.Writer, out *benchmark.Outcome) {
	if out.Bundle == nil || telemetry.LogOf(out.Bundle) == nil || out.Derived == nil {
		return
	}
	r, err := out.Derived.Result()
	if err != nil || r.Power == nil {
		return
	}
	p := r.Power
	fmt.Fprintf(w, "Power over the run's window (%.3f s, %d devices):", p.Seconds(), p.Devices)
	if p.EnergyJ == nil {
		fmt.Fprintf(w, " no figures: %s\n", p.Note)
		writeGaps(w, p.GapList)
		return
	}
	peak := "-"
	if p.PeakW != nil {
		peak = fmt.Sprintf("%.1f W", *p.PeakW)
	}
	fmt.Fprintf(w, " average %.1f W, peak %s, energy %.1f J (%s), coverage %.1f %%\n", *p.AvgW, peak, *p.EnergyJ, p.Method, p.Coverage*100)
	if e := p.Efficiency; e != nil {
		fmt.Fprintf(w, "  %s : %.6g\n", strings.ToUpper(e.Name[:1])+e.Name[1:], e.Value)
	}
	if p.JPerSample != nil {
		fmt.Fprintf(w, "  Energy per sample : %.6g J (%d successful samples)\n", *p.JPerSample, p.Samples)
	}
	if p.JPerToken != nil {
		fmt.Fprintf(w, "  Energy per output token : %.6g J (%d tokens)\n", *p.JPerToken, p.OutputTokens)
	}
	if p.Note != "" {
		fmt.Fprintf(w, "  Note: %s\n", p.Note)
	}
	writeGaps(w, p.GapList)
	for _, c := range p.Clocks {
		if !c.Pass {
			fmt.Fprintf(w, "  Clock check of %s failed (MLPerf Power): %s\n", c.Source, c.Note)
		}
	}
}

// maxGapLines bounds the gaps WritePower names one a line; result.json
// lists them all.
const maxGapLines = 20

// writeGaps names each gap of the telemetry: when (s on the run's clock),
// which source and device, how long, and why.
func writeGaps(w io.Writer, gaps []telemetry.Gap) {
	for i, g := range gaps {
		if i == maxGapLines {
			fmt.Fprintf(w, "  ... and %d more gaps (result.json's power.gap_list lists them all)\n", len(gaps)-i)
			return
		}
		what := g.Source
		if g.Device != "" {
			what += " " + g.Device
			if g.Node != "" {
				what = g.Source + " " + g.Node + "/" + g.Device
			}
			what += " " + g.Kind.String()
		}
		long := "a read that gave nothing"
		if g.Device != "" {
			long = fmt.Sprintf("%.3f s left out", float64(g.DurationNs)/1e9)
		}
		fmt.Fprintf(w, "  Gap at %.3f s, %s, %s: %s\n", float64(g.T)/1e9, what, long, g.Reason)
	}
}
