package train

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"aimeter/stats"
)

// Config is what Compute needs beyond the events. The zero value computes
// every time metric and leaves the ones that need a declared size absent.
type Config struct {
	// TrainingSetSize is numberof(training set) in samples, or
	// numberoftokens(training set) in tokens when TextGeneration is set
	// (GB-6.6.4-T8-Th, GB-6.6.4-T8-FNa), for the whole job. 0: taken from
	// the trial's TrainSamples event (MLLOG train_samples), else from the
	// Count of the EpochEnd events (summed over ranks, averaged over
	// epochs); Th is absent when none is known.
	TrainingSetSize int64 `json:"training_set_size,omitempty"`
	// NodeSetSize is the size of each node's local training set (IN-32),
	// by node name. nil or a missing node: the node's EpochEnd counts,
	// else TrainingSetSize divided by the number of nodes.
	NodeSetSize map[string]int64 `json:"node_set_size,omitempty"`
	// TextGeneration says the workload generates text, so that sizes and
	// throughputs are in tokens (tokens/s) rather than samples
	// (GB-6.6.4-units). false: samples/s.
	TextGeneration bool `json:"text_generation,omitempty"`
	// TrainingSetMB is sizeof(training set) in megabytes (10^6 bytes) for
	// the energy efficiency of E.1.1 (GB-E.1.1-Es). 0: E_s and E_CL are
	// absent.
	TrainingSetMB float64 `json:"training_set_mb,omitempty"`
	// Workloads are the scenarios of the effective computing power Th-bar
	// (GB-6.6.4-T8-ThBar). nil: Th-bar is absent.
	Workloads []Workload `json:"workloads,omitempty"`
	// Alpha is the adjustment coefficient α of Th-bar. 0: 100
	// (GB-6.6.4-T8-ThBar).
	Alpha float64 `json:"alpha,omitempty"`
	// Epochs is the number of epochs a trial is expected to run. 0: not
	// checked; otherwise a trial with another number of complete epochs
	// gets a warning.
	Epochs int `json:"epochs,omitempty"`
	// Target is the quality target of the scenario (IN-14), on the 0–1
	// scale of the accuracies (IN-24). nil: no trial is judged against it.
	Target *Target `json:"target,omitempty"`
	// MLPerfDrop is how many of the fastest and of the slowest trials the
	// olympic average drops, as mlperf-logging's result summarizer does.
	// 0: 1.
	MLPerfDrop int `json:"mlperf_drop,omitempty"`
	// MLPerfBenchmark is the MLPerf Training benchmark the trials ran (the
	// logs' submission_benchmark), and MLPerfRuns the number of runs its
	// rules require (LookupMLPerf fills both, with MLPerfDrop and Target,
	// in aimeter train). "" and 0: not an MLPerf benchmark, or not known;
	// the score then carries no note on the run count.
	MLPerfBenchmark string `json:"mlperf_benchmark,omitempty"`
	MLPerfRuns      int    `json:"mlperf_runs,omitempty"`
}

// Target is a quality threshold: a trial reaches it when its final
// accuracy is strictly above (or, LowerIsBetter, strictly below) Value
// (IN-14).
type Target struct {
	// Metric names the quality metric ("Top1 accuracy", "WER"); "" is
	// allowed.
	Metric string `json:"metric,omitempty"`
	// Value is the threshold: on the 0–1 scale for GB/T's scenarios
	// (IN-24); MLPerf's LLM benchmarks set a loss or a log-perplexity
	// (gpt3: 2.69), which LowerIsBetter marks.
	Value float64 `json:"value"`
	// LowerIsBetter is true for metrics such as WER; E.1.2 then uses
	// 1 − a (GB-E.1.2-FNa). false: higher is better.
	LowerIsBetter bool `json:"lower_is_better,omitempty"`
	// Inclusive says the target is met at equality (a ≥ Value, or a ≤
	// Value when lower is better), as MLPerf Training's rules write their
	// targets (LookupMLPerf). false: strictly better than Value, as GB/T's
	// thresholds are read (IN-24).
	Inclusive bool `json:"inclusive,omitempty"`
}

// String writes the target as a comparison: "top-1 accuracy > 0.759",
// "eval loss ≤ 0.925".
func (t Target) String() string {
	op := ">"
	switch {
	case t.LowerIsBetter && t.Inclusive:
		op = "≤"
	case t.LowerIsBetter:
		op = "<"
	case t.Inclusive:
		op = "≥"
	}
	name := t.Metric
	if name == "" {
		name = "accuracy"
	}
	return name + " " + op + " " + strconv.FormatFloat(t.Value, 'g', -1, 64)
}

// Reached reports whether accuracy a meets the target: strictly better
// than Value, or also equal to it when Inclusive.
func (t Target) Reached(a float64) bool {
	if t.Inclusive && a == t.Value {
		return true
	}
	if t.LowerIsBetter {
		return a < t.Value
	}
	return a > t.Value
}

// Workload is one scenario s of the effective computing power
// (GB-6.6.4-T8-ThBar, GB-6.6.4-T8-FNb).
type Workload struct {
	// Name identifies the scenario (a catalogue ID such as "T1-1").
	Name string `json:"name"`
	// Throughput is the SUT's throughput Th_s. 0: this run's Th (the mean
	// over its trials).
	Throughput float64 `json:"throughput,omitempty"`
	// Baseline is the reference system's throughput Th*_s, > 0.
	Baseline float64 `json:"baseline"`
	// Weight is τ_s in [0, 1]; the weights should sum to 1 (IN-33).
	Weight float64 `json:"weight"`
}

// Severity says how serious a Problem is.
type Severity string

// The two severities. Neither stops Compute.
const (
	// Error marks events that contradict each other (an epoch that ends
	// before it starts, a second TrainStart); the offending event is left
	// out of the metrics.
	Error Severity = "error"
	// Warning marks an unexpected but usable ordering (IN-30) or a metric
	// that could not be computed as the standard asks.
	Warning Severity = "warning"
)

// Problem is something wrong with the events, reported rather than
// silently accepted.
type Problem struct {
	Severity Severity `json:"severity"`
	// Message says what is wrong, in plain words.
	Message string `json:"message"`
	// Event is the event concerned, when there is one.
	Event *Event `json:"event,omitempty"`
}

func (p Problem) String() string {
	if p.Event != nil {
		return fmt.Sprintf("%s: %s (%s at %d ns, node %q rank %d)", p.Severity, p.Message, p.Event.Kind, p.Event.Time, p.Event.Node, p.Event.Rank)
	}
	return fmt.Sprintf("%s: %s", p.Severity, p.Message)
}

// Metrics are the training metrics of one run: Tables 6–9 and Annex E.1 of
// GB/T 45087 per trial, their summaries over trials, and the MLPerf
// time-to-train score. A metric whose events are missing is nil (written
// "--"), never zero (GB-6.6.2-T6-FNd, IN-29).
type Metrics struct {
	// Unit is the throughput unit: "samples/s" or "tokens/s".
	Unit string `json:"throughput_unit"`
	// Trials holds one entry per trial, in trial order.
	Trials []TrialMetrics `json:"trials"`
	// MeanTTRMs is the mean of T_TR over the trials that have it.
	MeanTTRMs *float64 `json:"mean_t_tr_ms,omitempty"`
	// Throughput is the mean Th over trials, in Unit.
	Throughput *float64 `json:"th,omitempty"`
	// ClusterThroughput is the mean Th_CL over trials, in Unit.
	ClusterThroughput *float64 `json:"th_cl,omitempty"`
	// ThBar is the effective computing power (GB-6.6.4-T8-ThBar).
	ThBar *float64 `json:"th_bar,omitempty"`
	// TrainingEfficiency is the E.1.2 training efficiency over all trials:
	// mean final accuracy ÷ mean energy per trial in kWh (IN-84), per kWh.
	// With several nodes it is the cluster value (GB-E.1.2-cluster).
	TrainingEfficiency *float64 `json:"training_efficiency_per_kwh,omitempty"`
	// Transfers are the inter-node transfers T_NC, one per Send/Receive
	// pair (GB-6.6.2-T6-TNC); NC summarises them.
	Transfers []Transfer `json:"transfers,omitempty"`
	NC        *Summary   `json:"t_nc_ms,omitempty"`
	// MLPerf is the MLPerf time-to-train score over the trials.
	MLPerf MLPerfScore `json:"mlperf"`
	// Problems lists what was wrong with the events.
	Problems []Problem `json:"problems,omitempty"`
}

// TrialMetrics are the metrics of one trial. Times are in milliseconds.
type TrialMetrics struct {
	Trial int `json:"trial"`
	// Status is the TrainEnd status ("" when none was given).
	Status string `json:"status,omitempty"`
	// TrialStatus is the TrialEnd status: "success", or why the trial
	// failed as a whole, such as "failed: the program exited with status
	// 1" (aimeter train --trials records one for every run of the
	// program). "" when no TrialEnd gave one.
	TrialStatus string `json:"trial_status,omitempty"`
	// TTMs is T_T = t_E − t_S: first DataReadStart to last PersistEnd
	// (GB-6.6.2-T6-TT).
	TTMs *float64 `json:"t_t_ms,omitempty"`
	// TLMs is T_L: first DataReadStart to the last node's DataReadEnd
	// (GB-6.6.2-T6-TL, IN-28).
	TLMs *float64 `json:"t_l_ms,omitempty"`
	// TWMs is T_w: TrainStart to the last AcceleratorStart
	// (GB-6.6.2-T6-TW, IN-27).
	TWMs *float64 `json:"t_w_ms,omitempty"`
	// TTRMs is T_TR: first TrainStart to last TrainEnd (GB-6.6.2-T6-TTR).
	TTRMs *float64 `json:"t_tr_ms,omitempty"`
	// TCVMs is T_CV (GB-6.6.2-T6-TCV); TPMs is T_P (GB-6.6.2-T6-TP).
	TCVMs *float64 `json:"t_cv_ms,omitempty"`
	TPMs  *float64 `json:"t_p_ms,omitempty"`
	// Epochs are the complete epochs, in epoch order (GB-6.6.2-T6-TEP).
	Epochs []EpochMetrics `json:"epochs,omitempty"`
	// Validations are the complete validations, in order (GB-6.6.2-T6-TV).
	Validations []ValidationMetrics `json:"validations,omitempty"`
	// TEPMeanMs is the mean epoch time T_EP.
	TEPMeanMs *float64 `json:"t_ep_mean_ms,omitempty"`
	// Throughput is Th = numberof(training set) / T_EP (GB-6.6.4-T8-Th).
	Throughput *float64 `json:"th,omitempty"`
	// TrainingSetSize is the numberof(training set) Th used, and
	// TrainingSetFrom where it came from: "config", "train_samples" (the
	// MLLOG key) or "epoch counts". 0 and "": unknown.
	TrainingSetSize int64  `json:"training_set_size,omitempty"`
	TrainingSetFrom string `json:"training_set_from,omitempty"`
	// TEPFromSamples says that no epoch was logged and T_EP (TEPMeanMs)
	// was derived from the samples count of the last validation or block
	// (LLM benchmarks log samples_count, not epochs): T_EP = (t − t_TR1) ×
	// numberof(training set) ÷ samples_count, t being that event's time.
	TEPFromSamples bool `json:"t_ep_from_samples,omitempty"`
	// TEPFromBlocks says that no epoch was logged and T_EP (TEPMeanMs) is
	// the time of the trial's blocks over the epochs they hold: MLPerf's
	// block_start/block_stop with first_epoch_num and epoch_count, as
	// ResNet-50 logs evaluate every few epochs (Σ block durations ÷ Σ
	// epoch_count).
	TEPFromBlocks bool `json:"t_ep_from_blocks,omitempty"`
	// NotAvailable says, in one line each, why a figure of this trial is
	// absent ("--"), by its JSON name ("th", "t_tr_ms", …).
	NotAvailable map[string]string `json:"not_available,omitempty"`
	// ClusterThroughput is Th_CL = Σ_n Th_n (GB-6.6.4-T8-ThCL, IN-32).
	ClusterThroughput *float64 `json:"th_cl,omitempty"`
	// Nodes are the per-node figures, by node name.
	Nodes []NodeMetrics `json:"nodes,omitempty"`
	// ClusterPowerW is P_CTR = Σ_i P_TR-i (GB-6.6.3-T7-PCTR).
	ClusterPowerW *float64 `json:"p_ctr_w,omitempty"`
	// EnergyKWh is the energy of all nodes over T_TR: Σ_i P_TR-i × T_TR
	// (GB-E.1.2-FNb, IN-84).
	EnergyKWh *float64 `json:"energy_kwh,omitempty"`
	// EnergyEfficiency is E_s (one node, GB-E.1.1-Es) or E_CL (several,
	// GB-E.1.1-ECL) in MB/J; EnergyEfficiencyMBPerKWh is the same ×3.6e6
	// (IN-83).
	EnergyEfficiency         *float64 `json:"energy_efficiency_mb_per_j,omitempty"`
	EnergyEfficiencyMBPerKWh *float64 `json:"energy_efficiency_mb_per_kwh,omitempty"`
	// FinalAccuracy is the accuracy of the trial's last validation.
	FinalAccuracy *float64 `json:"final_accuracy,omitempty"`
	// ReachedTarget says whether FinalAccuracy meets Config.Target; nil
	// when either is unknown.
	ReachedTarget *bool `json:"reached_target,omitempty"`
	// TrainingEfficiency is accuracy ÷ EnergyKWh, per kWh (GB-E.1.2-single,
	// GB-E.1.2-cluster; 1 − a for a lower-is-better metric, GB-E.1.2-FNa).
	TrainingEfficiency *float64 `json:"training_efficiency_per_kwh,omitempty"`
	// Utilization is the cluster's accelerator utilisation p over the
	// epochs (GB-6.6.5-T9-cluster), a fraction; UtilizationValid is false
	// when some chip had fewer than 3 samples in some epoch (IN-34).
	Utilization      *float64 `json:"utilization,omitempty"`
	UtilizationValid bool     `json:"utilization_valid,omitempty"`
	// TimeToTrainMin is the MLPerf time-to-train in minutes, as
	// mlperf-logging's result_summarizer reads it: run_stop − run_start
	// in ms, ÷ 60 ÷ 1000, run_stop being the first TrainEnd and run_start
	// the last TrainStart at or before it. With one rank it is T_TR; with
	// several ranks that each log run_start and run_stop it can be
	// shorter than T_TR, which spans the earliest start and the latest
	// end.
	TimeToTrainMin *float64 `json:"time_to_train_min,omitempty"`
	// MLPerfFailure says why the trial does not count as a converged run
	// in the MLPerf score (a failed trial counts among the slowest); ""
	// when it does.
	MLPerfFailure string `json:"mlperf_failure,omitempty"`
}

// EpochMetrics is epoch i of a trial.
type EpochMetrics struct {
	Epoch int `json:"epoch"`
	// TEPMs is T_EP(i): the first rank's start to the last rank's end.
	TEPMs float64 `json:"t_ep_ms"`
	// Samples is the Count of the epoch's EpochEnd events, summed over
	// ranks (0 when none was given).
	Samples int64 `json:"samples,omitempty"`
	// Throughput is Samples ÷ T_EP(i), when Samples is known.
	Throughput *float64 `json:"th,omitempty"`
	// Accuracy is the accuracy of validation i, when there is one.
	Accuracy *float64 `json:"accuracy,omitempty"`
	// Utilization is p_i, the mean over chips of p_k-i
	// (GB-6.6.5-T9-cluster); Valid is false when a chip had fewer than 3
	// samples (IN-34).
	Utilization      *float64          `json:"utilization,omitempty"`
	UtilizationValid bool              `json:"utilization_valid,omitempty"`
	Chips            []ChipUtilization `json:"chips,omitempty"`
	// PowerW is the mean power of all nodes' samples in the epoch, summed
	// over nodes (P_EP, IN-83).
	PowerW *float64 `json:"p_ep_w,omitempty"`
	// EnergyJ is the epoch's energy, PowerW × T_EP(i) (IN-83: seconds ×
	// watts = joules).
	EnergyJ *float64 `json:"e_ep_j,omitempty"`
}

// ChipUtilization is p_k-i: the mean of chip k's samples in epoch i
// (GB-6.6.5-T9-server).
type ChipUtilization struct {
	Node    string  `json:"node,omitempty"`
	Chip    int     `json:"chip"`
	Samples int     `json:"samples"`
	Mean    float64 `json:"mean"`
	// Valid is Samples ≥ 3 (IN-34).
	Valid bool `json:"valid"`
}

// ValidationMetrics is validation j of a trial.
type ValidationMetrics struct {
	// Index is j: the validation's Epoch, or its ordinal (1-based, in
	// samples order) in a trial whose validations are keyed by Samples.
	Index int `json:"index"`
	// Samples is the validation's key when it has no epoch: the training
	// samples (or tokens) processed when it ran, as MLLOG's samples_count
	// gives it (LLM benchmarks have no epochs). 0: keyed by Index.
	Samples  int64    `json:"samples,omitempty"`
	TVMs     float64  `json:"t_v_ms"`
	Accuracy *float64 `json:"accuracy,omitempty"`
}

// NodeMetrics are the figures of one node in one trial.
type NodeMetrics struct {
	Node string `json:"node"`
	// TEPMeanMs is T_EP(n), the mean of the node's epoch times.
	TEPMeanMs *float64 `json:"t_ep_mean_ms,omitempty"`
	// SetSize is the node's local training set (IN-32).
	SetSize int64 `json:"set_size,omitempty"`
	// Throughput is Th_n = SetSize ÷ T_EP(n) (GB-6.6.4-T8-ThCL).
	Throughput *float64 `json:"th,omitempty"`
	// PowerW is P_TR, PowerMaxW is P_TRmax over [t_TR1, t_TR2] and
	// PowerSamples the samples they come from (GB-6.6.3-T7-PTR,
	// GB-6.6.3-T7-PTRmax).
	PowerW       *float64 `json:"p_tr_w,omitempty"`
	PowerMaxW    *float64 `json:"p_trmax_w,omitempty"`
	PowerSamples int      `json:"power_samples,omitempty"`
	// EpochPowerW is P_EP-i: the mean over epochs of the mean power in
	// each epoch (IN-83).
	EpochPowerW *float64 `json:"p_ep_w,omitempty"`
	// Utilization is the server's p over its own chips
	// (GB-6.6.5-T9-server, IN-34).
	Utilization      *float64 `json:"utilization,omitempty"`
	UtilizationValid bool     `json:"utilization_valid,omitempty"`
}

// Transfer is one inter-node transfer: T_NC = t_NC2 − t_NC1.
type Transfer struct {
	ID   string  `json:"id"`
	From string  `json:"from,omitempty"`
	To   string  `json:"to,omitempty"`
	Ms   float64 `json:"t_nc_ms"`
}

// Summary summarises a set of durations in milliseconds.
type Summary struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
}

// MLPerfScore is MLPerf Training's score: time-to-train per trial (run_stop
// − run_start, here T_TR) and the olympic average that drops the Drop
// fastest and Drop slowest trials, failed trials counting as the slowest.
type MLPerfScore struct {
	// Drop is the number dropped at each end.
	Drop int `json:"drop"`
	// Failed counts trials that did not succeed: a TrainEnd or TrialEnd
	// status other than "success", a quality target not reached, or no
	// time to train (TrialMetrics.MLPerfFailure says which).
	Failed int `json:"failed"`
	// OlympicAverageMin is the score in minutes; nil when there are too
	// few successful trials (more failures than Drop, or nothing left).
	OlympicAverageMin *float64 `json:"olympic_average_min,omitempty"`
	// Reason says in one line why OlympicAverageMin is nil; "" when it is
	// not.
	Reason string `json:"reason,omitempty"`
	// Benchmark and RequiredRuns are Config.MLPerfBenchmark and
	// Config.MLPerfRuns.
	Benchmark    string `json:"benchmark,omitempty"`
	RequiredRuns int    `json:"required_runs,omitempty"`
	// Note says when the trials are fewer than RequiredRuns: the olympic
	// average is then not an official score, and mlperf-logging's
	// compute_score prints the plain mean of the converged runs instead,
	// which MeanMin is. "" and nil otherwise.
	Note    string   `json:"note,omitempty"`
	MeanMin *float64 `json:"mean_min,omitempty"`
}

// ErrConfig is wrapped by the errors Compute returns for a bad Config.
var ErrConfig = errors.New("train: invalid metrics configuration")

func (c Config) validate() error {
	if c.TrainingSetSize < 0 {
		return fmt.Errorf("%w: training_set_size %d < 0", ErrConfig, c.TrainingSetSize)
	}
	for n, v := range c.NodeSetSize {
		if v < 0 {
			return fmt.Errorf("%w: node_set_size[%q] %d < 0", ErrConfig, n, v)
		}
	}
	if !(c.TrainingSetMB >= 0) || math.IsInf(c.TrainingSetMB, 0) {
		return fmt.Errorf("%w: training_set_mb %v, want a finite number >= 0", ErrConfig, c.TrainingSetMB)
	}
	if !(c.Alpha >= 0) || math.IsInf(c.Alpha, 0) {
		return fmt.Errorf("%w: alpha %v, want a finite number > 0 (0 for 100)", ErrConfig, c.Alpha)
	}
	if c.Epochs < 0 || c.MLPerfDrop < 0 || c.MLPerfRuns < 0 {
		return fmt.Errorf("%w: epochs %d, mlperf_drop %d and mlperf_runs %d must be >= 0", ErrConfig, c.Epochs, c.MLPerfDrop, c.MLPerfRuns)
	}
	for i, w := range c.Workloads {
		if !(w.Baseline > 0) || !(w.Throughput >= 0) || !(w.Weight >= 0 && w.Weight <= 1) {
			return fmt.Errorf("%w: workloads[%d] %q: baseline %v must be > 0, throughput %v >= 0, weight %v in [0, 1]", ErrConfig, i, w.Name, w.Baseline, w.Throughput, w.Weight)
		}
	}
	return nil
}

// span is one paired start/end of a rank.
type span struct {
	node       string
	rank       int
	start, end int64
	count      int64
	samples    int64 // the key of a span without an epoch (Event.Samples)
	value      *float64
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func ptr(v float64) *float64 { return &v }

// rankKey identifies one rank of one node.
type rankKey struct {
	node string
	rank int
}

// pairKey identifies a start/end pair: one trial, one rank, one index.
type pairKey struct {
	trial int
	node  string
	rank  int
	index int
	// samples keys a span whose index is 0 (Event.Samples): validations
	// of logs without epochs.
	samples int64
	gen     int // AutoML generation (Annex B); 0 outside AutoML
}

// sampleKey is the Samples part of an event's pair key: its Samples when it
// has no Epoch, else 0 (an Epoch alone keys it).
func sampleKey(e *Event) int64 {
	if e.Epoch != 0 {
		return 0
	}
	return e.Samples
}

// keyName names an event's index in a problem: its Epoch, or its samples
// count when it is keyed by that.
func keyName(e *Event) string {
	if e.Epoch == 0 && e.Samples != 0 {
		return fmt.Sprintf("at %d samples", e.Samples)
	}
	return fmt.Sprint(e.Epoch)
}

// trialOf is the trial of a structural event: 0 counts as trial 1 (IN-19).
func trialOf(e *Event) int { return max(e.Trial, 1) }

// Compute computes the training metrics of events under cfg. It returns an
// error only for a bad cfg; contradictory or out-of-order events are
// listed in Metrics.Problems and left out of the metrics they would spoil.
// events need not be sorted; Compute does not modify them.
//
// Structural events (every kind but Utilization, Power, Send and Receive)
// belong to their Trial, 0 counting as trial 1 (IN-19); with several ranks
// a timing point is the earliest start and the latest end over them.
// Utilisation and power samples belong to whatever windows (epochs, T_TR)
// contain them, on their own node; transfers are paired by ID across the
// whole run.
func Compute(events []Event, cfg Config) (*Metrics, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &computer{cfg: cfg, m: &Metrics{Unit: "samples/s"}}
	if cfg.TextGeneration {
		c.m.Unit = "tokens/s"
	}
	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b Event) int { return cmp.Compare(a.Time, b.Time) })
	c.evs = evs
	c.run()
	return c.m, nil
}

type computer struct {
	cfg  Config
	m    *Metrics
	evs  []Event
	util []*Event // Utilization samples, by time
	pow  []*Event // Power samples, by time
}

func (c *computer) problem(sev Severity, e *Event, format string, args ...any) {
	p := Problem{Severity: sev, Message: fmt.Sprintf(format, args...)}
	if e != nil {
		ev := *e
		p.Event = &ev
	}
	c.m.Problems = append(c.m.Problems, p)
}

// trialEvents are the structural events of one trial, by kind.
type trialEvents map[Kind][]*Event

func (c *computer) run() {
	trials := map[int]trialEvents{}
	var sends, recvs []*Event
	for i := range c.evs {
		e := &c.evs[i]
		if e.Value != nil && (math.IsNaN(*e.Value) || math.IsInf(*e.Value, 0)) {
			v := *e.Value
			e.Value = nil // before the problem copies the event: JSON has no NaN
			c.problem(Error, e, "%s value %v is not a finite number; the value is ignored", e.Kind, v)
		}
		switch e.Kind {
		case Utilization:
			if e.Value == nil {
				c.problem(Error, e, "utilization sample without a value")
				continue
			}
			if *e.Value < 0 || *e.Value > 1 {
				c.problem(Error, e, "utilization %v outside [0, 1] (IN-34); the sample is ignored", *e.Value)
				continue
			}
			c.util = append(c.util, e)
		case Power:
			if e.Value == nil {
				c.problem(Error, e, "power sample without a value")
				continue
			}
			if *e.Value < 0 {
				c.problem(Error, e, "power %v W is negative; the sample is ignored", *e.Value)
				continue
			}
			c.pow = append(c.pow, e)
		case Send:
			sends = append(sends, e)
		case Receive:
			recvs = append(recvs, e)
		default:
			t := trialOf(e)
			if trials[t] == nil {
				trials[t] = trialEvents{}
			}
			trials[t][e.Kind] = append(trials[t][e.Kind], e)
		}
	}
	c.transfers(sends, recvs)
	nums := make([]int, 0, len(trials))
	for t := range trials {
		nums = append(nums, t)
	}
	sort.Ints(nums)
	for _, t := range nums {
		c.m.Trials = append(c.m.Trials, c.trial(t, trials[t]))
	}
	c.summarise()
}

// bounds returns the earliest time of the first kind's events and the
// latest of the second's; ok is false when either is missing. A pair on one
// (node, rank) whose end precedes its start is a problem.
func (c *computer) bounds(te trialEvents, startKind, endKind Kind) (lo, hi int64, okLo, okHi bool) {
	starts := map[rankKey]*Event{}
	for _, e := range te[startKind] {
		k := rankKey{e.Node, e.Rank}
		if prev, dup := starts[k]; dup {
			c.problem(Error, e, "a second %s in trial %d on the same node and rank (first at %d ns); the first is kept", startKind, trialOf(e), prev.Time)
			continue
		}
		starts[k] = e
		if !okLo || e.Time < lo {
			lo, okLo = e.Time, true
		}
	}
	for _, e := range te[endKind] {
		if s, ok := starts[rankKey{e.Node, e.Rank}]; ok && e.Time < s.Time {
			c.problem(Error, e, "%s before its %s", endKind, startKind)
			continue
		}
		if !okHi || e.Time > hi {
			hi, okHi = e.Time, true
		}
	}
	return lo, hi, okLo, okHi
}

func diff(lo, hi int64, okLo, okHi bool) *float64 {
	if !okLo || !okHi || hi < lo {
		return nil
	}
	return ptr(ms(hi - lo))
}

// pairs matches start and end events of one rank by index (epoch or
// validation number, or for events without one their Samples) and returns
// the complete spans by index. Spans keyed by Samples are numbered 1, 2, …
// in samples order, after those with an index.
//
// In an AutoML trial (Annex B) each generation numbers its epochs from 1
// again: the spans are then told apart by generation, and numbered 1, 2, …
// through the generations in order.
func (c *computer) pairs(te trialEvents, startKind, endKind Kind) map[int][]span {
	open := map[pairKey]*Event{}
	done := map[pairKey]bool{}
	type groupKey struct {
		gen, index int
		samples    int64
	}
	byGen := map[groupKey][]span{}
	gen := generationOf(te)
	for _, e := range te[startKind] {
		k := pairKey{trialOf(e), e.Node, e.Rank, e.Epoch, sampleKey(e), gen(e, false)}
		if open[k] != nil {
			c.problem(Error, e, "a second %s %s on the same node and rank; the first is kept", startKind, keyName(e))
			continue
		}
		open[k] = e
	}
	for _, e := range te[endKind] {
		k := pairKey{trialOf(e), e.Node, e.Rank, e.Epoch, sampleKey(e), gen(e, true)}
		s := open[k]
		switch {
		case s == nil:
			c.problem(Error, e, "%s %s without a %s", endKind, keyName(e), startKind)
		case done[k]:
			c.problem(Error, e, "a second %s %s on the same node and rank", endKind, keyName(e))
		case e.Time < s.Time:
			c.problem(Error, e, "%s %s ends before it starts", endKind, keyName(e))
			done[k] = true
		default:
			done[k] = true
			gk := groupKey{k.gen, e.Epoch, k.samples}
			byGen[gk] = append(byGen[gk], span{node: e.Node, rank: e.Rank, start: s.Time, end: e.Time, count: e.Count, samples: k.samples, value: e.Value})
		}
	}
	for k, s := range open {
		if !done[k] {
			c.problem(Warning, s, "%s %s never ends", startKind, keyName(s))
		}
	}
	keys := make([]groupKey, 0, len(byGen))
	renumber := false
	for k := range byGen {
		keys = append(keys, k)
		renumber = renumber || k.gen != 0 || k.index == 0
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
		return cmp.Or(cmp.Compare(a.gen, b.gen), cmp.Compare(b2i(a.index == 0), b2i(b.index == 0)), cmp.Compare(a.index, b.index), cmp.Compare(a.samples, b.samples))
	})
	out := make(map[int][]span, len(byGen))
	for n, k := range keys {
		idx := k.index
		if renumber {
			idx = n + 1
		}
		out[idx] = byGen[k]
	}
	return out
}

// generationOf returns, for the events of one trial, the AutoML generation
// each falls in: that of the last GenerationStart at or before it (strictly
// before it for an end event, so that an epoch ending as the next
// generation starts stays in its own), 0 before any and in a trial without
// generations.
func generationOf(te trialEvents) func(e *Event, end bool) int {
	starts := slices.Clone(te[GenerationStart])
	if len(starts) == 0 {
		return func(*Event, bool) int { return 0 }
	}
	slices.SortStableFunc(starts, func(a, b *Event) int { return cmp.Compare(a.Time, b.Time) })
	return func(e *Event, end bool) int {
		g := 0
		for _, s := range starts {
			if s.Time > e.Time || (end && s.Time == e.Time) {
				break
			}
			g = s.Epoch
		}
		return g
	}
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cover returns the earliest start and latest end of spans.
func cover(ss []span) (lo, hi int64) {
	lo, hi = ss[0].start, ss[0].end
	for _, s := range ss[1:] {
		lo, hi = min(lo, s.start), max(hi, s.end)
	}
	return lo, hi
}

func sortedKeys[V any](m map[int]V) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

func (c *computer) trial(t int, te trialEvents) TrialMetrics {
	tm := TrialMetrics{Trial: t}
	sLo, lHi, okS, okL := c.bounds(te, DataReadStart, DataReadEnd)
	tm.TLMs = diff(sLo, lHi, okS, okL)
	trLo, trHi, okTR1, okTR2 := c.bounds(te, TrainStart, TrainEnd)
	tm.TTRMs = diff(trLo, trHi, okTR1, okTR2)
	if okTR2 {
		for _, e := range te[TrainEnd] {
			if e.Time == trHi {
				tm.Status = e.Status
			}
		}
	}
	if len(te[TrainEnd]) > 0 && !okTR1 {
		c.problem(Error, te[TrainEnd][0], "TrainEnd in trial %d without a TrainStart", t)
	}
	var wHi int64
	for i, e := range te[AcceleratorStart] {
		if i == 0 || e.Time > wHi {
			wHi = e.Time
		}
		if okTR1 && e.Time < trLo {
			c.problem(Warning, e, "accelerator starts before TrainStart (IN-30)")
		}
	}
	tm.TWMs = diff(trLo, wHi, okTR1, len(te[AcceleratorStart]) > 0)
	firstEpoch, hasEpoch := int64(0), false
	for _, e := range te[EpochStart] {
		if !hasEpoch || e.Time < firstEpoch {
			firstEpoch, hasEpoch = e.Time, true
		}
	}
	if hasEpoch && len(te[AcceleratorStart]) > 0 && wHi > firstEpoch {
		c.problem(Warning, nil, "trial %d: the last accelerator starts after the first epoch (IN-30)", t)
	}
	cvLo, cvHi, okCV1, okCV2 := c.bounds(te, ConversionStart, ConversionEnd)
	tm.TCVMs = diff(cvLo, cvHi, okCV1, okCV2)
	pLo, pHi, okP1, okP2 := c.bounds(te, PersistStart, PersistEnd)
	tm.TPMs = diff(pLo, pHi, okP1, okP2)
	tm.TTMs = diff(sLo, pHi, okS, okP2)

	epochs := c.pairs(te, EpochStart, EpochEnd)
	vals := c.pairs(te, ValidationStart, ValidationEnd)
	for _, j := range sortedKeys(vals) {
		ss := vals[j]
		lo, hi := cover(ss)
		vm := ValidationMetrics{Index: j, Samples: ss[0].samples, TVMs: ms(hi - lo)}
		for _, s := range ss {
			if s.value != nil {
				vm.Accuracy = ptr(*s.value)
				break
			}
		}
		tm.Validations = append(tm.Validations, vm)
		if vm.Accuracy != nil {
			tm.FinalAccuracy = vm.Accuracy
		}
	}
	// Node epoch spans: node → epoch → [lo, hi], samples.
	nodeEpochs := map[string]map[int]*nodeEpoch{}
	var sum float64
	var setSum int64
	setKnown := 0
	var prevEnd int64
	for n, i := range sortedKeys(epochs) {
		ss := epochs[i]
		lo, hi := cover(ss)
		em := EpochMetrics{Epoch: i, TEPMs: ms(hi - lo)}
		for _, s := range ss {
			em.Samples += s.count
			ne := nodeEpochs[s.node]
			if ne == nil {
				ne = map[int]*nodeEpoch{}
				nodeEpochs[s.node] = ne
			}
			if x := ne[i]; x == nil {
				ne[i] = &nodeEpoch{s.start, s.end, s.count}
			} else {
				x.lo, x.hi, x.count = min(x.lo, s.start), max(x.hi, s.end), x.count+s.count
			}
		}
		if em.Samples > 0 && hi > lo {
			em.Throughput = ptr(float64(em.Samples) / (ms(hi-lo) / 1e3))
			setSum += em.Samples
			setKnown++
		}
		for _, v := range tm.Validations {
			if v.Index == i && v.Samples == 0 {
				em.Accuracy = v.Accuracy
			}
		}
		if okTR1 && lo < trLo {
			c.problem(Warning, nil, "trial %d: epoch %d starts before TrainStart (IN-30)", t, i)
		}
		if okTR2 && hi > trHi {
			c.problem(Warning, nil, "trial %d: epoch %d ends after TrainEnd (IN-30)", t, i)
		}
		if n > 0 && lo < prevEnd {
			c.problem(Warning, nil, "trial %d: epoch %d starts before the previous epoch ends (IN-30)", t, i)
		}
		prevEnd = hi
		em.Utilization, em.UtilizationValid, em.Chips = c.utilization(lo, hi, nodeWindow(nodeEpochs, i))
		for _, cu := range em.Chips {
			if !cu.Valid {
				c.problem(Warning, nil, "trial %d epoch %d: chip %d of node %q has %d utilisation samples, fewer than 3; the epoch's utilisation is marked invalid (IN-34)", t, i, cu.Chip, cu.Node, cu.Samples)
			}
		}
		em.PowerW = c.epochPower(lo, hi, nodeWindow(nodeEpochs, i))
		if em.PowerW != nil {
			em.EnergyJ = ptr(*em.PowerW * em.TEPMs / 1e3)
		}
		sum += em.TEPMs
		tm.Epochs = append(tm.Epochs, em)
	}
	if c.cfg.Epochs > 0 && len(tm.Epochs) != c.cfg.Epochs {
		c.problem(Warning, nil, "trial %d: %d complete epochs, expected %d", t, len(tm.Epochs), c.cfg.Epochs)
	}
	if okTR2 && okCV1 && cvLo < trHi {
		c.problem(Warning, nil, "trial %d: model conversion starts before training exits (IN-30)", t)
	}
	if okCV2 && okP1 && pLo < cvHi {
		c.problem(Warning, nil, "trial %d: persistence starts before model conversion ends (IN-30)", t)
	}
	size, from := c.cfg.TrainingSetSize, "config"
	if size == 0 {
		for _, e := range te[TrainSamples] {
			if e.Count > 0 {
				size, from = e.Count, "train_samples"
			}
		}
	}
	if size == 0 && setKnown > 0 {
		size, from = setSum/int64(setKnown), "epoch counts"
	}
	if size > 0 {
		tm.TrainingSetSize, tm.TrainingSetFrom = size, from
	}
	if len(tm.Epochs) > 0 {
		tm.TEPMeanMs = ptr(sum / float64(len(tm.Epochs)))
	} else if tep, ok := c.blockEpochTime(te); ok {
		tm.TEPMeanMs = ptr(tep)
		tm.TEPFromBlocks = true
	} else if last := lastSamples(te); size > 0 && okTR1 && last != nil && last.Time > trLo {
		tm.TEPMeanMs = ptr(ms(last.Time-trLo) * float64(size) / float64(last.Samples))
		tm.TEPFromSamples = true
	}
	if size > 0 && tm.TEPMeanMs != nil && *tm.TEPMeanMs > 0 {
		tm.Throughput = ptr(float64(size) / (*tm.TEPMeanMs / 1e3))
	}
	// Nodes: every node with epochs or power samples.
	names := map[string]bool{}
	for n := range nodeEpochs {
		names[n] = true
	}
	for _, p := range c.pow {
		if okTR1 && okTR2 && p.Time >= trLo && p.Time <= trHi {
			names[p.Node] = true
		}
	}
	nodeList := make([]string, 0, len(names))
	for n := range names {
		nodeList = append(nodeList, n)
	}
	sort.Strings(nodeList)
	var thCL, pCTR float64
	thKnown, pKnown := 0, 0
	var energyDen float64 // Σ_i T_EP-i × P_EP-i in joules
	energyKnown := 0
	for _, n := range nodeList {
		nm := NodeMetrics{Node: n}
		if ne := nodeEpochs[n]; len(ne) > 0 {
			var s float64
			var cnt int64
			for _, x := range ne {
				s += ms(x.hi - x.lo)
				cnt += x.count
			}
			mean := s / float64(len(ne))
			nm.TEPMeanMs = ptr(mean)
			switch {
			case c.cfg.NodeSetSize[n] > 0:
				nm.SetSize = c.cfg.NodeSetSize[n]
			case cnt > 0:
				nm.SetSize = cnt / int64(len(ne))
			case c.cfg.TrainingSetSize > 0:
				nm.SetSize = c.cfg.TrainingSetSize / int64(len(nodeEpochs))
			}
			if nm.SetSize > 0 && mean > 0 {
				nm.Throughput = ptr(float64(nm.SetSize) / (mean / 1e3))
				thCL += *nm.Throughput
				thKnown++
			}
			// P_EP-i: mean over the node's epochs of its mean power in each.
			var pe float64
			pn := 0
			for _, i := range sortedKeys(ne) {
				if v, _, k := c.meanPower(n, ne[i].lo, ne[i].hi); k > 0 {
					pe += v
					pn++
				}
			}
			if pn > 0 {
				nm.EpochPowerW = ptr(pe / float64(pn))
				energyDen += mean / 1e3 * *nm.EpochPowerW
				energyKnown++
			}
		}
		if okTR1 && okTR2 {
			if mean, peak, k := c.meanPower(n, trLo, trHi); k > 0 {
				nm.PowerW, nm.PowerMaxW, nm.PowerSamples = ptr(mean), ptr(peak), k
				pCTR += mean
				pKnown++
			}
		}
		ne := nodeEpochs[n]
		nm.Utilization, nm.UtilizationValid = c.nodeUtilization(n, ne)
		tm.Nodes = append(tm.Nodes, nm)
	}
	if thKnown > 0 && thKnown == len(nodeEpochs) {
		tm.ClusterThroughput = ptr(thCL)
	}
	if pKnown > 0 {
		tm.ClusterPowerW = ptr(pCTR)
		if tm.TTRMs != nil {
			tm.EnergyKWh = ptr(pCTR * *tm.TTRMs / 1e3 / 3.6e6)
		}
	}
	if c.cfg.TrainingSetMB > 0 && energyKnown > 0 && energyKnown == len(nodeEpochs) && energyDen > 0 {
		tm.EnergyEfficiency = ptr(c.cfg.TrainingSetMB / energyDen)
		tm.EnergyEfficiencyMBPerKWh = ptr(*tm.EnergyEfficiency * 3.6e6)
	}
	// Cluster utilisation over all chips, per epoch (the epochs' values).
	var us float64
	un := 0
	tm.UtilizationValid = true
	for _, em := range tm.Epochs {
		if em.Utilization != nil {
			us += *em.Utilization
			un++
			tm.UtilizationValid = tm.UtilizationValid && em.UtilizationValid
		}
	}
	if un > 0 {
		tm.Utilization = ptr(us / float64(un))
		if un < len(tm.Epochs) {
			tm.UtilizationValid = false
		}
	} else {
		tm.UtilizationValid = false
	}
	if tm.FinalAccuracy != nil {
		if c.cfg.Target != nil {
			r := c.cfg.Target.Reached(*tm.FinalAccuracy)
			tm.ReachedTarget = &r
		}
		if tm.EnergyKWh != nil && *tm.EnergyKWh > 0 {
			tm.TrainingEfficiency = ptr(c.score(*tm.FinalAccuracy) / *tm.EnergyKWh)
		}
	} else if len(tm.Epochs) > 0 {
		c.problem(Warning, nil, "trial %d: no accuracy before training exits (GB-6.3-c-4-iv)", t)
	}
	tm.TimeToTrainMin = mlperfTimeToTrain(te)
	for _, e := range te[TrialEnd] {
		tm.TrialStatus = e.Status
	}
	tm.MLPerfFailure = c.mlperfFailure(&tm, okTR1, okTR2)
	c.reasons(&tm, te, okTR1, okTR2, len(tm.Epochs) > 0)
	return tm
}

// blockEpochTime is the mean epoch time of a trial that logged blocks of
// epochs instead of epochs: the blocks' durations (earliest start to latest
// end over the ranks) summed, over the epochs they hold (BlockEnd's Count,
// MLLOG's epoch_count). Blocks that count samples instead (their Count is
// their Samples) give no epoch time.
func (c *computer) blockEpochTime(te trialEvents) (float64, bool) {
	for _, e := range te[BlockEnd] {
		if e.Samples > 0 && e.Count == e.Samples {
			return 0, false
		}
	}
	var dur float64
	var epochs int64
	for _, ss := range c.pairs(te, BlockStart, BlockEnd) {
		lo, hi := cover(ss)
		if ss[0].count <= 0 {
			continue
		}
		dur += ms(hi - lo)
		epochs += ss[0].count
	}
	if epochs == 0 {
		return 0, false
	}
	return dur / float64(epochs), true
}

// lastSamples is the trial's last ValidationEnd or BlockEnd with a
// samples count, nil when there is none.
func lastSamples(te trialEvents) *Event {
	var last *Event
	for _, k := range []Kind{ValidationEnd, BlockEnd} {
		for _, e := range te[k] {
			if e.Samples > 0 && (last == nil || e.Time > last.Time) {
				last = e
			}
		}
	}
	return last
}

// reasons fills tm.NotAvailable: one line for each absent figure that a
// reader expects, saying why it is absent.
func (c *computer) reasons(tm *TrialMetrics, te trialEvents, okTR1, okTR2, epochs bool) {
	why := map[string]string{}
	ttr := ""
	switch {
	case !okTR1 && !okTR2:
		ttr = "no run_start (TrainStart) and no run_stop (TrainEnd) were logged"
	case !okTR1:
		ttr = "no run_start (TrainStart) was logged"
	case !okTR2:
		ttr = "no run_stop (TrainEnd) was logged"
	case tm.TTRMs == nil:
		ttr = "run_stop (TrainEnd) comes before run_start (TrainStart)"
	}
	if ttr != "" {
		why["t_tr_ms"] = "T_TR: " + ttr
		why["time_to_train_min"] = "time to train: " + ttr
	}
	if tm.Throughput == nil {
		switch {
		case tm.TrainingSetSize == 0:
			why["th"] = "throughput: the training-set size is unknown (no training_set_size, no train_samples, no samples counts at epoch ends)"
		case !epochs && lastSamples(te) == nil:
			why["th"] = "throughput: no epoch was logged, nor a block of epochs, nor a samples count at a validation or block"
		case !epochs && !okTR1:
			why["th"] = "throughput: no epoch was logged, and no run_start to time the samples from"
		default:
			why["th"] = "throughput: the mean epoch time is zero"
		}
	}
	if tm.FinalAccuracy == nil {
		why["final_accuracy"] = "final accuracy: no evaluation with an accuracy was logged"
	}
	if tm.ClusterThroughput == nil {
		why["th_cl"] = "cluster throughput: needs every node's epochs and its share of the training set (per-node epoch counts, or node_set_size)"
		if !epochs {
			why["th_cl"] = "cluster throughput: needs each node's epochs, and no epoch was logged"
		}
	}
	if tm.EnergyKWh == nil {
		why["energy_kwh"] = "energy: no power was measured (power readings in the log, the event endpoint, or --power-replay)"
		if tm.ClusterPowerW != nil {
			why["energy_kwh"] = "energy: no T_TR to multiply the power by"
		}
	}
	if tm.TrainingEfficiency == nil {
		switch {
		case tm.EnergyKWh == nil:
			why["training_efficiency_per_kwh"] = "training efficiency: needs the energy, and " + strings.TrimPrefix(why["energy_kwh"], "energy: ")
		case tm.FinalAccuracy == nil:
			why["training_efficiency_per_kwh"] = "training efficiency: no final accuracy"
		default:
			why["training_efficiency_per_kwh"] = "training efficiency: the energy is zero"
		}
	}
	for _, p := range []struct {
		got        *float64
		key, label string
		needs      string
	}{
		{tm.TLMs, "t_l_ms", "T_L", "the data read start and end (aimeter_data_read_start, aimeter_data_read_stop)"},
		{tm.TWMs, "t_w_ms", "T_w", "the training start and an accelerator start (run_start, aimeter_accelerator_start)"},
		{tm.TCVMs, "t_cv_ms", "T_CV", "the model conversion start and end (aimeter_conversion_start, aimeter_conversion_stop)"},
		{tm.TPMs, "t_p_ms", "T_P", "the persistence start and end (aimeter_persist_start, aimeter_persist_stop)"},
		{tm.TEPMeanMs, "t_ep_mean_ms", "mean T_EP", "complete epochs (epoch_start and epoch_stop), blocks of epochs (block_start and block_stop with epoch_count), or a samples count at a validation or block with run_start and the training-set size"},
	} {
		if p.got == nil {
			why[p.key] = p.label + ": needs " + p.needs + ", not all logged"
		}
	}
	if tm.TTMs == nil {
		why["t_t_ms"] = "T_T: needs the data read start and the persistence end (aimeter_data_read_start and aimeter_persist_stop records, docs/training-events.md)"
	}
	if tm.Utilization == nil {
		why["utilization"] = "utilisation: no accelerator utilisation samples within the epochs (aimeter_utilization records, or the event endpoint)"
	}
	if tm.ReachedTarget == nil {
		if c.cfg.Target == nil {
			why["reached_target"] = "quality target: none was configured"
		} else {
			why["reached_target"] = "quality target: no accuracy to judge"
		}
	}
	if len(why) > 0 {
		tm.NotAvailable = why
	}
}

// score is the accuracy as E.1.2 uses it: 1 − a for a lower-is-better
// metric (GB-E.1.2-FNa).
func (c *computer) score(a float64) float64 {
	if c.cfg.Target != nil && c.cfg.Target.LowerIsBetter {
		return 1 - a
	}
	return a
}

// nodeEpoch is one node's window of one epoch (its first rank's start to
// its last rank's end) and the samples its ranks processed.
type nodeEpoch struct {
	lo, hi int64
	count  int64
}

// nodeWindow returns, for epoch i, a function giving each node's own
// window of that epoch; ok is false for a node without one.
func nodeWindow(m map[string]map[int]*nodeEpoch, i int) func(string) (int64, int64, bool) {
	return func(n string) (int64, int64, bool) {
		if x := m[n][i]; x != nil {
			return x.lo, x.hi, true
		}
		return 0, 0, false
	}
}

// between returns the samples of evs (sorted by time) in [lo, hi].
func (c *computer) between(evs []*Event, lo, hi int64) []*Event {
	i := sort.Search(len(evs), func(i int) bool { return evs[i].Time >= lo })
	j := sort.Search(len(evs), func(j int) bool { return evs[j].Time > hi })
	if j < i {
		return nil
	}
	return evs[i:j]
}

// meanPower returns the mean and peak of node n's power samples in
// [lo, hi] and their number.
func (c *computer) meanPower(n string, lo, hi int64) (mean, peak float64, k int) {
	var s float64
	for _, p := range c.between(c.pow, lo, hi) {
		if p.Node != n {
			continue
		}
		v := *p.Value
		s += v
		if k == 0 || v > peak {
			peak = v
		}
		k++
	}
	if k == 0 {
		return 0, 0, 0
	}
	return s / float64(k), peak, k
}

// epochPower is the sum over nodes of each node's mean power within its
// own window of the epoch (or the cluster window lo, hi).
func (c *computer) epochPower(lo, hi int64, window func(string) (int64, int64, bool)) *float64 {
	nodes := map[string]bool{}
	for _, p := range c.between(c.pow, lo, hi) {
		nodes[p.Node] = true
	}
	if len(nodes) == 0 {
		return nil
	}
	var total float64
	for n := range nodes {
		a, b, ok := window(n)
		if !ok {
			a, b = lo, hi
		}
		if m, _, k := c.meanPower(n, a, b); k > 0 {
			total += m
		}
	}
	return &total
}

// utilization computes p_k-i for every chip with samples in the epoch
// (each node's chips in that node's window of the epoch, else the
// cluster window) and p_i, their mean (GB-6.6.5-T9-server,
// GB-6.6.5-T9-cluster). valid is false when a chip has fewer than 3
// samples (IN-34).
func (c *computer) utilization(lo, hi int64, window func(string) (int64, int64, bool)) (*float64, bool, []ChipUtilization) {
	type chipKey struct {
		node string
		chip int
	}
	acc := map[chipKey]*ChipUtilization{}
	var order []chipKey
	// Every node's window lies within the cluster window [lo, hi].
	for _, e := range c.between(c.util, lo, hi) {
		a, b, ok := window(e.Node)
		if !ok {
			a, b = lo, hi
		}
		if e.Time < a || e.Time > b {
			continue
		}
		k := chipKey{e.Node, e.Chip}
		cu := acc[k]
		if cu == nil {
			cu = &ChipUtilization{Node: e.Node, Chip: e.Chip}
			acc[k] = cu
			order = append(order, k)
		}
		cu.Samples++
		cu.Mean += *e.Value
	}
	if len(order) == 0 {
		return nil, false, nil
	}
	slices.SortFunc(order, func(a, b chipKey) int {
		return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.chip, b.chip))
	})
	chips := make([]ChipUtilization, 0, len(order))
	var s float64
	valid := true
	for _, k := range order {
		cu := acc[k]
		cu.Mean /= float64(cu.Samples)
		cu.Valid = cu.Samples >= 3
		valid = valid && cu.Valid
		s += cu.Mean
		chips = append(chips, *cu)
	}
	return ptr(s / float64(len(chips))), valid, chips
}

// nodeUtilization is the server value p of node n: the mean over the
// node's epochs of p_i over its own chips (IN-34 (2)); valid is false when
// a chip had fewer than 3 samples in an epoch or an epoch had none.
func (c *computer) nodeUtilization(n string, epochs map[int]*nodeEpoch) (*float64, bool) {
	var s float64
	k := 0
	valid := len(epochs) > 0
	for _, i := range sortedKeys(epochs) {
		w := epochs[i]
		sums := map[int]float64{}
		counts := map[int]int{}
		for _, e := range c.between(c.util, w.lo, w.hi) {
			if e.Node == n {
				counts[e.Chip]++
				sums[e.Chip] += *e.Value
			}
		}
		if len(counts) == 0 {
			valid = false
			continue
		}
		var cs float64
		for _, chip := range sortedKeys(counts) {
			cs += sums[chip] / float64(counts[chip])
			valid = valid && counts[chip] >= 3
		}
		s += cs / float64(len(counts))
		k++
	}
	if k == 0 {
		return nil, false
	}
	return ptr(s / float64(k)), valid
}

// transfers pairs Send and Receive events by ID (GB-6.6.2-T6-TNC).
func (c *computer) transfers(sends, recvs []*Event) {
	byID := map[string]*Event{}
	for _, s := range sends {
		if s.ID == "" {
			c.problem(Error, s, "send without an ID")
			continue
		}
		if byID[s.ID] != nil {
			c.problem(Error, s, "a second send with ID %q", s.ID)
			continue
		}
		byID[s.ID] = s
	}
	got := map[string]bool{}
	var sum float64
	for _, r := range recvs {
		s := byID[r.ID]
		switch {
		case s == nil:
			c.problem(Error, r, "receive %q without a send", r.ID)
			continue
		case got[r.ID]:
			c.problem(Error, r, "a second receive with ID %q", r.ID)
			continue
		case r.Time < s.Time:
			c.problem(Error, r, "receive %q before its send", r.ID)
			got[r.ID] = true
			continue
		}
		got[r.ID] = true
		tr := Transfer{ID: r.ID, From: s.Node, To: r.Node, Ms: ms(r.Time - s.Time)}
		c.m.Transfers = append(c.m.Transfers, tr)
		if c.m.NC == nil {
			c.m.NC = &Summary{Min: tr.Ms, Max: tr.Ms}
		}
		c.m.NC.Count++
		c.m.NC.Min, c.m.NC.Max = min(c.m.NC.Min, tr.Ms), max(c.m.NC.Max, tr.Ms)
		sum += tr.Ms
	}
	if c.m.NC != nil {
		c.m.NC.Mean = sum / float64(c.m.NC.Count)
	}
	for _, s := range sends {
		if s.ID != "" && byID[s.ID] == s && !got[s.ID] {
			c.problem(Warning, s, "send %q never received", s.ID)
		}
	}
}

// meanOf returns the mean of the non-nil values picked from the trials.
func meanOf(ts []TrialMetrics, pick func(*TrialMetrics) *float64) *float64 {
	var s float64
	n := 0
	for i := range ts {
		if v := pick(&ts[i]); v != nil {
			s += *v
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return ptr(s / float64(n))
}

func (c *computer) summarise() {
	m := c.m
	m.MeanTTRMs = meanOf(m.Trials, func(t *TrialMetrics) *float64 { return t.TTRMs })
	m.Throughput = meanOf(m.Trials, func(t *TrialMetrics) *float64 { return t.Throughput })
	m.ClusterThroughput = meanOf(m.Trials, func(t *TrialMetrics) *float64 { return t.ClusterThroughput })
	acc := meanOf(m.Trials, func(t *TrialMetrics) *float64 { return t.FinalAccuracy })
	energy := meanOf(m.Trials, func(t *TrialMetrics) *float64 { return t.EnergyKWh })
	if acc != nil && energy != nil && *energy > 0 {
		m.TrainingEfficiency = ptr(c.score(*acc) / *energy)
	}
	if len(c.cfg.Workloads) > 0 {
		m.ThBar = c.thBar()
	}
	m.MLPerf = c.mlperf()
}

// thBar is α · exp(Σ τ_s ln r_s / Σ τ_s) (GB-6.6.4-T8-ThBar, IN-33).
func (c *computer) thBar() *float64 {
	alpha := c.cfg.Alpha
	if alpha == 0 {
		alpha = 100
	}
	rs := make([]float64, len(c.cfg.Workloads))
	ws := make([]float64, len(c.cfg.Workloads))
	var wsum float64
	for i, w := range c.cfg.Workloads {
		th := w.Throughput
		if th == 0 {
			if c.m.Throughput == nil {
				c.problem(Warning, nil, "Th-bar: workload %q takes this run's throughput, which is unknown", w.Name)
				return nil
			}
			th = *c.m.Throughput
		}
		rs[i], ws[i] = th/w.Baseline, w.Weight
		wsum += w.Weight
	}
	g, err := stats.WeightedGeometricMean(rs, ws)
	if err != nil {
		c.problem(Warning, nil, "Th-bar not computed: %v", err)
		return nil
	}
	if math.Abs(wsum-1) > 1e-9 {
		c.problem(Warning, nil, "Th-bar weights sum to %v, not 1 (IN-33)", wsum)
	}
	return ptr(alpha * g)
}

// mlperf computes the olympic average of the trials' time-to-train, as
// mlperf-logging's result summarizer does: sort, drop Drop at each end,
// failed trials counting as already dropped from the slow end.
func (c *computer) mlperf() MLPerfScore {
	drop := c.cfg.MLPerfDrop
	if drop == 0 {
		drop = 1
	}
	s := MLPerfScore{Drop: drop, Benchmark: c.cfg.MLPerfBenchmark, RequiredRuns: c.cfg.MLPerfRuns}
	var ok []float64
	var why []string
	for _, t := range c.m.Trials {
		if t.MLPerfFailure != "" {
			s.Failed++
			why = append(why, fmt.Sprintf("trial %d: %s", t.Trial, t.MLPerfFailure))
			continue
		}
		ok = append(ok, *t.TimeToTrainMin)
	}
	s.OlympicAverageMin = OlympicAverage(ok, s.Failed, drop)
	if n := len(c.m.Trials); s.RequiredRuns > n {
		s.Note = fmt.Sprintf("%d runs of %s, fewer than the %d MLPerf Training requires: the olympic average is not an official score, and mlperf-logging reports the mean of the converged runs", n, s.Benchmark, s.RequiredRuns)
		if len(ok) > 0 {
			var sum float64
			for _, v := range ok {
				sum += v
			}
			// compute_score divides by the number of result files, the
			// failed ones included.
			s.MeanMin = ptr(sum / float64(n))
		}
	}
	if s.OlympicAverageMin == nil {
		switch {
		case len(c.m.Trials) == 0:
			s.Reason = "time to train: no trial was logged"
		case s.Failed > drop:
			s.Reason = fmt.Sprintf("time to train: %d of %d trials did not converge, more than the %d the olympic average may drop (%s)", s.Failed, len(c.m.Trials), drop, strings.Join(why, "; "))
		default:
			s.Reason = fmt.Sprintf("time to train: %d converged and %d other trials; the olympic average drops the %d fastest and the %d slowest (a trial that did not converge counts among the slowest), leaving none", len(ok), s.Failed, drop, drop)
		}
	}
	return s
}

// mlperfTimeToTrain is TrialMetrics.TimeToTrainMin: the first TrainEnd and
// the last TrainStart at or before it, as mlperf-logging's
// _query_run_start_stop finds them in a log in time order; nil when either
// is missing. te's events are in time order (Compute sorts them).
func mlperfTimeToTrain(te trialEvents) *float64 {
	if len(te[TrainEnd]) == 0 {
		return nil
	}
	stop := te[TrainEnd][0].Time
	var start *Event
	for _, e := range te[TrainStart] {
		if e.Time <= stop {
			start = e
		}
	}
	if start == nil {
		return nil
	}
	return ptr(ms(stop-start.Time) / 60 / 1000)
}

// mlperfFailure is TrialMetrics.MLPerfFailure.
func (c *computer) mlperfFailure(tm *TrialMetrics, okTR1, okTR2 bool) string {
	switch {
	case tm.TrialStatus != "" && tm.TrialStatus != "success":
		return "the trial " + tm.TrialStatus
	case !okTR1 && !okTR2:
		return "no run_start and no run_stop were logged"
	case !okTR2:
		return "no run_stop was logged"
	case tm.TimeToTrainMin == nil:
		return "run_stop comes before run_start"
	case tm.Status != "" && tm.Status != "success":
		return fmt.Sprintf("run_stop status %q", tm.Status)
	case tm.ReachedTarget != nil && !*tm.ReachedTarget:
		return fmt.Sprintf("the quality target (%s) was not reached: final accuracy %s", c.cfg.Target.String(), FormatAccuracy(tm.FinalAccuracy))
	}
	return ""
}

// OlympicAverage is mlperf-logging's olympic average
// (result_summarizer's _compute_olympic_average): of the successful scores,
// sorted, it drops drop from the fast end and drop−failed from the slow end
// (the failed runs count as dropped slow ones) and returns the mean of the
// rest. It returns nil when failed > drop (the summarizer then rejects the
// result) or nothing is left.
func OlympicAverage(scores []float64, failed, drop int) *float64 {
	if failed > drop || failed < 0 || drop < 0 {
		return nil
	}
	s := slices.Clone(scores)
	sort.Float64s(s)
	lo, hi := drop, len(s)-(drop-failed)
	if hi <= lo {
		return nil
	}
	var sum float64
	for _, v := range s[lo:hi] {
		sum += v
	}
	return ptr(sum / float64(hi-lo))
}
