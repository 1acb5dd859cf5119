package console

import (
	"fmt"
	"io"
	"text/tabwriter"

	"aimeter/gbt"
)

// WriteECPTable writes the effective computing power's table (GB/T 45087
// Table 18): each scenario's weight, throughput, baseline and ratio.
func WriteECPTable(w io.Writer, res gbt.ECPResult) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tweight\tthroughput\tbaseline\tratio")
	for _, r := range res.Ratios {
		fmt.Fprintf(tw, "%s\t%g\t%.4g\t%.4g\t%.4f\n", r.Name, r.Weight, r.Throughput, r.Baseline, r.Ratio)
	}
	tw.Flush()
}

// WriteECPValue writes the effective computing power's line: its value
// and α.
func WriteECPValue(w io.Writer, res gbt.ECPResult) {
	fmt.Fprintf(w, "Effective computing power: %.4f (α = %g)\n", res.Value, res.Alpha)
}
