package train

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
)

// TimeLayout is the standard's timestamp format "[yyyy:MM:dd HH:mm:ss]"
// without the brackets, as a Go layout (IN-04, IN-17).
const TimeLayout = "2006:01:02 15:04:05"

// LogFile is the name of the training log in a run bundle.
const LogFile = "gbt_training.log"

// LogOptions control WriteLog. The zero value writes local times and takes
// each event's Wall time.
type LogOptions struct {
	// Location is the time zone of the timestamps: the SUT's local time,
	// whose UTC offset the result records (IN-04). nil: time.Local.
	Location *time.Location
	// Origin is the wall-clock time of the run clock's zero, used for an
	// event whose Wall is zero (Wall = Origin + Time). Zero: such an event
	// is stamped time.Unix(0, Time).
	Origin time.Time
}

func (o LogOptions) wall(e *Event) time.Time {
	t := e.Wall
	switch {
	case !t.IsZero():
	case !o.Origin.IsZero():
		t = o.Origin.Add(time.Duration(e.Time))
	default:
		t = time.Unix(0, e.Time)
	}
	loc := o.Location
	if loc == nil {
		loc = time.Local
	}
	return t.In(loc)
}

// FormatAccuracy writes an accuracy as the log does: 4 decimals on the
// scale it was given in (IN-18), "--" when unknown or not a finite number
// (GB-6.3-c-note).
func FormatAccuracy(a *float64) string {
	if a == nil || math.IsNaN(*a) || math.IsInf(*a, 0) {
		return "--"
	}
	return strconv.FormatFloat(*a, 'f', 4, 64)
}

// FormatEpochLine is the per-epoch log line of 6.3 c) 4),
// "[yyyy:MM:dd HH:mm:ss]-[trial]-[epoch]-[accuracy]" (GB-6.3-c-4, IN-17:
// a colon between month and day). A trial below 1 is written 1 (IN-19).
func FormatEpochLine(ts time.Time, trial, epoch int, accuracy *float64) string {
	return "[" + ts.Format(TimeLayout) + "]-[" + strconv.Itoa(max(trial, 1)) + "]-[" + strconv.Itoa(epoch) + "]-[" + FormatAccuracy(accuracy) + "]"
}

// FormatSamplesLine is the per-epoch log line of a validation that has no
// epoch but a samples count (LLM benchmarks such as llama2_70b_lora log
// evaluations at samples_count, not at epochs): the epoch field carries
// the samples count, "[yyyy:MM:dd HH:mm:ss]-[trial]-[3072 samples]-[accuracy]".
func FormatSamplesLine(ts time.Time, trial int, samples int64, accuracy *float64) string {
	return "[" + ts.Format(TimeLayout) + "]-[" + strconv.Itoa(max(trial, 1)) + "]-[" + strconv.FormatInt(samples, 10) + " samples]-[" + FormatAccuracy(accuracy) + "]"
}

// FormatGenerationLine is the AutoML mutation line of Annex B,
// "[start]-[end]-[generation]-[neurons]" (GB-B.2-a); a nil time is written
// as empty brackets, as for the initial model, generation 0 (IN-81).
func FormatGenerationLine(start, end *time.Time, generation int, neurons int64) string {
	f := func(t *time.Time) string {
		if t == nil {
			return "[]"
		}
		return "[" + t.Format(TimeLayout) + "]"
	}
	return f(start) + "-" + f(end) + "-[" + strconv.Itoa(generation) + "]-[" + strconv.FormatInt(neurons, 10) + "]"
}

// logLine is one line of the training log and the full-resolution time at
// which it is due.
type logLine struct {
	at   int64
	seq  int
	text string
}

// epochEntry gathers one epoch's end and accuracy across ranks.
type epochEntry struct {
	trial, epoch int
	samples      int64 // the key of a validation without an epoch
	at           int64
	wall         time.Time
	acc          *float64
	seq          int
}

// LogLines returns the training log of events: one line per epoch of each
// trial, carrying the accuracy of the validation with the same number
// (GB-6.3-c-4), and with AutoML the mutation line of each generation
// before its epochs, whose numbers restart at 1 (GB-B.2-a, GB-B.2-b,
// IN-81). With several ranks an epoch's line is due when its last rank
// ends it. A line's timestamp is the time it is due: the later of the
// epoch's end and its validation's end. A validation without an epoch
// but with a samples count (Event.Samples) has its own line, whose epoch
// field is the samples count (FormatSamplesLine). Lines are in time order.
func LogLines(events []Event, opts LogOptions) []string {
	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b Event) int { return cmp.Compare(a.Time, b.Time) })
	type key struct {
		trial, gen, epoch int
		samples           int64
	}
	gen := map[int]int{}            // trial → current generation
	genStart := map[[2]int]*Event{} // (trial, generation) → start
	entries := map[key]*epochEntry{}
	var order []key
	var lines []logLine
	seq := 0
	entry := func(e *Event) *epochEntry {
		t := trialOf(e)
		k := key{t, gen[t], e.Epoch, sampleKey(e)}
		en := entries[k]
		if en == nil {
			en = &epochEntry{trial: t, epoch: e.Epoch, samples: k.samples, seq: seq}
			seq++
			entries[k] = en
			order = append(order, k)
		}
		return en
	}
	touch := func(en *epochEntry, e *Event) {
		if e.Time >= en.at {
			en.at, en.wall = e.Time, opts.wall(e)
		}
	}
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case GenerationStart:
			genStart[[2]int{trialOf(e), e.Epoch}] = e
		case GenerationEnd:
			t := trialOf(e)
			gen[t] = e.Epoch
			var start, end *time.Time
			if s := genStart[[2]int{t, e.Epoch}]; s != nil && e.Epoch > 0 {
				ws, we := opts.wall(s), opts.wall(e)
				start, end = &ws, &we
			}
			lines = append(lines, logLine{e.Time, seq, FormatGenerationLine(start, end, e.Epoch, e.Count)})
			seq++
		case EpochEnd:
			if e.Epoch > 0 {
				touch(entry(e), e)
			}
		case ValidationEnd:
			if (e.Epoch > 0 || e.Samples > 0) && e.Value != nil && !math.IsNaN(*e.Value) && !math.IsInf(*e.Value, 0) {
				en := entry(e)
				if en.acc == nil {
					v := *e.Value
					en.acc = &v
				}
				touch(en, e)
			}
		}
	}
	for _, k := range order {
		en := entries[k]
		text := FormatEpochLine(en.wall, en.trial, en.epoch, en.acc)
		if en.epoch == 0 {
			text = FormatSamplesLine(en.wall, en.trial, en.samples, en.acc)
		}
		lines = append(lines, logLine{en.at, en.seq, text})
	}
	slices.SortStableFunc(lines, func(a, b logLine) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out
}

// WriteLog writes the training log of events to w, one line each, "\n"
// terminated (GB-6.7.1-g). See LogLines.
func WriteLog(w io.Writer, events []Event, opts LogOptions) error {
	bw := bufio.NewWriter(w)
	for _, l := range LogLines(events, opts) {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("train: writing the training log: %w", err)
	}
	return nil
}
