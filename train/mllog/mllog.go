// Package mllog reads the ":::MLLOG {json}" lines that MLPerf Training
// programs print (mlperf-logging's mllog) and turns them into train.Events,
// so that any existing MLPerf reference trainer can be measured unchanged.
// It also runs a training program as a child process (RunCommand) and
// parses its output as it comes.
//
// # Line format
//
// A record is the text ":::MLLOG " followed by one JSON object, anywhere on
// a line: whatever precedes it is a prefix that launchers add, and a rank
// is read from it when it has one of the forms "3: " (srun --label),
// "[0,3]<stdout>:" (mpirun --tag-output) or "[rank3]:" / "[default3]:"
// (torchrun). The object, as mlperf-logging's mllog writes it, has
// namespace, time_ms (wall-clock milliseconds since the Unix epoch,
// possibly fractional), event_type (INTERVAL_START, INTERVAL_END or
// POINT_IN_TIME), key, value and metadata (file, lineno and key-specific
// fields). Only time_ms, key, value and metadata are read. A line that is not valid UTF-8 is decoded as
// latin-1, as mlperf-logging's own checker does. Lines longer than
// Options.MaxLine are counted and skipped.
//
// # Keys
//
// MLLOG keys map to train kinds as follows:
//
//	init_start, init_stop     -> InitStart, InitEnd
//	run_start, run_stop       -> TrainStart, TrainEnd (Status = metadata.status)
//	epoch_start, epoch_stop   -> EpochStart, EpochEnd (Epoch = metadata.epoch_num)
//	block_start, block_stop   -> BlockStart, BlockEnd (Epoch = metadata.first_epoch_num,
//	                             else the block's ordinal; Count = metadata.epoch_count
//	                             or samples_count; Samples = metadata.samples_count)
//	eval_start, eval_stop     -> ValidationStart, ValidationEnd (Epoch = metadata.epoch_num,
//	                             Samples = metadata.samples_count)
//	eval_accuracy             -> Accuracy (Value = value, Epoch and Samples as for
//	                             eval_stop), and the Value of the matching ValidationEnd
//	train_samples, eval_samples -> TrainSamples, EvalSamples (Count = value)
//	power_reading             -> Power (Value = value in W, Node = metadata.host, as
//	                             mlperf-logging's power examples write it, or node)
//
// For what MLLOG lacks and GB/T 45087 clause 6 needs, aimeter defines its
// own keys in the same JSON shape (docs/training-events.md):
//
//	aimeter_data_read_start, aimeter_data_read_stop   -> DataReadStart, DataReadEnd
//	aimeter_accelerator_start (metadata.rank)         -> AcceleratorStart (IN-27)
//	aimeter_conversion_start, aimeter_conversion_stop -> ConversionStart, ConversionEnd
//	aimeter_persist_start, aimeter_persist_stop       -> PersistStart, PersistEnd
//	aimeter_send, aimeter_receive (metadata.id)       -> Send, Receive
//	aimeter_utilization (metadata.chip, value 0..1)   -> Utilization
//	aimeter_power (value in W)                        -> Power
//	aimeter_trial_start, aimeter_trial_stop (metadata.trial, status) -> TrialStart, TrialEnd
//	aimeter_generation_start, aimeter_generation_stop (metadata.generation, neurons)
//	                                                  -> GenerationStart, GenerationEnd
//
// Every key also takes the optional metadata fields node, rank and trial,
// which override the prefix's rank, Options.Node and the current trial.
// Events between aimeter_trial_start and aimeter_trial_stop carry that
// trial's number. Other keys (submission_*, global_batch_size, opt_*, …)
// make no event; the first value of each is kept in Stats.Info.
//
// An evaluation is keyed by what the log carries: its epoch_num when it
// has one; else its samples_count (LLM benchmarks such as
// llama2_70b_lora and gpt3 have no epochs: Epoch is 0 and Samples tells
// the evaluations apart); else its order, the n-th eval_start of the
// rank being evaluation n (eval_stop and eval_accuracy take the number
// of the last eval_start).
//
// # Times
//
// Event.Wall is time_ms; Event.Time is nanoseconds since the first
// record's time_ms (the run's clock origin); Event.Mono is left zero,
// since MLLOG has no monotonic clock. Epoch numbers are made 1-based: a
// log whose first epoch_num is 0 has every epoch number shifted by one.
//
// # Bad input
//
// A record that does not parse (bad JSON, no key, no time_ms) is counted
// in Stats.Malformed and the first few are quoted with their line number;
// it is never fatal. Events out of order — an epoch or evaluation that
// ends before it starts, a second run_start or run_stop in one trial on
// one rank — are still emitted and are reported in Stats.Problems: the
// order of the timing points is derived, not normative (IN-30).
package mllog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"aimeter/train"
)

// Marker is the text that introduces a record.
const Marker = ":::MLLOG"

// Options configure a Parser.
type Options struct {
	// MaxLine is the longest line, in bytes, that is parsed; longer lines
	// are counted in Stats.LongLines and skipped. Zero means 1 MiB.
	MaxLine int
	// MaxQuoted is how many malformed records and problems are quoted in
	// Stats. Zero means 5.
	MaxQuoted int
	// Node is the node name given to events whose record names none.
	// Empty leaves Event.Node empty.
	Node string
	// Rank is the rank given to events whose line has no rank prefix and
	// whose record names none. Zero means rank 0.
	Rank int
}

// Quote is one malformed line or one problem, quoted for the reader.
type Quote struct {
	// Line is the 1-based line number in its stream (the child's stdout
	// or stderr, each numbered on its own).
	Line int64 `json:"line"`
	// Reason says what is wrong.
	Reason string `json:"reason"`
	// Excerpt is the start of the line, at most 200 bytes.
	Excerpt string `json:"excerpt,omitempty"`
}

// Stats count what a Parser saw.
type Stats struct {
	// Lines and Bytes count every line of the stream and its bytes (with
	// its newline, without the carriage return of a CRLF line end).
	Lines int64 `json:"lines"`
	Bytes int64 `json:"bytes"`
	// Records counts lines carrying the marker; Events the events emitted.
	Records int64 `json:"records"`
	Events  int64 `json:"events"`
	// Malformed counts records that did not parse; the first are quoted.
	Malformed      int64   `json:"malformed"`
	FirstMalformed []Quote `json:"first_malformed,omitempty"`
	// LongLines counts lines longer than Options.MaxLine, skipped.
	LongLines int64 `json:"long_lines"`
	// Ignored counts well-formed records whose key makes no event.
	Ignored int64 `json:"ignored"`
	// Problems counts events out of order; the first are quoted.
	Problems      int64   `json:"problems"`
	FirstProblems []Quote `json:"first_problems,omitempty"`
	// Info holds the first value (as JSON text, at most 200 bytes) of up to
	// 64 keys that make no event, such as submission_benchmark or
	// global_batch_size: the information fields of the run.
	Info map[string]string `json:"info,omitempty"`
}

// Parser turns MLLOG lines into events. It is not safe for concurrent use.
type Parser struct {
	opts  Options
	emit  func(train.Event)
	stats Stats
	// at is the number of the line being parsed in its stream (Quote.Line).
	at     int64
	origin int64 // time_ms of the first record, in ns; valid when haveOrigin
	// haveOrigin says origin is set.
	haveOrigin bool
	// epochShift is added to epoch numbers; decided on the first one.
	epochShift  int
	epochShiftK bool
	trial       int
	ranks       map[int]*rankState
	scratch     []byte
	rec         record
}

// rankState is what the parser remembers about one rank for its order
// checks and for pairing eval_accuracy with eval_stop.
type rankState struct {
	runStarted, runStopped bool
	openEpochs             map[int]bool
	openEvals              map[evalKey]bool
	blocks                 int
	// evals counts eval_starts without epoch_num or samples_count.
	evals int
	// pending is an eval_stop held back until the next record of the
	// rank, which may be its eval_accuracy.
	pending    train.Event
	hasPending bool
	// accuracy seen before its eval_stop, by evaluation.
	early map[evalKey]float64
}

// evalKey identifies one evaluation of a rank: its epoch (1-based) when
// it has one, else its samples count, else its ordinal in epoch.
type evalKey struct {
	epoch   int
	samples int64
}

// evalKeyOf keys the evaluation of an eval_start (start), eval_stop or
// eval_accuracy and fills ev's Epoch and Samples.
func (p *Parser) evalKeyOf(md *metadata, st *rankState, start bool, ev *train.Event) evalKey {
	if md.SamplesCount.ok {
		ev.Samples = int64(md.SamplesCount.v)
	}
	switch {
	case md.EpochNum.ok:
		ev.Epoch = p.epoch(md.EpochNum)
		return evalKey{epoch: ev.Epoch}
	case md.SamplesCount.ok:
		return evalKey{samples: ev.Samples}
	}
	if start {
		st.evals++
	}
	ev.Epoch = max(st.evals, 1)
	return evalKey{epoch: ev.Epoch}
}

// keyOf is the evalKey of an event evalKeyOf filled.
func keyOf(ev *train.Event) evalKey {
	if ev.Epoch > 0 {
		return evalKey{epoch: ev.Epoch}
	}
	return evalKey{samples: ev.Samples}
}

// label names an evaluation in a problem.
func (k evalKey) label() string {
	if k.epoch == 0 {
		return fmt.Sprintf("at %d samples", k.samples)
	}
	return strconv.Itoa(k.epoch)
}

// record is the JSON shape of one MLLOG record.
type record struct {
	TimeMS   optNum   `json:"time_ms"`
	Key      string   `json:"key"`
	Value    rawBytes `json:"value"`
	Metadata metadata `json:"metadata"`
}

type metadata struct {
	EpochNum      optNum   `json:"epoch_num"`
	FirstEpochNum optNum   `json:"first_epoch_num"`
	EpochCount    optNum   `json:"epoch_count"`
	SamplesCount  optNum   `json:"samples_count"`
	Status        string   `json:"status"`
	Node          string   `json:"node"`
	Host          string   `json:"host"`
	Rank          optNum   `json:"rank"`
	Trial         optNum   `json:"trial"`
	Chip          optNum   `json:"chip"`
	ID            rawBytes `json:"id"`
	Generation    optNum   `json:"generation"`
	Neurons       optNum   `json:"neurons"`
}

// NewParser returns a parser that calls emit for every event, in the
// order of the stream (an eval_stop is held until its rank's next record,
// to pair it with a following eval_accuracy).
func NewParser(opts Options, emit func(train.Event)) *Parser {
	if opts.MaxLine <= 0 {
		opts.MaxLine = 1 << 20
	}
	if opts.MaxQuoted <= 0 {
		opts.MaxQuoted = 5
	}
	return &Parser{opts: opts, emit: emit, ranks: make(map[int]*rankState)}
}

// Stats returns the counts so far; the slices and map are shared with the
// parser until it is done.
func (p *Parser) Stats() Stats { return p.stats }

// Line parses one line, without its line terminator: the next line of the
// parser's one stream (a quoted line is numbered by the count of lines so
// far). A Writer numbers the lines of its own stream instead.
func (p *Parser) Line(line []byte) { p.lineAt(p.stats.Lines+1, line) }

// lineAt parses line, the n-th of its stream: the number quotes give it.
// Stdout and stderr of one child feed one parser through two Writers,
// whose lines interleave as the pipes are read; numbering each stream's
// own lines makes a quote's number the same whatever that order.
func (p *Parser) lineAt(n int64, line []byte) {
	p.at = n
	p.stats.Lines++
	p.stats.Bytes += int64(len(line)) + 1
	if len(line) > p.opts.MaxLine {
		p.stats.LongLines++
		return
	}
	i := bytes.Index(line, []byte(Marker))
	if i < 0 {
		return
	}
	p.stats.Records++
	prefix, payload := line[:i], line[i+len(Marker):]
	if !utf8.Valid(payload) {
		payload = latin1(p.scratch[:0], payload)
		p.scratch = payload
	}
	p.rec = record{}
	if err := json.Unmarshal(payload, &p.rec); err != nil {
		p.malformed(line, "bad JSON: "+err.Error())
		return
	}
	r := &p.rec
	if r.Key == "" {
		p.malformed(line, `no "key"`)
		return
	}
	if !r.TimeMS.ok || math.Abs(r.TimeMS.v) > 1e15 {
		p.malformed(line, `no usable "time_ms"`)
		return
	}
	rank, ok := prefixRank(prefix)
	if !ok {
		rank = p.opts.Rank
	}
	if m := r.Metadata.Rank; m.ok {
		if m.v < 0 || m.v > 1<<24 {
			p.malformed(line, "metadata.rank out of range")
			return
		}
		rank = int(m.v)
	}
	p.record(line, r, rank)
}

// LineLong records a line that was longer than the limit and skipped by
// the caller's line splitter.
func (p *Parser) LineLong(n int64) {
	p.stats.Lines++
	p.stats.Bytes += n + 1
	p.stats.LongLines++
}

// Close emits the events still held back. Call it at the end of the
// stream.
func (p *Parser) Close() {
	for _, r := range slices.Sorted(maps.Keys(p.ranks)) {
		if st := p.ranks[r]; st.hasPending {
			st.hasPending = false
			p.out(st.pending)
		}
	}
}

func (p *Parser) malformed(line []byte, reason string) {
	p.stats.Malformed++
	if len(p.stats.FirstMalformed) < p.opts.MaxQuoted {
		p.stats.FirstMalformed = append(p.stats.FirstMalformed, Quote{Line: p.at, Reason: bounded(reason), Excerpt: excerpt(line)})
	}
}

func (p *Parser) problem(line []byte, reason string) {
	p.stats.Problems++
	if len(p.stats.FirstProblems) < p.opts.MaxQuoted {
		p.stats.FirstProblems = append(p.stats.FirstProblems, Quote{Line: p.at, Reason: reason, Excerpt: excerpt(line)})
	}
}

func (p *Parser) out(ev train.Event) {
	p.stats.Events++
	if p.emit != nil {
		p.emit(ev)
	}
}

// epoch maps an MLLOG epoch number to the 1-based Event.Epoch.
func (p *Parser) epoch(v optNum) int {
	if !v.ok {
		return 0
	}
	n := int(v.v)
	if !p.epochShiftK {
		p.epochShiftK = true
		if n == 0 {
			p.epochShift = 1
		}
	}
	return n + p.epochShift
}

func (p *Parser) record(line []byte, r *record, rank int) {
	// Whole and fractional milliseconds apart: time_ms * 1e6 would exceed
	// float64's 53-bit mantissa and round to ~256 ns steps.
	whole := math.Floor(r.TimeMS.v)
	ns := int64(whole)*1e6 + int64(math.Round((r.TimeMS.v-whole)*1e6))
	if !p.haveOrigin {
		p.haveOrigin, p.origin = true, ns
	}
	st := p.ranks[rank]
	if st == nil {
		st = &rankState{}
		p.ranks[rank] = st
	}
	md := &r.Metadata
	ev := train.Event{
		Time:  ns - p.origin,
		Wall:  time.Unix(0, ns).UTC(),
		Node:  p.opts.Node,
		Rank:  rank,
		Trial: p.trial,
	}
	if md.Node != "" {
		ev.Node = md.Node
	} else if md.Host != "" {
		ev.Node = md.Host
	}
	if md.Trial.ok {
		ev.Trial = int(md.Trial.v)
	}
	// A held eval_stop goes out before anything else of its rank, with the
	// accuracy if this record is it.
	if st.hasPending {
		st.hasPending = false
		if r.Key == "eval_accuracy" {
			var acc train.Event
			same := true
			switch {
			case md.EpochNum.ok || md.SamplesCount.ok:
				same = p.evalKeyOf(md, st, false, &acc) == keyOf(&st.pending)
			}
			if v, ok := number(r.Value); ok && same {
				st.pending.Value = &v
			}
		}
		p.out(st.pending)
	}
	switch r.Key {
	case "init_start":
		ev.Kind = train.InitStart
	case "init_stop":
		ev.Kind = train.InitEnd
	case "run_start":
		ev.Kind = train.TrainStart
		if st.runStarted {
			p.problem(line, fmt.Sprintf("second run_start on rank %d", rank))
		}
		st.runStarted = true
	case "run_stop":
		ev.Kind = train.TrainEnd
		ev.Status = md.Status
		if !st.runStarted {
			p.problem(line, fmt.Sprintf("run_stop before run_start on rank %d", rank))
		} else if st.runStopped {
			p.problem(line, fmt.Sprintf("second run_stop on rank %d", rank))
		}
		st.runStopped = true
	case "epoch_start", "epoch_stop":
		ev.Epoch = p.epoch(md.EpochNum)
		if r.Key == "epoch_start" {
			ev.Kind = train.EpochStart
			st.openEpochs = open(st.openEpochs, ev.Epoch)
		} else {
			ev.Kind = train.EpochEnd
			if md.SamplesCount.ok {
				ev.Count = int64(md.SamplesCount.v)
			}
			if !closeOpen(st.openEpochs, ev.Epoch) {
				p.problem(line, fmt.Sprintf("epoch %d ends before it starts on rank %d", ev.Epoch, rank))
			}
		}
	case "block_start", "block_stop":
		if r.Key == "block_start" {
			ev.Kind = train.BlockStart
			st.blocks++
		} else {
			ev.Kind = train.BlockEnd
		}
		if md.FirstEpochNum.ok {
			ev.Epoch = p.epoch(md.FirstEpochNum)
		} else {
			ev.Epoch = max(st.blocks, 1)
		}
		switch {
		case md.EpochCount.ok:
			ev.Count = int64(md.EpochCount.v)
		case md.SamplesCount.ok:
			ev.Count = int64(md.SamplesCount.v)
		}
		if md.SamplesCount.ok {
			ev.Samples = int64(md.SamplesCount.v)
		}
	case "eval_start":
		ev.Kind = train.ValidationStart
		st.openEvals = open(st.openEvals, p.evalKeyOf(md, st, true, &ev))
	case "eval_stop":
		ev.Kind = train.ValidationEnd
		k := p.evalKeyOf(md, st, false, &ev)
		if !closeOpen(st.openEvals, k) {
			p.problem(line, fmt.Sprintf("evaluation %s ends before it starts on rank %d", k.label(), rank))
		}
		if v, ok := st.early[k]; ok {
			ev.Value = &v
			delete(st.early, k)
		} else {
			st.pending, st.hasPending = ev, true
			return
		}
	case "eval_accuracy":
		v, ok := number(r.Value)
		if !ok {
			p.malformed(line, "eval_accuracy value is not a number")
			return
		}
		ev.Kind = train.Accuracy
		k := p.evalKeyOf(md, st, false, &ev)
		ev.Value = &v
		if st.openEvals[k] {
			if st.early == nil {
				st.early = make(map[evalKey]float64)
			}
			if len(st.early) < 1024 {
				st.early[k] = v
			}
		}
	case "train_samples", "eval_samples":
		v, ok := number(r.Value)
		if !ok {
			p.malformed(line, r.Key+" value is not a number")
			return
		}
		ev.Kind = train.TrainSamples
		if r.Key == "eval_samples" {
			ev.Kind = train.EvalSamples
		}
		ev.Count = int64(v)
	case "power_reading", "aimeter_power", "aimeter_utilization":
		v, ok := number(r.Value)
		if !ok {
			p.malformed(line, r.Key+" value is not a number")
			return
		}
		ev.Kind = train.Power
		if r.Key == "aimeter_utilization" {
			ev.Kind = train.Utilization
			if md.Chip.ok {
				ev.Chip = int(md.Chip.v)
			}
		}
		ev.Value = &v
	case "aimeter_data_read_start":
		ev.Kind = train.DataReadStart
	case "aimeter_data_read_stop":
		ev.Kind = train.DataReadEnd
	case "aimeter_accelerator_start":
		ev.Kind = train.AcceleratorStart
	case "aimeter_conversion_start":
		ev.Kind = train.ConversionStart
	case "aimeter_conversion_stop":
		ev.Kind = train.ConversionEnd
	case "aimeter_persist_start":
		ev.Kind = train.PersistStart
	case "aimeter_persist_stop":
		ev.Kind = train.PersistEnd
	case "aimeter_send", "aimeter_receive":
		ev.Kind = train.Send
		if r.Key == "aimeter_receive" {
			ev.Kind = train.Receive
		}
		id, ok := idOf(md.ID)
		if !ok {
			p.malformed(line, r.Key+" has no metadata.id")
			return
		}
		ev.ID = id
	case "aimeter_trial_start":
		ev.Kind = train.TrialStart
		if md.Trial.ok {
			p.trial = int(md.Trial.v)
		} else {
			p.trial++
		}
		ev.Trial = p.trial
		// A new trial starts the order checks afresh.
		for _, s := range p.ranks {
			s.runStarted, s.runStopped = false, false
			clear(s.openEpochs)
			clear(s.openEvals)
		}
	case "aimeter_trial_stop":
		ev.Kind = train.TrialEnd
		ev.Status = md.Status
		p.trial = 0
	case "aimeter_generation_start", "aimeter_generation_stop":
		ev.Kind = train.GenerationStart
		if r.Key == "aimeter_generation_stop" {
			ev.Kind = train.GenerationEnd
		}
		if md.Generation.ok {
			ev.Epoch = int(md.Generation.v)
		}
		if md.Neurons.ok {
			ev.Count = int64(md.Neurons.v)
		}
	default:
		p.stats.Ignored++
		if p.stats.Info == nil {
			p.stats.Info = make(map[string]string)
		}
		if _, seen := p.stats.Info[r.Key]; !seen && len(p.stats.Info) < 64 && len(r.Key) <= 100 {
			p.stats.Info[r.Key] = bounded(string(r.Value))
		}
		return
	}
	p.out(ev)
}

// open marks epoch n open in m, making m when needed. The map is bounded:
// a log that never closes its epochs stops being tracked past 4096.
func open[K comparable](m map[K]bool, n K) map[K]bool {
	if m == nil {
		m = make(map[K]bool)
	}
	if len(m) < 4096 {
		m[n] = true
	}
	return m
}

// closeOpen closes epoch n, saying whether it was open.
func closeOpen[K comparable](m map[K]bool, n K) bool {
	if !m[n] {
		return false
	}
	delete(m, n)
	return true
}

// optNum is an optional JSON number, decoded without allocating. null
// leaves it unset; a value that is not a finite number is an error.
type optNum struct {
	v  float64
	ok bool
}

// UnmarshalJSON reads a number or null.
func (n *optNum) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = optNum{}
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("not a finite number: %.40s", b)
	}
	*n = optNum{v, true}
	return nil
}

// rawBytes is a JSON value kept as its text. Unlike json.RawMessage it
// does not copy: it refers to the record's bytes, and is used only while
// the record is handled.
type rawBytes []byte

// UnmarshalJSON keeps b.
func (r *rawBytes) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// idOf reads a transfer id: a JSON string or number.
func idOf(raw rawBytes) (string, bool) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", false
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return bounded(s), true
	}
	v, ok := number(raw)
	if !ok {
		return "", false
	}
	return strconv.FormatFloat(v, 'f', -1, 64), true
}

// number reads a JSON number, or a string holding one, as MLLOG values are
// sometimes quoted.
func number(raw []byte) (float64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0, false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
		raw = []byte(s)
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// prefixRank reads a rank from a launcher's line prefix: "3: ",
// "[0,3]<stdout>:", "[rank3]:" or "[default3]:".
func prefixRank(prefix []byte) (int, bool) {
	s := bytes.TrimSpace(prefix)
	if len(s) == 0 {
		return 0, false
	}
	if s[0] == '[' {
		end := bytes.IndexByte(s, ']')
		if end < 0 {
			return 0, false
		}
		in := s[1:end]
		if c := bytes.LastIndexByte(in, ','); c >= 0 {
			return atoi(in[c+1:])
		}
		j := len(in)
		for j > 0 && in[j-1] >= '0' && in[j-1] <= '9' {
			j--
		}
		return atoi(in[j:])
	}
	c := bytes.IndexByte(s, ':')
	if c <= 0 {
		return 0, false
	}
	return atoi(s[:c])
}

// atoi parses a small non-negative decimal.
func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// latin1 appends b, read as latin-1, to dst as UTF-8.
func latin1(dst, b []byte) []byte {
	for _, c := range b {
		dst = utf8.AppendRune(dst, rune(c))
	}
	return dst
}

// excerpt is the start of a line, valid UTF-8, at most 200 bytes.
func excerpt(line []byte) string {
	if len(line) > 200 {
		line = line[:200]
	}
	if !utf8.Valid(line) {
		return string(latin1(nil, line))
	}
	return string(line)
}

// bounded cuts s to 200 bytes.
func bounded(s string) string {
	if len(s) > 200 {
		return s[:200]
	}
	return s
}

// Parse reads r to its end, emitting events as they are parsed, and
// returns the counts. Memory is bounded by Options.MaxLine whatever the
// stream's length (the events go to emit). The error is r's, if any.
func Parse(r io.Reader, opts Options, emit func(train.Event)) (Stats, error) {
	w := NewWriter(NewParser(opts, emit))
	_, err := io.Copy(w, r)
	w.Close()
	return w.p.Stats(), err
}

// ParseAll reads r to its end and returns its events in stream order.
func ParseAll(r io.Reader, opts Options) ([]train.Event, Stats, error) {
	var evs []train.Event
	st, err := Parse(r, opts, func(e train.Event) { evs = append(evs, e) })
	return evs, st, err
}
