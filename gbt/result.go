package gbt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"aimeter/gbt/testinfo"
)

// ResultFormat identifies the version of the gbt_result.json layout.
const ResultFormat = "aimeter-gbt-result/2"

// ResultFileName is the name of the result file in a test's result
// directory (GB-7.7.1-l).
const ResultFileName = "gbt_result.json"

// ResultFile is the content of gbt_result.json, the inference test results
// of 7.3 (GB-7.3-a … GB-7.3-d, GB-7.7.1-j-2). WriteResultFile writes the
// fields in the order declared here. NewResultFile builds it from a test
// description and its metrics.
type ResultFile struct {
	// Format is ResultFormat; WriteResultFile fills it in when empty.
	Format string `json:"format"`
	// Generator names the test system that wrote the result, e.g.
	// "aimeter v0.3.0 (1a2b3c4d5e6f)".
	Generator string `json:"generator,omitempty"`
	// Info is the test information of 7.1 a) (GB-7.3-a).
	Info testinfo.Info `json:"test_info"`
	// Scenario is the catalogue ID of the scenario row, e.g. "T11-2".
	Scenario string `json:"scenario,omitempty"`
	// Arrival is the arrival mode number (Arrival.Mode, GB-7.3-b) with its
	// parameters, its timeout-control threshold and its seed.
	Arrival Arrival `json:"arrival"`
	// UnderlyingMode is the mode a mixed-mode (5) run adds foreign jobs to
	// (GB-7.4.2-T10-mode5, IN-50); nil for the other modes.
	UnderlyingMode *ArrivalMode `json:"underlying_mode,omitempty"`
	// TimeoutClass is the Table 10 threshold column used (GB-7.4.2-T10-FNa).
	TimeoutClass TimeoutClass `json:"timeout_class,omitempty"`
	// Precision is the numeric precision actually used for inference
	// (GB-7.3-c, IN-13).
	Precision testinfo.PrecisionList `json:"precision"`
	// Accuracy holds the quality metric(s) and the threshold verdicts
	// (GB-7.2-d, GB-7.3-d); empty for a performance-only run.
	Accuracy []AccuracyResult `json:"accuracy,omitempty"`
	// Metrics are the metrics of 7.6 (GB-7.3-d), as Evaluate computes them.
	Metrics Metrics `json:"metrics"`
	// Lifecycle holds the times of the events of 7.7.1 j) 1)
	// (GB-7.7.1-j-1).
	Lifecycle LifecycleEvents `json:"lifecycle"`
	// Schedule is the seed and hash of the arrival schedule (IN-53).
	Schedule ScheduleInfo `json:"schedule,omitzero"`
	// LogUTCOffset is the UTC offset of the inference log's timestamps,
	// e.g. "+08:00" (IN-04); see UTCOffset.
	LogUTCOffset string `json:"log_utc_offset,omitempty"`
	// Notes are remarks for the tester's validity judgement (GB-7.7.1-j-4),
	// e.g. unsynchronised clocks (IN-69) or a corrected threshold (IN-57).
	Notes []string `json:"notes,omitempty"`
}

// AccuracyResult is one quality metric of a run against its threshold
// (GB-7.2-d, IN-13).
type AccuracyResult struct {
	// Metric is the metric's name, e.g. "Top1 accuracy".
	Metric string `json:"metric"`
	// Value is the measured value as a fraction (IN-87); nil when it could
	// not be computed.
	Value *float64 `json:"value"`
	// Threshold is the threshold applied, nil when none is set (IN-60).
	Threshold *Threshold `json:"threshold,omitempty"`
	// Pass is the verdict, nil without a value or a threshold.
	Pass *bool `json:"pass,omitempty"`
	// Note qualifies the result (e.g. a translation direction).
	Note string `json:"note,omitempty"`
}

// Evaluate returns the AccuracyResult of a measured value, given as a
// fraction (IN-87), against the threshold.
func (t Threshold) Evaluate(fraction float64) AccuracyResult {
	v, p, th := fraction, t.Pass(fraction), t
	return AccuracyResult{Metric: t.Metric, Value: &v, Threshold: &th, Pass: &p, Note: t.Note}
}

// ScheduleInfo identifies the arrival schedule of a run so that every system
// of a batch can be shown to have seen the same arrivals (IN-53,
// GB-7.4.5-T11-FNa).
type ScheduleInfo struct {
	// Seed is the seed the schedule was drawn from (Arrival.Seed, or LoadGen's
	// schedule seed for the Poisson mode).
	Seed uint64 `json:"seed"`
	// Hash is ScheduleHash of the arrival offsets.
	Hash string `json:"hash,omitempty"`
}

// UTCOffset returns the UTC offset of t's location at t, as "+08:00".
func UTCOffset(t time.Time) string { return t.Format("-07:00") }

// Validate checks what the results must contain (GB-7.3): an arrival mode of
// Table 10 (GB-7.3-b, GB-7.4.2; mixed mode with its underlying mode), the
// precision used (GB-7.3-c, one or more of GB-6.7.1-d), the test start and
// end in order (GB-7.7.1-j-1), and the schedule hash of the seeded modes 2,
// 3 and 5 (IN-53). It does not validate Info; call ValidateInfo for that.
func (r ResultFile) Validate() error {
	var errs []error
	if _, ok := ArrivalModeOf(r.Arrival.Mode); !ok {
		errs = append(errs, fmt.Errorf("arrival.mode %d is not a mode of Table 10 (GB-7.4.2)", r.Arrival.Mode))
	}
	switch {
	case r.Arrival.Mode == ModeMixed && r.UnderlyingMode == nil:
		errs = append(errs, errors.New("underlying_mode is missing: a mixed-mode run adds jobs to one of the modes 0–4 (GB-7.4.2-T10-mode5)"))
	case r.Arrival.Mode == ModeMixed && (*r.UnderlyingMode < ModeContinuous || *r.UnderlyingMode > ModeOffline):
		errs = append(errs, fmt.Errorf("underlying_mode %d is not one of the modes 0–4 (GB-7.4.2-T10-mode5)", *r.UnderlyingMode))
	case r.Arrival.Mode != ModeMixed && r.UnderlyingMode != nil:
		errs = append(errs, fmt.Errorf("underlying_mode is set but arrival.mode is %d, not mixed (5)", r.Arrival.Mode))
	}
	if len(r.Precision) == 0 {
		errs = append(errs, errors.New("precision is missing: the results state the precision actually used (GB-7.3-c)"))
	} else if err := r.Precision.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := r.Lifecycle.Validate(); err != nil {
		errs = append(errs, err)
	}
	if r.Lifecycle.TestStart.IsZero() || r.Lifecycle.TestEnd.IsZero() {
		errs = append(errs, errors.New("lifecycle needs test_start and test_end (GB-7.7.1-j-1)"))
	}
	switch r.Arrival.Mode {
	case ModePoisson, ModePeak, ModeMixed:
		if r.Schedule.Hash == "" {
			errs = append(errs, fmt.Errorf("schedule.hash is missing: mode %d draws a seeded schedule whose hash the results record (IN-53)", r.Arrival.Mode))
		}
	}
	for i, a := range r.Accuracy {
		if a.Value != nil && (math.IsNaN(*a.Value) || math.IsInf(*a.Value, 0)) {
			errs = append(errs, fmt.Errorf("accuracy[%d].value is %v: use null", i, *a.Value))
		}
	}
	return errors.Join(errs...)
}

// SameSchedule reports, as an error, why two results may not be compared as
// one batch: a different scenario or arrival mode, or a missing or
// different schedule hash (IN-53: "refuse to compare results whose schedule
// hashes differ"). Modes 0 and 4 have no schedule to compare.
func SameSchedule(a, b ResultFile) error {
	if a.Scenario != b.Scenario {
		return fmt.Errorf("different scenarios %q and %q", a.Scenario, b.Scenario)
	}
	if a.Arrival.Mode != b.Arrival.Mode {
		return fmt.Errorf("different arrival modes %d and %d", a.Arrival.Mode, b.Arrival.Mode)
	}
	if a.Arrival.Mode == ModeContinuous || a.Arrival.Mode == ModeOffline {
		return nil
	}
	if a.Schedule.Hash == "" || b.Schedule.Hash == "" {
		return errors.New("a schedule hash is missing (IN-53)")
	}
	if a.Schedule.Hash != b.Schedule.Hash {
		return fmt.Errorf("different arrival schedules (hash %.12s… and %.12s…, IN-53)", a.Schedule.Hash, b.Schedule.Hash)
	}
	return nil
}

// NewResultFile assembles the content of gbt_result.json from a run and
// its metrics (Evaluate's): a pure function of the test description and the
// records, so a stored run regenerates the same file.
func NewResultFile(run RunData, m Metrics) ResultFile {
	t := run.Test
	return ResultFile{
		Format:         ResultFormat,
		Generator:      t.Generator,
		Info:           t.Info,
		Scenario:       t.Scenario,
		Arrival:        t.Arrival,
		UnderlyingMode: t.UnderlyingMode,
		TimeoutClass:   t.TimeoutClass,
		Precision:      t.Precision,
		Accuracy:       t.Accuracy,
		Metrics:        m,
		Lifecycle:      t.Lifecycle,
		Schedule:       ScheduleOf(t, run.Main.Records),
		LogUTCOffset:   UTCOffset(t.Start),
		Notes:          t.Notes,
	}
}

// WriteResultFile writes r as indented JSON (two spaces, fields in
// declaration order, no HTML escaping) followed by a line break. It fills
// in Format when empty. A NaN or infinite number anywhere is an error.
func WriteResultFile(w io.Writer, r ResultFile) error {
	if r.Format == "" {
		r.Format = ResultFormat
	}
	return writeJSON(w, r, ResultFileName)
}

// ReadResultFile reads a result written by WriteResultFile. Unknown fields
// and other formats are errors (the format found is named); numbers in
// Info.Extra are read as json.Number, so that writing the result back
// reproduces the file.
func ReadResultFile(rd io.Reader) (ResultFile, error) {
	var r ResultFile
	if err := readJSON(rd, &r, ResultFileName, ResultFormat); err != nil {
		return ResultFile{}, err
	}
	return r, nil
}

// LifecycleEvent is an event of 7.7.1 j) 1) (GB-7.7.1-j-1), in the order the
// standard lists them.
type LifecycleEvent int

// The lifecycle events. The standard's "inference job download" start and
// completion are, in aimeter, the loading of the data set (7.1 b), c)).
const (
	// EventTestStart: the inference test starts.
	EventTestStart LifecycleEvent = iota
	// EventDatasetLoadStart: the inference job (data set) download starts.
	EventDatasetLoadStart
	// EventDatasetLoadEnd: the inference job (data set) download completes.
	EventDatasetLoadEnd
	// EventTestEnd: the inference test ends.
	EventTestEnd
	// EventResultUploadComplete: the inference results have been uploaded.
	// Without a tester service, aimeter marks it just before writing the
	// run directory (bundle.Write), so that the result file records it; a
	// tester service marks it again once the upload completes.
	EventResultUploadComplete
	numLifecycleEvents
)

var lifecycleNames = [numLifecycleEvents]string{
	"test_start", "dataset_load_start", "dataset_load_end", "test_end", "result_upload_complete",
}

// String returns the event's JSON key, e.g. "test_start".
func (e LifecycleEvent) String() string {
	if e < 0 || e >= numLifecycleEvents {
		return fmt.Sprintf("LifecycleEvent(%d)", int(e))
	}
	return lifecycleNames[e]
}

// LifecycleEvents holds the time of each lifecycle event; a zero time means
// the event has not happened. In JSON each time is RFC 3339 with nine
// fractional digits and the UTC offset of its location; events that have
// not happened are left out.
type LifecycleEvents struct {
	// TestStart is when the inference test started ("test_start").
	TestStart time.Time
	// DatasetLoadStart is when the job (data set) download started
	// ("dataset_load_start").
	DatasetLoadStart time.Time
	// DatasetLoadEnd is when the job (data set) download completed
	// ("dataset_load_end").
	DatasetLoadEnd time.Time
	// TestEnd is when the inference test ended ("test_end").
	TestEnd time.Time
	// ResultUploadComplete is when the result upload completed
	// ("result_upload_complete").
	ResultUploadComplete time.Time
}

// RFC3339Nanos is the layout of the lifecycle times: RFC 3339 with a fixed
// nine-digit fraction.
const RFC3339Nanos = "2006-01-02T15:04:05.000000000Z07:00"

func (ev *LifecycleEvents) field(e LifecycleEvent) *time.Time {
	switch e {
	case EventTestStart:
		return &ev.TestStart
	case EventDatasetLoadStart:
		return &ev.DatasetLoadStart
	case EventDatasetLoadEnd:
		return &ev.DatasetLoadEnd
	case EventTestEnd:
		return &ev.TestEnd
	case EventResultUploadComplete:
		return &ev.ResultUploadComplete
	}
	return nil
}

// Time returns the time of an event (zero if it has not happened).
func (ev LifecycleEvents) Time(e LifecycleEvent) time.Time {
	if p := ev.field(e); p != nil {
		return *p
	}
	return time.Time{}
}

// Validate checks that the events that happened are in the standard's
// order: test start, data set load start, load end, test end, upload.
func (ev LifecycleEvents) Validate() error {
	var prev LifecycleEvent = -1
	var prevT time.Time
	for e := range numLifecycleEvents {
		t := ev.Time(e)
		if t.IsZero() {
			continue
		}
		if prev >= 0 && t.Before(prevT) {
			return fmt.Errorf("lifecycle event %s (%s) is before %s (%s) (GB-7.7.1-j-1)",
				e, t.Format(RFC3339Nanos), prev, prevT.Format(RFC3339Nanos))
		}
		prev, prevT = e, t
	}
	return nil
}

// MarshalJSON writes the events that happened, in order.
func (ev LifecycleEvents) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for e := range numLifecycleEvents {
		t := ev.Time(e)
		if t.IsZero() {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&b, "%q:%q", e.String(), t.Format(RFC3339Nanos))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes; unknown keys are errors.
func (ev *LifecycleEvents) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*ev = LifecycleEvents{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		i := slices.Index(lifecycleNames[:], k)
		if i < 0 {
			return fmt.Errorf("unknown lifecycle event %q (want one of %s)", k, strings.Join(lifecycleNames[:], ", "))
		}
		t, err := time.Parse(time.RFC3339Nano, m[k])
		if err != nil {
			return fmt.Errorf("lifecycle event %s: %v", k, err)
		}
		*ev.field(LifecycleEvent(i)) = t
	}
	return nil
}

// Lifecycle records the lifecycle events of a test as they happen
// (GB-7.7.1-j-1) so that the tester can monitor the test process
// (GB-7.7.1-j). It is safe for concurrent use; the zero value uses
// time.Now.
type Lifecycle struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Notify, if set, is called with each event as it is marked, outside
	// the Lifecycle's lock (e.g. to print progress or tell the tester).
	Notify func(LifecycleEvent, time.Time)

	mu sync.Mutex
	ev LifecycleEvents
}

// Mark records that an event happens now and returns its time (without a
// monotonic clock reading). Marking an event twice is an error that keeps the
// first time; so is an event outside the five.
func (l *Lifecycle) Mark(e LifecycleEvent) (time.Time, error) {
	if e < 0 || e >= numLifecycleEvents {
		return time.Time{}, fmt.Errorf("gbt: unknown lifecycle event %d", int(e))
	}
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	t := now().Round(0)
	l.mu.Lock()
	p := l.ev.field(e)
	if !p.IsZero() {
		first := *p
		l.mu.Unlock()
		return first, fmt.Errorf("gbt: lifecycle event %s already marked at %s", e, first.Format(RFC3339Nanos))
	}
	*p = t
	notify := l.Notify
	l.mu.Unlock()
	if notify != nil {
		notify(e, t)
	}
	return t, nil
}

// Events returns the events marked so far.
func (l *Lifecycle) Events() LifecycleEvents {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ev
}
