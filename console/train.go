package console

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"aimeter/benchmark"
	"aimeter/train"
	"aimeter/train/trainbundle"
)

// WriteTraining writes the summary of a GB/T 45087 training test: its
// headline metrics from the result file res, each trial, the problems
// found, the training log, and where its files are in dir. run is the
// bundle's training run (benchmark.TrainOutcome.Run).
func WriteTraining(w io.Writer, res *train.ResultFile, run *trainbundle.TrainingRun, dir string) {
	m := res.Metrics
	ms := func(p *float64) string {
		if p == nil {
			return "--"
		}
		return strconv.FormatFloat(*p/1000, 'f', 3, 64) + " s"
	}
	num := func(p *float64, unit string) string {
		if p == nil {
			return "--"
		}
		return strings.TrimSpace(strconv.FormatFloat(*p, 'g', 6, 64) + " " + unit)
	}
	fmt.Fprintf(w, "GB/T 45087 training test: %s\n", run.SourceText())
	if run.Incomplete != "" {
		fmt.Fprintf(w, "Incomplete: %s\n", run.Incomplete)
	}
	fmt.Fprintf(w, "Trials:                 %d\n", len(m.Trials))
	fmt.Fprintf(w, "Mean T_TR:              %s\n", ms(m.MeanTTRMs))
	th := num(m.Throughput, m.Unit)
	if m.Throughput == nil {
		th = res.Reported.Instead("Th")
	}
	fmt.Fprintf(w, "Throughput Th:          %s\n", th)
	fmt.Fprintf(w, "Cluster Th_CL:          %s\n", num(m.ClusterThroughput, m.Unit))
	if m.ThBar != nil {
		fmt.Fprintf(w, "Th-bar:                 %s\n", num(m.ThBar, ""))
	}
	fmt.Fprintf(w, "Training efficiency:    %s\n", num(m.TrainingEfficiency, "per kWh"))
	mp := m.MLPerf
	bench := ""
	if mp.Benchmark != "" {
		bench = mp.Benchmark + ", "
	}
	fmt.Fprintf(w, "MLPerf time-to-train:   %s (%solympic average of %d trials, dropping %d at each end; %d did not converge)\n", num(mp.OlympicAverageMin, "min"), bench, len(m.Trials), mp.Drop, mp.Failed)
	if mp.Reason != "" {
		fmt.Fprintf(w, "  -- %s\n", mp.Reason)
	}
	if mp.Note != "" {
		fmt.Fprintf(w, "  note: %s: %s\n", mp.Note, num(mp.MeanMin, "min"))
	}
	for _, r := range benchmark.TrainAbsent(res) {
		fmt.Fprintf(w, "  -- %s\n", r)
	}
	for _, t := range m.Trials {
		status := t.Status
		if status == "" {
			status = "--"
		}
		util := "--"
		if t.Utilization != nil {
			util = strconv.FormatFloat(100**t.Utilization, 'f', 1, 64) + " %"
		}
		fmt.Fprintf(w, "  trial %d: %s, T_T %s, T_TR %s, Th %s, utilisation %s, final accuracy %s, time to train %s\n", t.Trial, status, ms(t.TTMs), ms(t.TTRMs), num(t.Throughput, m.Unit), util, train.FormatAccuracy(t.FinalAccuracy), num(t.TimeToTrainMin, "min"))
		if t.MLPerfFailure != "" {
			fmt.Fprintf(w, "    did not converge: %s\n", t.MLPerfFailure)
		}
	}
	if len(m.Problems) > 0 {
		fmt.Fprintf(w, "Problems (%d):\n", len(m.Problems))
		for i, p := range m.Problems {
			if i == 5 {
				fmt.Fprintf(w, "  … and %d more in %s\n", len(m.Problems)-5, train.ResultFileName)
				break
			}
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	if len(res.Log) > 0 {
		fmt.Fprintln(w, "Training log:")
		for _, l := range res.Log {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprintf(w, "Results in %s (%s, %s, report.html)\n", dir, train.ResultFileName, train.LogFile)
}
