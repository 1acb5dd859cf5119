// Package trainbundle holds a GB/T 45087 training run (clause 6) as a part
// of a bundle: its description (training_run.json), its events as received
// (training_events.jsonl) and a child's captured output. A training bundle
// has no Result; its derived files are gbt_training.json, gbt_training.log
// and report.html (package derived).
package trainbundle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"aimeter/aisbench"
	"aimeter/bundle"
	"aimeter/gbt/testinfo"
	"aimeter/sysinfo"
	"aimeter/train"
	"aimeter/train/collect"
	"aimeter/train/mllog"
)

// Names of the raw files of a training bundle (package bundle names them,
// so that it can tell a training bundle and clear a directory of an
// earlier run's files).
const (
	// TrainingEventsFile holds every train.Event as received, one JSON
	// object per line, in the order received.
	TrainingEventsFile = bundle.TrainingEventsFile
	// TrainingRunFile describes the run: configuration, scenario, test
	// information, time zone, and how the events came in (TrainingRun).
	TrainingRunFile = bundle.TrainingRunFile
	// TrainingStdoutFile and TrainingStderrFile are the captured output
	// of a training program run as a child, as much as was kept.
	TrainingStdoutFile = bundle.TrainingStdoutFile
	TrainingStderrFile = bundle.TrainingStderrFile
)

// Sources of training events, for TrainingRun.Source.
const (
	SourceGoAPI     = "go-api"    // a Go training loop through train.Recorder
	SourceMLLOG     = "mllog"     // a child process printing :::MLLOG lines
	SourceCollector = "collector" // ranks posting to the train/collect endpoint
	SourceAisBench  = "ais-bench" // an ais-bench workload package's benchmark.sh (package aisbench)
)

// AisBenchDir is the bundle folder holding an ais-bench package's log and
// result files, under their names in the package.
const AisBenchDir = "ais_bench"

// Training is a GB/T 45087 training run: the events and the description
// that every derived file is computed from.
type Training struct {
	// Run is training_run.json.
	Run TrainingRun
	// Events are the events as received (training_events.jsonl).
	Events []train.Event
	// Stdout and Stderr are the captured output of a child process; nil
	// writes no file. The caller bounds them (TrainingCommand says how
	// much was left out).
	Stdout, Stderr []byte
	// TrialOutputs are the captured output of each trial of a program run
	// several times (aimeter train --trials), or the log files read as
	// trials (--logs, as Stdout), in trial order: files
	// training_trial<N>_stdout.log and training_trial<N>_stderr.log. A nil
	// stream writes no file.
	TrialOutputs []TrialOutput
	// AisBenchFiles are an ais-bench package's log and result files, by
	// the names Run.AisBench.Files lists (files AisBenchDir/NAME); nil
	// for other runs.
	AisBenchFiles map[string][]byte
}

// TrialOutput is the captured output of one trial.
type TrialOutput struct {
	Stdout, Stderr []byte
}

// TrialOutputFile names the file of trial n's (1-based) stream, "stdout"
// or "stderr".
func TrialOutputFile(n int, stream string) string {
	return fmt.Sprintf("training_trial%d_%s.log", n, stream)
}

// TrainingRun is training_run.json: everything about a training run beyond
// its events. Every field is raw: what was asked and what happened.
type TrainingRun struct {
	// Version is the aimeter version that ran the test.
	Version string `json:"version"`
	// Name labels the run in report.html; "" means "training run".
	Name string `json:"name,omitempty"`
	// Source is how the events came in: SourceGoAPI, SourceMLLOG or
	// SourceCollector.
	Source string `json:"source"`
	// Zone is the time zone of the log's timestamps, as it was at Origin.
	ZoneName          string `json:"zone_name"`
	ZoneOffsetSeconds int    `json:"zone_offset_s"`
	// Origin is the wall-clock time of the run clock's zero (an event with
	// a zero Wall is stamped Origin + Time). Zero: not known.
	Origin time.Time `json:"origin,omitzero"`
	// System describes the machine aimeter ran on.
	System sysinfo.System `json:"system"`
	// Info and Training are the test information, fields 1–20 and 21–25
	// of 6.1 a).
	Info     testinfo.Info      `json:"info"`
	Training train.TrainingInfo `json:"training_info"`
	// Scenario is the Tables 1–4 row run; nil when none was named.
	Scenario *train.CatalogueEntry `json:"scenario,omitempty"`
	// Config is the metrics configuration.
	Config train.Config `json:"config"`
	// Workload describes aimeter's own reference workload; nil otherwise.
	Workload *TrainingWorkload `json:"workload,omitempty"`
	// Command describes a child process; nil otherwise.
	Command *TrainingCommand `json:"command,omitempty"`
	// Collector describes the event endpoint; nil otherwise.
	Collector *TrainingCollector `json:"collector,omitempty"`
	// Trials describe the runs of a program run several times (aimeter
	// train --trials N -- COMMAND, with Command giving its Argv) or the
	// result logs read as trials (--logs), one per trial in order; nil for
	// a single run.
	Trials []TrainingTrial `json:"trials,omitempty"`
	// Incomplete says why the run ended before it was complete (a child
	// that failed, an interrupt, a deadline); "" when it completed.
	Incomplete string `json:"incomplete,omitempty"`
	// AisBench is the run of an ais-bench workload package (aimeter
	// train --ais-bench): its exit, phases and every result it set; nil
	// for other runs.
	AisBench *aisbench.Run `json:"ais_bench,omitempty"`
	// PowerReplay is the base name of the power replay file whose samples
	// were added to the events (aimeter train --power-replay); "" for none.
	PowerReplay string `json:"power_replay,omitempty"`
}

// TrainingWorkload describes a run of aimeter's reference workload.
type TrainingWorkload struct {
	// Name is the workload ("reference").
	Name string `json:"name"`
	// Dataset is the data set trained on; Model the network.
	Dataset string `json:"dataset"`
	Model   string `json:"model"`
	// Trials and Epochs are the trials asked for and the epoch limit of
	// each.
	Trials int `json:"trials"`
	Epochs int `json:"epochs"`
}

// TrainingCommand describes a training program run as a child process.
type TrainingCommand struct {
	// Argv is the command line, with the values of secret-looking
	// options replaced by "REDACTED".
	Argv []string `json:"argv"`
	// Exit says how the child ended.
	Exit mllog.Exit `json:"exit"`
	// Stats are the MLLOG parser's counts.
	Stats mllog.Stats `json:"stats"`
	// StdoutBytes and StderrBytes are the bytes the child wrote; the
	// captured files hold at most CaptureLimit bytes of each (the first
	// ones).
	StdoutBytes  int64 `json:"stdout_bytes"`
	StderrBytes  int64 `json:"stderr_bytes"`
	CaptureLimit int64 `json:"capture_limit"`
}

// TrainingTrial is one run of a training program, or one result log read
// as a trial.
type TrainingTrial struct {
	// Trial is the trial number, from 1.
	Trial int `json:"trial"`
	// Exit says how the program ended; nil for a log file.
	Exit *mllog.Exit `json:"exit,omitempty"`
	// Log is the result log read, as given on the command line, and
	// LogSHA256 its digest; "" for a program's run.
	Log       string `json:"log,omitempty"`
	LogSHA256 string `json:"log_sha256,omitempty"`
	// Stats are the MLLOG parser's counts.
	Stats mllog.Stats `json:"stats"`
	// StdoutBytes and StderrBytes are the bytes the program wrote (for a
	// log, StdoutBytes is its size); the captured files hold at most
	// TrainingCommand.CaptureLimit bytes of each.
	StdoutBytes int64 `json:"stdout_bytes"`
	StderrBytes int64 `json:"stderr_bytes,omitempty"`
	// Failure says why the run failed as a whole, as its TrialEnd status
	// does ("the program exited with status 1", "timed out after 2h0m0s
	// (--timeout)"); "" when it did not.
	Failure string `json:"failure,omitempty"`
}

// TrainingCollector describes a run measured through the event endpoint.
type TrainingCollector struct {
	// Listen is the address served.
	Listen string `json:"listen"`
	// ExpectedRanks is the number of ranks waited for; 0 when not given.
	ExpectedRanks int `json:"expected_ranks,omitempty"`
	// Status is the endpoint's final status: events, batches and each
	// rank's clock offset.
	Status collect.Status `json:"status"`
	// EndReason says why collection ended.
	EndReason string `json:"end_reason"`
}

// Location is the time zone of the run, as recorded.
func (r *TrainingRun) Location() *time.Location {
	return time.FixedZone(r.ZoneName, r.ZoneOffsetSeconds)
}

// SetLocation records loc as the run's time zone, as it is at Origin (or
// now, when Origin is zero).
func (r *TrainingRun) SetLocation(loc *time.Location) {
	at := r.Origin
	if at.IsZero() {
		at = time.Now()
	}
	r.ZoneName, r.ZoneOffsetSeconds = at.In(loc).Zone()
}

// SourceText says in words how the events came in.
func (r *TrainingRun) SourceText() string {
	failed := 0
	for _, t := range r.Trials {
		if t.Failure != "" {
			failed++
		}
	}
	switch {
	case len(r.Trials) > 0 && r.Command != nil:
		return fmt.Sprintf("MLLOG from %d runs of a child process: %s (%d failed)", len(r.Trials), joinArgv(r.Command.Argv), failed)
	case len(r.Trials) > 0:
		return fmt.Sprintf("MLLOG from %d result logs: %s … %s", len(r.Trials), r.Trials[0].Log, r.Trials[len(r.Trials)-1].Log)
	case r.Command != nil:
		return fmt.Sprintf("MLLOG from a child process: %s (%s)", joinArgv(r.Command.Argv), r.Command.Exit.Reason)
	case r.Collector != nil:
		return fmt.Sprintf("event endpoint on %s: %d ranks, %d events (%s)", r.Collector.Listen, len(r.Collector.Status.Ranks), r.Collector.Status.Events, r.Collector.EndReason)
	case r.AisBench != nil:
		return fmt.Sprintf("ais-bench workload package %s (%s): code/benchmark.sh %s", r.AisBench.Package, r.AisBench.Layout, r.AisBench.Exit)
	case r.Workload != nil:
		return fmt.Sprintf("Go API: %s workload, %s on %s, %d trials of at most %d epochs", r.Workload.Name, r.Workload.Model, r.Workload.Dataset, r.Workload.Trials, r.Workload.Epochs)
	}
	return "events from " + r.Source
}

func joinArgv(argv []string) string {
	var b bytes.Buffer
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a)
	}
	return b.String()
}

// Notes are the report's remarks on how the run went.
func (r *TrainingRun) Notes() []string {
	var out []string
	if r.Incomplete != "" {
		out = append(out, "The run is incomplete: "+r.Incomplete+".")
	}
	for _, t := range r.Trials {
		s := t.Stats
		from := "run"
		if t.Log != "" {
			from = t.Log
		}
		line := fmt.Sprintf("Trial %d (%s): %d lines, %d records, %d events, %d malformed, %d out of order", t.Trial, from, s.Lines, s.Records, s.Events, s.Malformed, s.Problems)
		if t.Exit != nil {
			line += "; the program " + t.Exit.Reason
		}
		if t.Failure != "" {
			line += "; failed: " + t.Failure
		}
		out = append(out, line+".")
		for _, q := range s.FirstMalformed {
			out = append(out, fmt.Sprintf("Trial %d, malformed line %d: %s: %q", t.Trial, q.Line, q.Reason, q.Excerpt))
		}
	}
	if c := r.Command; c != nil && len(r.Trials) == 0 {
		s := c.Stats
		out = append(out, fmt.Sprintf("MLLOG: %d lines, %d records, %d events, %d malformed, %d too long, %d out of order.", s.Lines, s.Records, s.Events, s.Malformed, s.LongLines, s.Problems))
		for _, q := range s.FirstMalformed {
			out = append(out, fmt.Sprintf("Malformed line %d: %s: %q", q.Line, q.Reason, q.Excerpt))
		}
		if c.StdoutBytes > c.CaptureLimit || c.StderrBytes > c.CaptureLimit {
			out = append(out, fmt.Sprintf("The captured output keeps the first %d bytes of each stream (stdout %d, stderr %d bytes written).", c.CaptureLimit, c.StdoutBytes, c.StderrBytes))
		}
	}
	if a := r.AisBench; a != nil {
		for _, p := range a.Phases {
			state := "ended"
			switch {
			case p.Failed:
				state = "failed"
			case p.End.IsZero():
				state = "never ended"
			}
			out = append(out, fmt.Sprintf("ais-bench phase %s: %s.", p.Name, state))
		}
		for _, q := range a.FirstMalformed {
			out = append(out, fmt.Sprintf("ais-bench results line %d: %s: %q", q.Line, q.Reason, q.Excerpt))
		}
		for _, s := range a.Skipped {
			out = append(out, "ais-bench file not kept: "+s+".")
		}
	}
	if c := r.Collector; c != nil {
		for _, rk := range c.Status.Ranks {
			off := "no clock offset reported"
			if rk.HasOffset {
				off = fmt.Sprintf("clock offset %d ns ± %d ns", rk.OffsetNS, rk.UncertaintyNS)
			}
			out = append(out, fmt.Sprintf("Rank %d on %s: %d events, %s.", rk.Rank, rk.Node, rk.Events, off))
		}
	}
	return out
}

// Part is a training run as a part of a bundle, whose main file is
// training_run.json.
var Part = bundle.FileSetType[*Training]{Name: TrainingRunFile, Read: read, Write: write}

// Of returns the training run of b; nil for an inference bundle, or for a
// training bundle whose files are malformed (derived.Read reports that;
// Get returns the error).
func Of(b *bundle.Bundle) *Training { return Part.Value(b) }

// Get returns the training run of b, or the error its files gave.
func Get(b *bundle.Bundle) (*Training, error) { return Part.Get(b) }

// Set makes t the training run of b (a bundle without a Result, which
// bundle.Write writes as a training bundle); nil removes it.
func Set(b *bundle.Bundle, t *Training) {
	if t == nil {
		Part.Remove(b)
		return
	}
	Part.Set(b, t)
}

// write adds the raw files of a training bundle, after giving the run the
// bundle's time zone (or the local one) and version when it has none; the
// manifest names the run's version as its generator.
func write(b *bundle.Bundle, t *Training, fw bundle.FileWriter) error {
	if t.Run.ZoneName == "" && t.Run.ZoneOffsetSeconds == 0 {
		loc := b.Location
		if loc == nil {
			loc = time.Local
		}
		t.Run.SetLocation(loc)
	}
	if t.Run.Version == "" {
		t.Run.Version = b.Version
	}
	b.Version = t.Run.Version
	fw.Add(TrainingRunFile, func(w io.Writer) error { return bundle.WriteJSON(w, &t.Run) })
	fw.Add(TrainingEventsFile, func(w io.Writer) error { return WriteTrainingEvents(w, t.Events) })
	if t.Stdout != nil {
		fw.Add(TrainingStdoutFile, func(w io.Writer) error { _, err := w.Write(t.Stdout); return err })
	}
	if t.Stderr != nil {
		fw.Add(TrainingStderrFile, func(w io.Writer) error { _, err := w.Write(t.Stderr); return err })
	}
	if a := t.Run.AisBench; a != nil {
		for _, name := range a.Files {
			data := t.AisBenchFiles[name]
			fw.Add(AisBenchDir+"/"+name, func(w io.Writer) error { _, err := w.Write(data); return err })
		}
	}
	for i, o := range t.TrialOutputs {
		for _, s := range []struct {
			name string
			data []byte
		}{{"stdout", o.Stdout}, {"stderr", o.Stderr}} {
			if s.data != nil {
				data := s.data
				fw.Add(TrialOutputFile(i+1, s.name), func(w io.Writer) error { _, err := w.Write(data); return err })
			}
		}
	}
	return nil
}

// WriteTrainingEvents writes events as JSON lines, one event a line.
func WriteTrainingEvents(w io.Writer, events []train.Event) error {
	enc := json.NewEncoder(w)
	for i := range events {
		if err := enc.Encode(&events[i]); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
	}
	return nil
}

// maxTrainingLine bounds one line of training_events.jsonl.
const maxTrainingLine = 1 << 20

// ReadTrainingEvents reads what WriteTrainingEvents wrote. An unknown
// field, a bad line or an unknown kind is an error naming the line.
func ReadTrainingEvents(r io.Reader) ([]train.Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxTrainingLine)
	var out []train.Event
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e train.Event
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", TrainingEventsFile, line, err)
		}
		if e.Kind == "" {
			return nil, fmt.Errorf("%s line %d: no kind", TrainingEventsFile, line)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", TrainingEventsFile, line+1, err)
	}
	return out, nil
}

// read reads a training run from the raw files of a bundle, and gives the
// bundle the run's version, system and time zone.
func read(b *bundle.Bundle, f bundle.Files) (*Training, error) {
	t := &Training{}
	data, _ := f.Bytes(TrainingRunFile)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t.Run); err != nil {
		return nil, fmt.Errorf("%s: %w", TrainingRunFile, err)
	}
	events, ok := f.Bytes(TrainingEventsFile)
	if !ok {
		return nil, fmt.Errorf("%s does not list %s, which a training bundle always holds", bundle.ManifestFile, TrainingEventsFile)
	}
	var err error
	if t.Events, err = ReadTrainingEvents(bytes.NewReader(events)); err != nil {
		return nil, err
	}
	// optional returns a file's bytes; nil when the bundle has none.
	optional := func(name string) []byte { data, _ := f.Bytes(name); return data }
	t.Stdout, t.Stderr = optional(TrainingStdoutFile), optional(TrainingStderrFile)
	for i := range t.Run.Trials {
		t.TrialOutputs = append(t.TrialOutputs, TrialOutput{optional(TrialOutputFile(i+1, "stdout")), optional(TrialOutputFile(i+1, "stderr"))})
	}
	if a := t.Run.AisBench; a != nil {
		t.AisBenchFiles = map[string][]byte{}
		for _, name := range a.Files {
			t.AisBenchFiles[name] = optional(AisBenchDir + "/" + name)
		}
	}
	b.Version, b.System, b.Location = t.Run.Version, t.Run.System, t.Run.Location()
	return t, nil
}
