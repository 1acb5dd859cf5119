// Package train is the GB/T 45087 training test (clause 6, Annexes B and
// E.1): a vocabulary of training events covering every timing point of
// Table 6, the AutoML generations of Annex B and the trials of 6.2, the
// metrics computed from them (Tables 6–9, E.1), and the training log and
// result files. Events come from a Go training loop (the reference model's
// trainer), from the :::MLLOG lines of an MLPerf Training program, or from
// the ranks of a distributed job posting to an HTTP endpoint; all three end
// as the same []Event, and every metric is a function of them.
package train

import "time"

// Kind is the kind of a training event.
type Kind string

// The event vocabulary. Start/end pairs give the timing points of Table 6
// of GB/T 45087; the comment names the point.
const (
	// DataReadStart is t_S = t_L1: just before the command that reads the
	// training data (GB-6.6.2-T6-TT, GB-6.6.2-T6-TL).
	DataReadStart Kind = "data_read_start"
	// DataReadEnd is t_L2 on one node: its training data are read and
	// usable. With data parallelism T_L ends at the last node's (IN-28).
	DataReadEnd Kind = "data_read_end"
	// TrainStart is t_w1 = t_TR1: just before training starts.
	TrainStart Kind = "train_start"
	// AcceleratorStart is one accelerator (rank) entering the training
	// state; t_w2 is the last of them (GB-6.6.2-T6-TW, IN-27).
	AcceleratorStart Kind = "accelerator_start"
	// EpochStart and EpochEnd are t_EP(i)-1 and t_EP(i)-2; Epoch is i and
	// EpochEnd's Count is the samples (or tokens) the node processed.
	EpochStart Kind = "epoch_start"
	EpochEnd   Kind = "epoch_end"
	// ValidationStart and ValidationEnd are t_V(j)-1 and t_V(j)-2; Epoch
	// is j and ValidationEnd's Value the accuracy reached, when known.
	ValidationStart Kind = "validation_start"
	ValidationEnd   Kind = "validation_end"
	// TrainEnd is t_TR2: training exits. Status says how ("success",
	// "aborted", or the MLLOG run_stop status).
	TrainEnd Kind = "train_end"
	// ConversionStart and ConversionEnd are t_CV1 and t_CV2.
	ConversionStart Kind = "conversion_start"
	ConversionEnd   Kind = "conversion_end"
	// PersistStart and PersistEnd are t_P1 and t_P2; PersistEnd is also
	// t_E, the end of T_T.
	PersistStart Kind = "persist_start"
	PersistEnd   Kind = "persist_end"
	// Send and Receive are t_NC1 on the source node and t_NC2 on the
	// target node of one transfer, paired by ID (GB-6.6.2-T6-TNC).
	Send    Kind = "send"
	Receive Kind = "receive"
	// GenerationStart and GenerationEnd bound one AutoML generation
	// (Annex B); Epoch is the generation number, Count the neurons.
	GenerationStart Kind = "generation_start"
	GenerationEnd   Kind = "generation_end"
	// TrialStart and TrialEnd bound one trial (6.2: 5 or 3 trials per
	// scenario, each ending at the quality threshold or the step limit).
	TrialStart Kind = "trial_start"
	TrialEnd   Kind = "trial_end"
	// Utilization is one utilisation sample of accelerator Chip, Value in
	// [0, 1] (GB-6.6.5-T9-server).
	Utilization Kind = "utilization"
	// Power is one whole-machine power sample of Node, Value in watts
	// (GB-6.6.3-T7-PTR).
	Power Kind = "power"
)

// Event is one measurement point of a training run.
type Event struct {
	Kind Kind `json:"kind"`
	// Time is the event's time in nanoseconds on the run's clock: from the
	// collector's origin, after correcting the emitter's clock offset.
	// Every metric uses it.
	Time int64 `json:"t_ns"`
	// Mono is the emitter's own monotonic reading in nanoseconds (its
	// origin is its own); Wall its wall clock. Both are kept as reported,
	// so that clock offsets can be re-estimated from the raw events.
	Mono int64     `json:"mono_ns,omitempty"`
	Wall time.Time `json:"wall"`
	// Node and Rank say where the event happened: a host name and the
	// rank of a distributed job (0 for a single process).
	Node string `json:"node,omitempty"`
	Rank int    `json:"rank"`
	// Trial is the trial number (1-based; 0 outside trials).
	Trial int `json:"trial,omitempty"`
	// Epoch is the epoch, validation or generation number i or j
	// (1-based); 0 when it does not apply, and 0 for a validation or
	// block keyed by Samples instead.
	Epoch int `json:"epoch,omitempty"`
	// Samples is the training samples (or tokens) processed when the
	// event was logged: MLLOG's metadata.samples_count on evaluations,
	// eval_accuracy and blocks. Logs of LLM benchmarks (llama2_70b_lora,
	// gpt3, …) have no epochs: their validations carry Epoch 0 and are
	// told apart by Samples, which then is their key (a validation with
	// an Epoch is keyed by it alone). 0: not logged.
	Samples int64 `json:"samples,omitempty"`
	// Chip is the accelerator of a Utilization sample.
	Chip int `json:"chip,omitempty"`
	// Count is samples or tokens processed (EpochEnd) or neurons
	// (GenerationEnd).
	Count int64 `json:"count,omitempty"`
	// Value is an accuracy (ValidationEnd), a utilisation fraction or a
	// power in watts, when the kind has one.
	Value *float64 `json:"value,omitempty"`
	// ID pairs a Send with its Receive; Status is the outcome of a
	// TrainEnd or TrialEnd.
	ID     string `json:"id,omitempty"`
	Status string `json:"status,omitempty"`
}
