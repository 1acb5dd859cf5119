package aisbench

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"aimeter/train"
)

// Events are the run's clause 6 events on aimeter's clock, whose zero is
// run.Start: the phases aimeter timed (init → init_start/init_end,
// run_train → train_start/train_end, run_eval → validation_start/
// validation_end carrying the accuracy the workload set when it is a
// number), and the intervals the workload stamped itself (dataload_* →
// data_read_*, model_persistence_* → persist_*, model_format_* →
// conversion_*). node names the machine.
func Events(run *Run, node string) []train.Event {
	var evs []train.Event
	at := func(k train.Kind, t time.Time) train.Event {
		return train.Event{Kind: k, Time: int64(t.Sub(run.Start)), Wall: t.Round(0), Node: node}
	}
	acc, accOK := lastNumber(run, "accuracy")
	for _, p := range run.Phases {
		if p.Start.IsZero() {
			continue
		}
		switch p.Name {
		case "init":
			evs = append(evs, at(train.InitStart, p.Start))
			if !p.End.IsZero() {
				evs = append(evs, at(train.InitEnd, p.End))
			}
		case "run_train":
			evs = append(evs, at(train.TrainStart, p.Start))
			if !p.End.IsZero() {
				e := at(train.TrainEnd, p.End)
				e.Status = "success"
				if p.Failed {
					e.Status = "failed: run_train failed"
				}
				evs = append(evs, e)
			}
		case "run_eval":
			s := at(train.ValidationStart, p.Start)
			s.Epoch = 1
			evs = append(evs, s)
			if !p.End.IsZero() && !p.Failed {
				e := at(train.ValidationEnd, p.End)
				e.Epoch = 1
				if accOK {
					v := acc
					e.Value = &v
				}
				evs = append(evs, e)
			}
		}
	}
	loc := time.FixedZone("", run.ZoneOffsetSeconds)
	for _, iv := range intervals {
		for i, key := range []string{iv.prefix + "_start_time", iv.prefix + "_end_time"} {
			r, ok := last(run, key)
			if !ok {
				continue
			}
			t, _, err := ParseStamp(r.Text(), loc)
			if err != nil {
				continue
			}
			evs = append(evs, at([]train.Kind{iv.start, iv.end}[i], t))
		}
	}
	return evs
}

// intervals are the workload's time stamp pairs that are Table 6 timing
// points.
var intervals = []struct {
	prefix      string
	start, end  train.Kind
	name, req   string
	description string
}{
	{"dataload", train.DataReadStart, train.DataReadEnd, "T_L", "GB-6.6.2-T6-TL", "data loading"},
	{"model_persistence", train.PersistStart, train.PersistEnd, "T_P", "GB-6.6.2-T6-TP", "checkpoint save"},
	{"model_format", train.ConversionStart, train.ConversionEnd, "T_CV", "GB-6.6.2-T6-TCV", "checkpoint conversion"},
}

// last is the last training record of key.
func last(run *Run, key string) (Record, bool) {
	for i := len(run.Records) - 1; i >= 0; i-- {
		if r := run.Records[i]; r.Key == key && r.Mode != ModeInference {
			return r, true
		}
	}
	return Record{}, false
}

func lastNumber(run *Run, key string) (float64, bool) {
	r, ok := last(run, key)
	if !ok {
		return 0, false
	}
	return r.Number()
}

// llmAccuracy reads the accuracy string of the LLM workloads:
// "loss: 2.1, Perplexity: 8.2".
var llmAccuracy = regexp.MustCompile(`(?i)loss:\s*([-+0-9.eE]+|nan|inf)\s*,\s*perplexity:\s*([-+0-9.eE]+|nan|inf)`)

// Map maps a run's results onto the training test's figures, each with
// its source, keeping every key verbatim and recording what is
// inconsistent. m are the metrics computed from Events (nil: none) and cfg
// their configuration (its TrainingSetSize checks the throughput).
func Map(run *Run, m *train.Metrics, cfg train.Config) *train.WorkloadReport {
	rep := &train.WorkloadReport{Tool: "ais-bench", Package: run.Package, Exit: run.Exit, Figures: []train.ReportedFigure{}, Keys: []train.ReportedKey{}}
	problem := func(format string, args ...any) { rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...)) }
	fig := func(f train.ReportedFigure) { rep.Figures = append(rep.Figures, f) }
	loc := time.FixedZone("", run.ZoneOffsetSeconds)

	if run.ExitCode != 0 || run.TimedOut {
		problem("benchmark.sh %s", run.Exit)
	}
	for _, r := range run.Records {
		rep.Keys = append(rep.Keys, train.ReportedKey{Mode: r.Mode, Key: r.Key, Value: r.Value, Extra: r.Extra, Rank: r.Rank, TimeS: r.Time})
		switch r.Mode {
		case ModeTraining:
		case ModeInference:
			problem("key %q set in mode inference during a training test: kept verbatim, not mapped", r.Key)
		default:
			problem("key %q set with unknown mode %q (the stubs know training and inference): kept verbatim, not mapped", r.Key, r.Mode)
		}
	}
	if run.Malformed > 0 {
		problem("%d lines of the results file did not parse (the first: line %d, %s)", run.Malformed, run.FirstMalformed[0].Line, run.FirstMalformed[0].Reason)
	}
	if len(run.Records) == 0 {
		problem("the package set no result (set_result was never called): the figures it reports are absent")
	}

	// Phases, as aimeter timed them.
	var train0, train1 time.Time
	for _, p := range run.Phases {
		if p.Start.IsZero() || p.End.IsZero() {
			if !p.Start.IsZero() {
				problem("phase %s started and never ended", p.Name)
			}
			continue
		}
		d := ms(p.End.Sub(p.Start))
		fig(train.ReportedFigure{Name: "phase " + p.Name, Value: &d, Unit: "ms", Source: train.SourceAimeter, From: "the package's phase banners, timed as aimeter read them"})
		if p.Name == "run_train" {
			train0, train1 = p.Start, p.End
			v := d
			fig(train.ReportedFigure{Name: "T_TR", Requirement: "GB-6.6.2-T6-TTR", Value: &v, Unit: "ms", Source: train.SourceAimeter, From: "run_train phase (train_start to train_end events)"})
		}
	}
	if len(run.Phases) == 0 {
		problem("no phase banners (\"---- train start ----\") in the package's output: aimeter timed no phase, and T_TR is absent")
	}

	// Throughput.
	unit := "samples/s"
	if cfg.TextGeneration {
		unit = "tokens/s"
	}
	var th *float64
	if r, ok := last(run, "throughput_ratio"); ok {
		if v, ok := r.Number(); ok {
			th = &v
			fig(train.ReportedFigure{Name: "Th", Requirement: "GB-6.6.4-T8-Th", Value: &v, Unit: unit, Source: train.SourceWorkload, From: "throughput_ratio"})
		} else {
			fig(train.ReportedFigure{Name: "Th", Requirement: "GB-6.6.4-T8-Th", Text: r.Text(), Source: train.SourceWorkload, From: "throughput_ratio"})
			problem("throughput_ratio %q is not a number: kept verbatim, no throughput", clip(r.Text(), 80))
		}
	}
	var rankSum *float64
	var names []string
	how := "calc_result.py"
	for _, rf := range run.RankFiles {
		if strings.HasSuffix(rf.Name, ".json") {
			how = "calc_llm_result.py"
		}
		if rf.Error != "" {
			problem("%s: %s", rf.Name, rf.Error)
		}
		if rf.Throughput != nil {
			s := *rf.Throughput
			if rankSum != nil {
				s += *rankSum
			}
			rankSum = &s
			names = append(names, rf.Name)
		}
	}
	if rankSum != nil {
		v := *rankSum
		fig(train.ReportedFigure{Name: "Th (sum over ranks)", Requirement: "GB-6.6.4-T8-Th", Value: &v, Unit: unit, Source: train.SourceWorkloadFiles, From: strings.Join(names, ", ") + " (summed as " + how + " does)"})
		if th != nil && math.Abs(*th-v) > 1e-6*math.Max(1, math.Abs(v)) {
			problem("throughput_ratio %g differs from the sum of the per-rank files %g", *th, v)
		}
		if th == nil {
			th = &v
		}
	}
	if th != nil && *th > 0 {
		switch {
		case train0.IsZero():
			problem("a throughput of %g %s was set but aimeter saw no complete run_train phase to check it against", *th, unit)
		case cfg.TrainingSetSize > 0:
			need := float64(cfg.TrainingSetSize) / *th
			if got := train1.Sub(train0).Seconds(); need > got+1 {
				problem("throughput %g %s is contradicted by the phase times: one pass over the %d-sample training set would take %.1f s, but run_train lasted %.1f s", *th, unit, cfg.TrainingSetSize, need, got)
			}
		}
	}

	// Accuracy.
	if r, ok := last(run, "accuracy"); ok {
		if v, ok := r.Number(); ok {
			fig(train.ReportedFigure{Name: "accuracy", Requirement: "IN-14", Value: &v, Source: train.SourceWorkload, From: "accuracy (the validation_end value)"})
			if v > 1 || v < 0 {
				problem("accuracy %g is outside the 0–1 scale GB/T's targets use", v)
			}
		} else {
			fig(train.ReportedFigure{Name: "accuracy", Requirement: "IN-14", Text: r.Text(), Source: train.SourceWorkload, From: "accuracy"})
			if mm := llmAccuracy.FindStringSubmatch(r.Text()); mm != nil {
				for i, name := range []string{"loss", "perplexity"} {
					if v, err := strconv.ParseFloat(mm[i+1], 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
						fig(train.ReportedFigure{Name: name, Value: &v, Source: train.SourceWorkload, From: "accuracy (read from its text)"})
					}
				}
				problem("accuracy %q is a loss and a perplexity, not an accuracy: no final accuracy, so no quality target is judged", clip(r.Text(), 80))
			} else {
				problem("accuracy %q is not a number: no final accuracy", clip(r.Text(), 80))
			}
		}
	}

	// Time stamps.
	stamps := map[string]time.Time{}
	for _, r := range run.Records {
		if !strings.HasSuffix(r.Key, "_time") || r.Mode != ModeTraining {
			continue
		}
		t, dayOnly, err := ParseStamp(r.Text(), loc)
		switch {
		case dayOnly && len(r.Extra) > 0:
			problem("%s %q has only the day: the shell split an unquoted date, and %q arrived as extra words the stubs never read; not placed on the time line", r.Key, r.Text(), strings.Join(r.Extra, " "))
		case dayOnly:
			problem("%s %q has only the day: not placed on the time line", r.Key, r.Text())
		case err != nil:
			problem("%s: %v", r.Key, err)
		default:
			stamps[r.Key] = t
		}
	}
	span := func(prefix string) (time.Time, time.Time, bool) {
		a, okA := stamps[prefix+"_start_time"]
		b, okB := stamps[prefix+"_end_time"]
		return a, b, okA && okB
	}
	for _, iv := range intervals {
		if a, b, ok := span(iv.prefix); ok {
			d := ms(b.Sub(a))
			fig(train.ReportedFigure{Name: iv.name, Requirement: iv.req, Value: &d, Unit: "ms", Source: train.SourceWorkload, From: iv.prefix + "_start_time, " + iv.prefix + "_end_time (" + iv.description + ", to the second)"})
			if d < 0 {
				problem("%s_end_time is before %s_start_time", iv.prefix, iv.prefix)
			}
		}
	}
	for _, prefix := range []string{"train", "proc", "train_launch"} {
		a, b, ok := span(prefix)
		if !ok {
			continue
		}
		d := ms(b.Sub(a))
		name, req := "T_TR", "GB-6.6.2-T6-TTR"
		if prefix == "train_launch" {
			name, req = "train launch", ""
		}
		fig(train.ReportedFigure{Name: name, Requirement: req, Value: &d, Unit: "ms", Source: train.SourceWorkload, From: prefix + "_start_time, " + prefix + "_end_time (to the second)"})
		if prefix != "train_launch" && !train0.IsZero() && (a.Before(train0.Add(-time.Second)) || b.After(train1.Add(time.Second))) {
			problem("the workload's %s_start_time–%s_end_time (%s to %s) is not within the run_train phase aimeter timed (%s to %s)", prefix, prefix,
				a.Format("15:04:05"), b.Format("15:04:05"), train0.In(loc).Format("15:04:05.000"), train1.In(loc).Format("15:04:05.000"))
		}
	}

	// Power and utilisation.
	for _, p := range []struct{ key, name, req string }{
		{"average_power", "P_TR", "GB-6.6.3-T7-PTR"},
		{"max_power", "P_TRmax", "GB-6.6.3-T7-PTRmax"},
	} {
		if r, ok := last(run, p.key); ok {
			if v, ok := r.Number(); ok {
				fig(train.ReportedFigure{Name: p.name, Requirement: p.req, Value: &v, Unit: "W", Source: train.SourceWorkload, From: p.key + " (the package's own IPMI reads)"})
			} else {
				problem("%s %q is not a number", p.key, clip(r.Text(), 80))
			}
		}
	}
	if m != nil {
		for _, tm := range m.Trials {
			for _, n := range tm.Nodes {
				if n.PowerW != nil {
					v := *n.PowerW
					fig(train.ReportedFigure{Name: "P_TR", Requirement: "GB-6.6.3-T7-PTR", Value: &v, Unit: "W", Source: train.SourceAimeter, From: "aimeter's power meters over run_train, node " + n.Node})
				}
				if n.PowerMaxW != nil {
					v := *n.PowerMaxW
					fig(train.ReportedFigure{Name: "P_TRmax", Requirement: "GB-6.6.3-T7-PTRmax", Value: &v, Unit: "W", Source: train.SourceAimeter, From: "aimeter's power meters over run_train, node " + n.Node})
				}
			}
		}
	}
	if r, ok := last(run, "resource_util_ratio"); ok {
		if v, ok := r.Number(); ok {
			fig(train.ReportedFigure{Name: "utilisation", Requirement: "GB-6.6.5-T9-server", Value: &v, Source: train.SourceWorkload, From: "resource_util_ratio (the last device's mean, as the package sets it)"})
		} else {
			problem("resource_util_ratio %q is not a number", clip(r.Text(), 80))
		}
	}
	if r, ok := last(run, "result"); ok && r.Text() != "OK" {
		problem("result is %q, not OK", clip(r.Text(), 80))
	} else if !ok && len(run.Records) > 0 {
		problem("result was never set to OK")
	}
	return rep
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// Lines are a report's figures and problems in words, for the report's
// notes.
func Lines(rep *train.WorkloadReport) []string {
	if rep == nil {
		return nil
	}
	out := []string{fmt.Sprintf("ais-bench package %s: benchmark.sh %s; %d results set.", rep.Package, rep.Exit, len(rep.Keys))}
	for _, f := range rep.Figures {
		v := f.Text
		if f.Value != nil {
			v = strings.TrimSpace(strconv.FormatFloat(*f.Value, 'g', 6, 64) + " " + f.Unit)
		}
		req := ""
		if f.Requirement != "" {
			req = " [" + f.Requirement + "]"
		}
		out = append(out, fmt.Sprintf("ais-bench figure %s%s: %s (%s: %s).", f.Name, req, v, f.Source, f.From))
	}
	for _, p := range rep.Problems {
		out = append(out, "ais-bench: "+p+".")
	}
	return out
}
