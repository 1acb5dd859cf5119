package console

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"aimeter/benchmark"
	"aimeter/report"
	"aimeter/sweep"
)

// WriteSweep writes a sweep's points (a table, one row each), its Offline
// check, its goodput search where it ran one, and where the sweep's files
// are in dir.
func WriteSweep(w io.Writer, sum *sweep.Summary, dir string) {
	if r := sum.Regions; r != nil {
		fmt.Fprintf(w, "Endpoints regions for Cmin %d, Cmax %d: ultra-low 1–%d, low %d–%d, medium %d–%d, high %d–%d\n",
			r.CMin, r.CMax, r.UltraLow.End, r.Low.Start, r.Low.End, r.Medium.Start, r.Medium.End, r.High.Start, r.High.End)
		if len(sum.Uncovered) > 0 {
			fmt.Fprintf(w, "  no point in: %s\n", strings.Join(sum.Uncovered, ", "))
		}
	}
	fmt.Fprintf(w, "%11s  %-16s %-8s %12s %12s %12s %12s %10s %8s", "concurrency", "region", "verdict", "system_tps", "tps_per_user", "TTFT p90", "TPOT p90", "req/s", "errors")
	if sum.SLO != "" {
		fmt.Fprintf(w, "  goodput (%s)", sum.SLO)
	}
	fmt.Fprintln(w)
	line := func(p sweep.Point, label string) {
		fmt.Fprintf(w, "%11s  %-16s %-8s %12.1f %12.2f %12s %12s %10.2f %8d", label, p.Region, p.Verdict, p.SystemTPS, p.TPSPerUser,
			report.FormatDuration(int64(p.TTFTP90Ms*1e6)), report.FormatDuration(int64(p.TPOTP90Ms*1e6)), p.RequestRate, p.Errors)
		if g := p.Goodput; g != nil {
			fmt.Fprintf(w, "  %.1f %% (%.2f req/s, %.1f tok/s)", 100*g.Fraction, g.RequestsPerS, g.TokensPerS)
		}
		fmt.Fprintln(w)
	}
	for _, p := range sum.Points {
		line(p, strconv.FormatUint(p.Concurrency, 10))
	}
	if o := sum.Offline; o != nil {
		line(o.Point, "Offline")
		verdict := "reaches 98 %"
		if !o.Meets {
			verdict = "misses 98 %: the Cmax point is elected as the Offline point"
		}
		fmt.Fprintf(w, "Offline point: %.1f %% of the Cmax point's system_tps (concurrency %d), %s\n", 100*o.Ratio, o.CMax, verdict)
	}
	if s := sum.Search; s != nil {
		fmt.Fprintf(w, "Goodput search (target %g, SLO %s): %d probes\n", s.Options.Target, sum.SLO, len(s.Probes))
		for i, p := range s.Probes {
			res := "pass"
			if !p.Pass {
				res = "fail"
			}
			fmt.Fprintf(w, "  %2d. %-6s concurrency %5d: goodput fraction %.4f %s\n", i+1, p.Phase, p.Concurrency, p.Fraction, res)
		}
		fmt.Fprintf(w, "Outcome: %s\n", s.Outcome())
	}
	fmt.Fprintf(w, "Sweep written to %s (%s, %s, one bundle per point)\n", dir, sweep.SummaryFile, sweep.PageFile)
}

// WriteRateSearch writes every probe of a goodput search over request
// rate, the rate it found, and where its files are in dir.
func WriteRateSearch(w io.Writer, sum *benchmark.RateSearchSummary, dir string) {
	fmt.Fprintf(w, "%12s  %-7s %-8s %10s %12s %12s %8s  goodput (%s)\n", "target_qps", "phase", "verdict", "req/s", "TTFT p90", "TPOT p90", "errors", sum.SLO)
	for i, pr := range sum.Probes {
		if i >= len(sum.Points) {
			break
		}
		p := sum.Points[i]
		fmt.Fprintf(w, "%12g  %-7s %-8s %10.2f %12.1f %12.2f %8d  %.1f %% (%.2f req/s, %.1f tok/s)\n", pr.TargetQPS, pr.Phase, p.Verdict, p.RequestRate,
			p.TTFTP90Ms, p.TPOTP90Ms, p.Errors, 100*pr.Fraction, p.Goodput.RequestsPerS, p.Goodput.TokensPerS)
	}
	fmt.Fprintf(w, "Goodput search over request rate: %s (stop: %s)\n", sum.Outcome(), sum.Stop)
	fmt.Fprintf(w, "Probes in %s/, summary in %s/%s, page in %s/%s\n", dir, dir, benchmark.RateSearchFile, dir, benchmark.RateSearchPageFile)
}
