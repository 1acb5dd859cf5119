package gbt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"aimeter/gbt/testinfo"
)

// MainMode is the mode of the test's main jobs: *UnderlyingMode for a
// mixed test (mode 5) that names it, else Arrival.Mode.
func (t *Test) MainMode() ArrivalMode {
	if t.Arrival.Mode == ModeMixed && t.UnderlyingMode != nil {
		return *t.UnderlyingMode
	}
	return t.Arrival.Mode
}

// TestFormat names the version of the test-description file.
const TestFormat = "aimeter-gbt-test/1"

// TestFileName is the test description's file in a run directory.
const TestFileName = "gbt_test.json"

// Test describes one GB/T 45087 inference test: what was asked for and
// what was scheduled, but no measured value. It is a raw part of a run: with
// the records and stage times it determines gbt_result.json (Evaluate,
// WriteResultFile) and gbt_inference.log (WriteInferenceLog), so both can
// be regenerated from the stored run byte for byte.
type Test struct {
	// Format is TestFormat; WriteTest fills it in.
	Format string `json:"format"`
	// Generator names the program and version that ran the test.
	Generator string `json:"generator,omitempty"`
	// Scenario is the Tables 11–14 scenario ID, e.g. "T11-2", when one was
	// named (GB-7.4.5).
	Scenario string `json:"scenario,omitempty"`
	// Arrival is the arrival of the test's main jobs as scheduled: Mode is
	// the test's mode (5 for a mixed test), BurstStarts the placed bursts
	// of a peak test, Seed its seed and Timeout the job timeout threshold
	// (GB-7.4.2, IN-53).
	Arrival Arrival `json:"arrival"`
	// UnderlyingMode is the mode of the main jobs of a mixed test (mode 5,
	// GB-7.4.2-T10-mode5); nil otherwise.
	UnderlyingMode *ArrivalMode `json:"underlying_mode,omitempty"`
	// Mixed holds the foreign workload of a mixed test (IN-50); nil
	// otherwise.
	Mixed *Mixed `json:"mixed,omitempty"`
	// TimeoutClass is the Table 10 threshold column used (1 or 2).
	TimeoutClass TimeoutClass `json:"timeout_class,omitempty"`
	// LossThreshold is the permissible loss rate, a fraction in [0, 1]
	// (GB-7.7.1-c-2; the standard sets none, IN-79).
	LossThreshold float64 `json:"loss_threshold"`
	// SampleBytes is the input size of one sample, for the data-volume
	// metrics of peak tests (elasticity, pressure tolerance).
	SampleBytes int64 `json:"sample_bytes"`
	// Schedule is the seed and the hash of the scheduled job offsets
	// (IN-53), computed by Plan from the offsets it scheduled.
	Schedule ScheduleInfo `json:"schedule,omitzero"`
	// Start is the wall-clock time of the run's time zero (the records'
	// nanosecond offsets count from it), in the location of the inference
	// log's timestamps (GB-7.3-f).
	Start time.Time `json:"start"`
	// EndNs is when the run ended, from Start: lost samples that no
	// timeout bounds count as lost then.
	EndNs int64 `json:"end_ns"`
	// Info is the test information of 7.1 a) (GB-6.1).
	Info testinfo.Info `json:"test_info"`
	// Precision is the numeric precision actually used (GB-7.3-c).
	Precision testinfo.PrecisionList `json:"precision,omitempty"`
	// Accuracy are the accuracy results, when an accuracy pass ran.
	Accuracy []AccuracyResult `json:"accuracy,omitempty"`
	// Correct is the online score of the SUT's answers, one byte per QSL
	// sample index: '1' the answer matched the ground truth, '0' it did
	// not, '-' the sample was not scored. Empty when no scorer was
	// available for the data set. The run scores each answer as it
	// returns, so the inference log's cumulative accuracy (GB-7.3-f-2) is a
	// function of the stored run, without its labels or responses.
	Correct string `json:"correct,omitempty"`
	// Lifecycle are the test's lifecycle events (GB-7.7.1-j-1).
	Lifecycle LifecycleEvents `json:"lifecycle"`
	// Notes are free-text remarks carried into gbt_result.json.
	Notes []string `json:"notes,omitempty"`
}

// Mixed is the foreign workload of a mixed-mode test (GB-7.4.2-T10-mode5,
// IN-50): Poisson jobs with their own QSL and accounting, run beside the
// main jobs on the same SUT.
type Mixed struct {
	// Lambda is the foreign jobs' Poisson rate in jobs per second.
	Lambda float64 `json:"lambda"`
	// QSLSize is the number of samples in the foreign jobs' own QSL.
	QSLSize uint64 `json:"qsl_size"`
	// Seed is the seed of the foreign jobs' schedule.
	Seed uint64 `json:"seed"`
}

// LogLocation returns the location of the inference log's timestamps: that
// of Start.
func (t *Test) LogLocation() *time.Location { return t.Start.Location() }

// WriteTest writes t as indented JSON, the content of gbt_test.json.
func WriteTest(w io.Writer, t Test) error {
	if t.Format == "" {
		t.Format = TestFormat
	}
	return writeJSON(w, t, TestFileName)
}

// ReadTest reads a test description written by WriteTest. A file of another
// format version is refused with the version named; unknown fields are
// errors; numbers in Info.Extra are read as json.Number, so that writing the
// description back reproduces the file.
func ReadTest(r io.Reader) (Test, error) {
	var t Test
	if err := readJSON(r, &t, TestFileName, TestFormat); err != nil {
		return Test{}, err
	}
	return t, nil
}

// readJSON decodes one JSON object of the given format into v, strictly.
// The format is checked first, so that a file of another version is named
// as such rather than refused for a field it has.
func readJSON(r io.Reader, v any, file, format string) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("gbt: reading %s: %w", file, err)
	}
	var head struct {
		Format string `json:"format"`
	}
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&head); err != nil {
		return fmt.Errorf("gbt: reading %s: %w", file, err)
	}
	if head.Format != format {
		return fmt.Errorf("gbt: reading %s: written as format %q, this aimeter reads %q", file, head.Format, format)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("gbt: reading %s: %w", file, err)
	}
	if dec.More() {
		return fmt.Errorf("gbt: reading %s: data after the object", file)
	}
	return nil
}

// writeJSON writes v as indented JSON without HTML escaping, naming file in
// an error.
func writeJSON(w io.Writer, v any, file string) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("gbt: encoding %s: %w", file, err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("gbt: writing %s: %w", file, err)
	}
	return nil
}
