package train

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"aimeter/gbt/testinfo"
)

// ResultFileName is the name of the training result in a run bundle.
const ResultFileName = "gbt_training.json"

// ResultVersion identifies the layout of gbt_training.json.
const ResultVersion = "aimeter-gbt-training/1"

// ThroughputMethod records how cluster throughput is counted (IN-32).
const ThroughputMethod = "Th_n = local training set of node n / mean epoch time of node n; Th_CL = sum of Th_n (IN-32); local set sizes from node_set_size, else the node's EpochEnd counts, else training_set_size / nodes"

// Parallelism is field 24 of the test information (GB-6.1-a-24): 0 none,
// 1 model, 2 data, 3 hybrid, 4 other parallel training.
type Parallelism int

// The codes of field 24.
const (
	ParallelNone   Parallelism = 0
	ParallelModel  Parallelism = 1
	ParallelData   Parallelism = 2
	ParallelHybrid Parallelism = 3
	ParallelOther  Parallelism = 4
)

// TrainingInfo holds the fields of the test information that only
// training has, 21–25 of 6.1 a) (GB-6.1-a); fields 1–20 are testinfo.Info.
// The zero value of each field means "not given".
type TrainingInfo struct {
	// Optimizer is the optimizer's algorithm name (field 21,
	// GB-6.1-a-21). "": not given.
	Optimizer string `json:"optimizer,omitempty"`
	// MixedPrecision is 0 not used or 1 used (field 22, GB-6.1-a-22);
	// Precisions lists the precisions used when it is. Zero: not given.
	MixedPrecision testinfo.Flag          `json:"mixed_precision,omitempty"`
	Precisions     testinfo.PrecisionList `json:"precisions,omitempty"`
	// AutoML is 0 not used or 1 used (field 23, GB-6.1-a-23);
	// AutoMLAlgorithm names the algorithm when it is. Zero: not given.
	AutoML          testinfo.Flag `json:"automl,omitempty"`
	AutoMLAlgorithm string        `json:"automl_algorithm,omitempty"`
	// Parallelism is field 24 (GB-6.1-a-24); nil: not given.
	// ParallelAlgorithm names the algorithm of code 4 ("other").
	Parallelism       *Parallelism `json:"parallelism,omitempty"`
	ParallelAlgorithm string       `json:"parallel_algorithm,omitempty"`
	// AsyncUpdate is 0 synchronous or 1 asynchronous parameter update
	// (field 25, GB-6.1-a-25), meaningful with parallel training. Zero:
	// not given.
	AsyncUpdate testinfo.Flag `json:"async_update,omitempty"`
}

// Validate checks fields 21–25 and returns an error naming every bad
// field, or nil. Only what is given is checked, except that a used
// option needs its name: the precisions of mixed precision, the AutoML
// algorithm, the algorithm of "other" parallelism.
func (ti TrainingInfo) Validate() error {
	var errs []error
	if !ti.MixedPrecision.Valid() || !ti.AutoML.Valid() || !ti.AsyncUpdate.Valid() {
		errs = append(errs, errors.New("mixed_precision, automl and async_update must be 0 or 1 (GB-6.1-a-22, -23, -25)"))
	}
	if ti.MixedPrecision == testinfo.Used && len(ti.Precisions) == 0 {
		errs = append(errs, errors.New("precisions: missing, required when mixed precision is used (GB-6.1-a-22)"))
	}
	if err := ti.Precisions.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("precisions: %w", err))
	}
	if ti.AutoML == testinfo.Used && strings.TrimSpace(ti.AutoMLAlgorithm) == "" {
		errs = append(errs, errors.New("automl_algorithm: missing, required when AutoML is used (GB-6.1-a-23)"))
	}
	if p := ti.Parallelism; p != nil {
		switch {
		case *p < ParallelNone || *p > ParallelOther:
			errs = append(errs, fmt.Errorf("parallelism: %d, want 0–4 (GB-6.1-a-24)", *p))
		case *p == ParallelOther && strings.TrimSpace(ti.ParallelAlgorithm) == "":
			errs = append(errs, errors.New("parallel_algorithm: missing, required for parallelism 4 (GB-6.1-a-24)"))
		}
	}
	return errors.Join(errs...)
}

// ResultFile is the content of gbt_training.json: everything a training test
// reports (GB-6.3-c), regenerable from the events.
type ResultFile struct {
	// Version is ResultVersion; WriteResult fills it in when empty.
	Version string `json:"version"`
	// Info is the test information, fields 1–20 (GB-6.3-c-1); its task
	// type is training (field 5), which WriteResult fills in when unset.
	Info testinfo.Info `json:"info"`
	// Training holds fields 21–25.
	Training TrainingInfo `json:"training_info"`
	// Scenario is the catalogue row run (GB-6.3-c-2); nil when none was
	// named.
	Scenario *CatalogueEntry `json:"scenario,omitempty"`
	// Config is the configuration the metrics were computed with.
	Config Config `json:"config"`
	// UTCOffset is the UTC offset of the log's local timestamps, such as
	// "+08:00" (IN-04). "": not recorded.
	UTCOffset string `json:"utc_offset,omitempty"`
	// ThroughputMethod says how Th_n and Th_CL were counted (IN-32);
	// WriteResult fills it in when empty.
	ThroughputMethod string `json:"throughput_method,omitempty"`
	// Metrics are the computed metrics, with per-trial and per-epoch
	// tables and the problems found in the events.
	Metrics *Metrics `json:"metrics"`
	// Log is the training log (GB-6.3-c-4), as LogLines writes it.
	Log []string `json:"log,omitempty"`
	// Reported is what the workload reported of itself (an ais-bench
	// package's results), with each figure's source; nil for other runs.
	Reported *WorkloadReport `json:"reported,omitempty"`
}

// UTCOffset returns the UTC offset of t's location as the result records
// it, such as "+08:00" (IN-04).
func UTCOffset(t time.Time) string { return t.Format("-07:00") }

// WriteResult writes res as indented JSON, filling in Version,
// ThroughputMethod and the training task type when they are unset. res
// itself is not modified.
func WriteResult(w io.Writer, res *ResultFile) error {
	if res == nil {
		return errors.New("train: WriteResult of a nil result")
	}
	out := *res
	if out.Version == "" {
		out.Version = ResultVersion
	}
	if out.ThroughputMethod == "" {
		out.ThroughputMethod = ThroughputMethod
	}
	if out.Info.TaskType == 0 {
		out.Info.TaskType = testinfo.TaskTraining
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&out); err != nil {
		return fmt.Errorf("train: encoding %s: %w", ResultFileName, err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("train: writing %s: %w", ResultFileName, err)
	}
	return nil
}

// ReadResult reads a result written by WriteResult. It rejects a file of
// another layout (a version other than aimeter-gbt-training/…).
func ReadResult(r io.Reader) (*ResultFile, error) {
	var res ResultFile
	dec := json.NewDecoder(r)
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("train: reading %s: %w", ResultFileName, err)
	}
	if !strings.HasPrefix(res.Version, "aimeter-gbt-training/") {
		return nil, fmt.Errorf("train: reading %s: version %q, want %s", ResultFileName, res.Version, ResultVersion)
	}
	return &res, nil
}
