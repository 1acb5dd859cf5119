package console

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"aimeter/benchmark"
	"aimeter/gbt"
)

// WriteGBT writes the result of a GB/T 45087 test (an outcome with GBT
// metrics): the time breakdown, T_I, throughput, the send lateness of a
// mode on a schedule, the loss verdict of the main jobs and, in a mixed
// test, of the foreign jobs, elasticity and pressure tolerance, the
// accuracy where scored, the verdict and the bundle's files. WriteRun
// calls it for such an outcome.
func WriteGBT(w io.Writer, out *benchmark.Outcome) {
	res, t, m, dir := out.Result, gbt.TestOf(out.Bundle), out.GBT, out.Dir
	fmt.Fprintf(w, "GB/T 45087 arrival mode %d (%s), %s carried by LoadGen's %s scenario\n",
		t.Arrival.Mode, t.Arrival.Mode, timeoutText(t.Arrival.Timeout), res.Effective.Scenario)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tn\tmin\tmean\tp50\tp90\tp99\tmax\t(ms)")
	for _, row := range []struct {
		name string
		s    gbt.TimeStat
	}{{"T_TI", m.Time.TTI}, {"T_DIS", m.Time.TDIS}, {"T_IPR", m.Time.TIPR}, {"T_IN", m.Time.TIN},
		{"T_IPO", m.Time.TIPO}, {"T_IP", m.Time.TIP}, {"T_DIP", m.Time.TDIP}} {
		if !row.s.Available {
			fmt.Fprintf(tw, "%s\t-\t%s\n", row.name, row.s.Reason)
			continue
		}
		s := row.s.Stat
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", row.name, s.N, s.Min, s.Mean, s.P50, s.P90, s.P99, s.Max)
	}
	tw.Flush()
	if m.Time.TI.Available {
		fmt.Fprintf(w, "T_I (total inference latency): %.3f ms\n", m.Time.TI.Ms)
	}
	if th := m.Throughput; th.Samples == 0 {
		fmt.Fprintf(w, "%s: -- (no job returned a result)\n", th.Name())
	} else {
		fmt.Fprintf(w, "%s: %.2f samples/s\n", th.Name(), th.SamplesPerSecond)
		if th.Note != "" {
			fmt.Fprintf(w, "  %s\n", th.Note)
		}
	}
	if out.Derived != nil {
		if l := out.Derived.SendLateness(); l != nil { // the modes on LoadGen's Server scenario
			fmt.Fprintln(w, l.Text())
		}
	}
	fmt.Fprintf(w, "Lost: %d of %d samples (rate %.4f, threshold %.4f): %s\n", m.Loss.Lost, m.Loss.Sent, m.Loss.Rate, m.Loss.Threshold, passFail(m.Loss.Valid))
	if res.LateCompletions > 0 {
		fmt.Fprintf(w, "  of which %d returned after their timeout and were counted lost (GB-7.4.1-d)\n", res.LateCompletions)
	}
	if res.FailedSamples > 0 {
		fmt.Fprintf(w, "  %d samples failed (errors reported by the SUT)\n", res.FailedSamples)
	}
	if f := m.Foreign; f != nil {
		fmt.Fprintf(w, "Foreign jobs (mode 5, IN-50): lost %d of %d (rate %.4f, threshold %.4f): %s; %.2f samples/s\n",
			f.Loss.Lost, f.Loss.Sent, f.Loss.Rate, f.Loss.Threshold, passFail(f.Loss.Valid), f.Throughput.SamplesPerSecond)
		if fr := out.Foreign; fr != nil && fr.FailedSamples > 0 {
			fmt.Fprintf(w, "  %d foreign samples failed (errors reported by the SUT)\n", fr.FailedSamples)
		}
	}
	if m.Elasticity != nil {
		if m.Elasticity.Available {
			// The standard's Table 19 value under its name; IN-76's
			// non-standard %/MB variant labelled as such.
			fmt.Fprintf(w, "Elasticity (EL, Table 19): %.4f %%\n", m.Elasticity.Percent)
			fmt.Fprintf(w, "Elasticity variant (IN-76, non-standard): %.4f %%/MB\n", m.Elasticity.PercentPerMB)
		} else {
			fmt.Fprintf(w, "Elasticity: not available: %s\n", m.Elasticity.Reason)
		}
		if m.PressureTolerance.Available {
			fmt.Fprintf(w, "Pressure tolerance: %.4f MB/s\n", m.PressureTolerance.MBPerSecond)
		} else {
			fmt.Fprintf(w, "Pressure tolerance: not available: %s\n", m.PressureTolerance.Reason)
		}
	}
	WriteAccuracy(w, out.Accuracy)
	fmt.Fprintf(w, "GB/T verdict: %s\n", out.Verdict.Word())
	writeReasons(w, out.Verdict)
	if out.WriteErr != nil {
		fmt.Fprintf(w, "Files NOT all written to %s: see the error below\n", dir)
		return
	}
	fmt.Fprintf(w, "Wrote %s (gbt_result.json, gbt_test.json, gbt_inference.log and the MLPerf logs)\n", dir)
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func timeoutText(d time.Duration) string {
	if d == 0 {
		return "no timeout"
	}
	return "timeout " + d.String()
}

// WriteScenarios writes what aimeter scenarios lists: the GB/T 45087
// inference scenarios of Tables 11–14 (gbt.Catalogue), the ones whose
// workload aimeter runs (benchmark.GBTWorkloads, with what this build
// lacks to run one) and the arrival modes of Table 10 with their timeout
// thresholds.
func WriteScenarios(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tType\tModel\tData set\tArrival modes\tTimeout class")
	for _, s := range gbt.Catalogue() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%d\n", s.ID, s.Type, s.Model, s.Dataset, s.ArrivalModes, s.TimeoutClass)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nWorkloads aimeter runs (--scenario-id):")
	for _, wl := range benchmark.GBTWorkloads() {
		note := ""
		if !wl.Available() {
			note = " (this build lacks ONNX Runtime: build with -tags onnx)"
		}
		fmt.Fprintf(w, "  %s  %s: --sut %s --onnx-workload %s, generated data, its own quality target%s\n", wl.Scenario, wl.Workload, wl.Kind, wl.Workload, note)
	}
	fmt.Fprintln(w, "\nArrival modes (Table 10): timeout thresholds 1 / 2")
	for _, m := range gbt.ArrivalModes() {
		t1, ok1 := gbt.Timeout(m.Mode, gbt.Threshold1)
		t2, _ := gbt.Timeout(m.Mode, gbt.Threshold2)
		tt := "N/A"
		if ok1 {
			tt = fmt.Sprintf("%v / %v", t1, t2)
		}
		if m.Mode == gbt.ModeMixed {
			tt = "those of the underlying mode"
		}
		fmt.Fprintf(w, "  %d  %-14s %s\n", m.Mode, m.Mode, tt)
	}
}
