package console

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"aimeter/benchmark"
)

// DemoRun is one run of the demo's table: the scenario's name and its
// outcome.
type DemoRun struct {
	Name    string
	Outcome *benchmark.Outcome
}

// WriteDemoTable writes the demo's table after an empty line: one row a
// run, with its headline metric, its value, its verdict and its accuracy
// ("-" where a run has none).
func WriteDemoTable(w io.Writer, runs []DemoRun) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nScenario\tMetric\tValue\tResult\tAccuracy")
	for _, r := range runs {
		metric, value, verdict := "-", "-", "-"
		if s := r.Outcome.Result.Summary; s != nil {
			name, v := s.Metric()
			metric, value = name, Headline(s, v)
			verdict = r.Outcome.Verdict.Word()
		}
		accText := "-"
		if a := r.Outcome.Accuracy; a != nil {
			accText = AccuracyText(a)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, metric, value, verdict, accText)
	}
	tw.Flush()
}

// formatRate writes a rate in samples/s for people: whole numbers with
// thousands separators, e.g. "49,157".
func formatRate(v float64) string {
	digits := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 && digits[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// WriteDemoPlan writes how the demo sized its runs: the model's speed as
// measured (cal, with the options co) and the Server and Offline runs of
// plan (benchmark.PlanDemo).
func WriteDemoPlan(w io.Writer, cal benchmark.Calibration, co benchmark.CalibrateOptions, plan benchmark.DemoPlans) {
	fmt.Fprintf(w, "Model speed: %v per sample alone, %s samples/s in batches of %d (medians of %d rounds)\n",
		cal.Single.Round(100*time.Nanosecond), formatRate(cal.BatchRate), co.Batch, co.Rounds)
	fmt.Fprintf(w, "Server: %s samples/s, p99 bound %v, %v; Offline: one query sized for %s samples/s\n",
		formatRate(plan.Server.ServerTargetQPS), time.Duration(plan.Server.ServerTargetLatencyNs),
		time.Duration(plan.Server.MinDurationMs)*time.Millisecond, formatRate(plan.Offline.OfflineExpectedQPS))
}
