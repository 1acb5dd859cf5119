package train

import (
	"slices"
	"sync"
	"time"
)

// RecorderOptions configure a Recorder. The zero value records a single
// process: node "", rank 0.
type RecorderOptions struct {
	// Node is the host name stamped on every event. "": none (a single
	// machine).
	Node string
	// Rank is the rank stamped on every event. 0: rank 0.
	Rank int
	// Capacity is the number of events to make room for at the start. 0:
	// 256. The recorder grows beyond it as needed.
	Capacity int
}

// valueChunk is how many values a Recorder allocates at a time for the
// Value pointers of its events.
const valueChunk = 256

// Recorder records the training events of a Go training loop
// (GB-6.7.1-b). It is safe for concurrent use. Every event is timed on one
// monotonic clock: the Recorder reads the wall clock once, at NewRecorder,
// and stamps each event with the monotonic time elapsed since (Time and
// Mono) and the wall time derived from it (Wall), so that a wall-clock step
// cannot distort a metric.
//
// Recording an event takes a lock and appends to a slice; values (accuracy,
// utilisation, power) are stored in chunks allocated 256 at a time, so that
// a steady loop allocates only when the slice grows.
type Recorder struct {
	origin time.Time
	node   string
	rank   int

	mu     sync.Mutex
	events []Event
	values []float64
}

// NewRecorder starts a recorder whose clock starts now.
func NewRecorder(opts RecorderOptions) *Recorder {
	c := opts.Capacity
	if c <= 0 {
		c = 256
	}
	return &Recorder{origin: time.Now(), node: opts.Node, rank: opts.Rank, events: make([]Event, 0, c)}
}

// Origin is the wall-clock time of the recorder's zero.
func (r *Recorder) Origin() time.Time { return r.origin }

// record stamps e with the time and, when its Node is "", the recorder's
// node, and appends it; v, when not nil, becomes the event's Value.
func (r *Recorder) record(e Event, v *float64) {
	d := time.Since(r.origin)
	e.Time, e.Mono, e.Wall = int64(d), int64(d), r.origin.Add(d)
	if e.Node == "" {
		e.Node = r.node
	}
	r.mu.Lock()
	if v != nil {
		if len(r.values) == cap(r.values) {
			r.values = make([]float64, 0, valueChunk)
		}
		r.values = append(r.values, *v)
		e.Value = &r.values[len(r.values)-1]
	}
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Mark records an event of any kind now, for trial and index (epoch,
// validation or generation number; 0 when it does not apply). Use Record
// for the fields Mark does not set.
func (r *Recorder) Mark(kind Kind, trial, index int) {
	r.record(Event{Kind: kind, Rank: r.rank, Trial: trial, Epoch: index}, nil)
}

// Record records e now: its Time, Mono and Wall are overwritten, and Node
// and Rank, when zero, are the recorder's.
func (r *Recorder) Record(e Event) {
	var v *float64
	if e.Value != nil {
		x := *e.Value
		v = &x
		e.Value = nil
	}
	if e.Rank == 0 {
		e.Rank = r.rank
	}
	r.record(e, v)
}

// DataReadStart marks t_S = t_L1, just before the training data are read
// (GB-6.6.2-T6-TT, GB-6.6.2-T6-TL).
func (r *Recorder) DataReadStart(trial int) { r.Mark(DataReadStart, trial, 0) }

// DataReadEnd marks t_L2, the data read and usable on this node.
func (r *Recorder) DataReadEnd(trial int) { r.Mark(DataReadEnd, trial, 0) }

// TrialStart marks the start of a trial (GB-6.7.1-h-1).
func (r *Recorder) TrialStart(trial int) { r.Mark(TrialStart, trial, 0) }

// TrialEnd marks the end of a trial with its status ("success" when the
// quality target was reached, "aborted" otherwise).
func (r *Recorder) TrialEnd(trial int, status string) {
	r.record(Event{Kind: TrialEnd, Rank: r.rank, Trial: trial, Status: status}, nil)
}

// TrainStart marks t_w1 = t_TR1, just before training starts.
func (r *Recorder) TrainStart(trial int) { r.Mark(TrainStart, trial, 0) }

// AcceleratorStart marks accelerator rank entering the training state
// (GB-6.6.2-T6-TW, IN-27); the event carries rank, not the recorder's.
func (r *Recorder) AcceleratorStart(trial, rank int) {
	r.record(Event{Kind: AcceleratorStart, Trial: trial, Rank: rank}, nil)
}

// TrainEnd marks t_TR2, training exiting, with its status.
func (r *Recorder) TrainEnd(trial int, status string) {
	r.record(Event{Kind: TrainEnd, Rank: r.rank, Trial: trial, Status: status}, nil)
}

// EpochStart marks t_EP(i)-1.
func (r *Recorder) EpochStart(trial, epoch int) { r.Mark(EpochStart, trial, epoch) }

// EpochEnd marks t_EP(i)-2 with the samples (or tokens) processed.
func (r *Recorder) EpochEnd(trial, epoch int, samples int64) {
	r.record(Event{Kind: EpochEnd, Rank: r.rank, Trial: trial, Epoch: epoch, Count: samples}, nil)
}

// ValidationStart marks t_V(j)-1.
func (r *Recorder) ValidationStart(trial, j int) { r.Mark(ValidationStart, trial, j) }

// Validation marks t_V(j)-2 with the accuracy reached.
func (r *Recorder) Validation(trial, j int, accuracy float64) {
	r.record(Event{Kind: ValidationEnd, Rank: r.rank, Trial: trial, Epoch: j}, &accuracy)
}

// ConversionStart and ConversionEnd mark t_CV1 and t_CV2.
func (r *Recorder) ConversionStart(trial int) { r.Mark(ConversionStart, trial, 0) }

// ConversionEnd marks t_CV2.
func (r *Recorder) ConversionEnd(trial int) { r.Mark(ConversionEnd, trial, 0) }

// PersistStart marks t_P1.
func (r *Recorder) PersistStart(trial int) { r.Mark(PersistStart, trial, 0) }

// PersistEnd marks t_P2 = t_E, the model on non-volatile storage.
func (r *Recorder) PersistEnd(trial int) { r.Mark(PersistEnd, trial, 0) }

// Send marks t_NC1 of transfer id on this node.
func (r *Recorder) Send(id string) { r.record(Event{Kind: Send, Rank: r.rank, ID: id}, nil) }

// Receive marks t_NC2 of transfer id on this node.
func (r *Recorder) Receive(id string) { r.record(Event{Kind: Receive, Rank: r.rank, ID: id}, nil) }

// GenerationStart marks the start of AutoML mutation generation gen
// (GB-B.1-c).
func (r *Recorder) GenerationStart(trial, gen int) { r.Mark(GenerationStart, trial, gen) }

// GenerationEnd marks the end of mutation gen with the neurons of the
// resulting model (GB-B.2-a); generation 0 is the initial model.
func (r *Recorder) GenerationEnd(trial, gen int, neurons int64) {
	r.record(Event{Kind: GenerationEnd, Rank: r.rank, Trial: trial, Epoch: gen, Count: neurons}, nil)
}

// Utilization records a utilisation sample of accelerator chip, a
// fraction in [0, 1] (GB-6.6.5-T9-server).
func (r *Recorder) Utilization(chip int, fraction float64) {
	r.record(Event{Kind: Utilization, Rank: r.rank, Chip: chip}, &fraction)
}

// Power records a whole-machine power sample in watts (GB-6.6.3-T7-PTR).
func (r *Recorder) Power(watts float64) {
	r.record(Event{Kind: Power, Rank: r.rank}, &watts)
}

// Len returns the number of events recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// Events returns a copy of the events recorded so far, in the order they
// were recorded; their Values are copies too.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	out := slices.Clone(r.events)
	r.mu.Unlock()
	for i := range out {
		if out[i].Value != nil {
			v := *out[i].Value
			out[i].Value = &v
		}
	}
	return out
}
