package compliance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"aimeter/accuracy"
	"aimeter/bundle"
	"aimeter/loadgen"
	"aimeter/mlperfconf"
)

// Severity grades a Finding.
type Severity string

// The severities of findings: an error makes the folder fail the check.
const (
	SeverityError   Severity = "ERROR"
	SeverityWarning Severity = "WARNING"
)

// Finding is one problem Check found.
type Finding struct {
	Severity Severity
	// Path is the run folder (or file) the finding is about.
	Path string
	// Code names the check ("summary-missing", "invalid", "seeds", …).
	Code    string
	Message string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s %s: %s (%s)", f.Severity, f.Path, f.Message, f.Code)
}

// CheckOptions configures Check.
type CheckOptions struct {
	// MaxAccuracyLogBytes is the largest mlperf_log_accuracy.json a
	// performance-mode run may leave; 0 means 10 MiB (MLPerf truncates
	// accuracy logs above its own limit before submission).
	MaxAccuracyLogBytes int64
}

// Report is the outcome of Check.
type Report struct {
	// Runs are the run folders checked.
	Runs []string
	// Findings are every problem, in the order found.
	Findings []Finding
}

// OK reports whether no finding is an error.
func (r *Report) OK() bool {
	return !slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Severity == SeverityError })
}

// Check validates a result folder: every run folder under root (a folder
// holding an mlperf_log_summary.txt or an aimeter bundle's manifest.json)
// and every audit verification (a TESTnn/verify_*.txt). For each run it
// checks that the logs are present and parse, that an aimeter bundle's
// files still match their manifest digests, that the result is VALID with
// minimum duration, query count and early stopping met, that the
// effective random seeds are the requested ones and MLPerf's official
// ones, that the detail log reports no errors, that an accuracy log parses
// and a performance run's stays small, and that an accuracy check, when
// the bundle has one, passed. A folder with no run at all is a finding.
func Check(root string, opts CheckOptions) (*Report, error) {
	if opts.MaxAccuracyLogBytes == 0 {
		opts.MaxAccuracyLogBytes = 10 << 20
	}
	st, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", root)
	}
	r := &Report{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			r.add(SeverityError, path, "unreadable", "%v", err)
			return nil
		}
		if !d.IsDir() {
			if strings.HasPrefix(d.Name(), "verify_") && strings.HasSuffix(d.Name(), ".txt") && strings.HasPrefix(filepath.Base(filepath.Dir(path)), "TEST") {
				r.checkVerification(path)
			}
			return nil
		}
		if exists(filepath.Join(path, "mlperf_log_summary.txt")) || exists(filepath.Join(path, bundle.ManifestFile)) {
			// TESTnn/performance/run_1 holds copies of an audit run's
			// logs: checked as the audit's, not as a run.
			if strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(path))), "TEST") && filepath.Base(filepath.Dir(path)) == "performance" {
				return nil
			}
			r.Runs = append(r.Runs, path)
			r.checkRun(path, opts)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(r.Runs) == 0 {
		r.add(SeverityError, root, "no-runs", "no run folder (mlperf_log_summary.txt or manifest.json) under it")
	}
	return r, nil
}

func (r *Report) add(sev Severity, path, code, format string, args ...any) {
	r.Findings = append(r.Findings, Finding{Severity: sev, Path: path, Code: code, Message: fmt.Sprintf(format, args...)})
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// checkVerification checks an audit's verification output.
func (r *Report) checkVerification(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		r.add(SeverityError, path, "audit-unreadable", "%v", err)
		return
	}
	if !bytes.Contains(b, []byte("TEST PASS")) {
		last := strings.TrimSpace(string(b))
		if i := strings.LastIndexByte(last, '\n'); i >= 0 {
			last = last[i+1:]
		}
		r.add(SeverityError, path, "audit-fail", "the audit did not pass: %q", last)
	}
}

// detail is what checkRun reads from mlperf_log_detail.txt: the last value
// of each key, and the entries flagged as errors.
type detail struct {
	values map[string]json.RawMessage
	errors []string
}

func readDetail(path string) (*detail, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseDetail(f)
}

// parseDetail reads the :::MLLOG lines of a detail log.
func parseDetail(r io.Reader) (*detail, error) {
	d := &detail{values: map[string]json.RawMessage{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		text, ok := strings.CutPrefix(sc.Text(), ":::MLLOG ")
		if !ok {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			return d, fmt.Errorf("line %d: not an :::MLLOG entry", line)
		}
		var e struct {
			Key      string          `json:"key"`
			Value    json.RawMessage `json:"value"`
			Metadata struct {
				IsError bool `json:"is_error"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(text), &e); err != nil {
			return d, fmt.Errorf("line %d: %v", line, err)
		}
		d.values[e.Key] = e.Value
		if e.Metadata.IsError {
			d.errors = append(d.errors, fmt.Sprintf("%s: %s", e.Key, e.Value))
		}
	}
	return d, sc.Err()
}

func (d *detail) str(key string) string {
	var s string
	if json.Unmarshal(d.values[key], &s) == nil {
		return s
	}
	return strings.TrimSpace(string(d.values[key]))
}

// checkRun checks one run folder.
func (r *Report) checkRun(dir string, opts CheckOptions) {
	if exists(filepath.Join(dir, bundle.ManifestFile)) {
		b, err := bundle.Read(dir)
		switch {
		case err != nil:
			var de *bundle.DigestError
			if errors.As(err, &de) {
				r.add(SeverityError, dir, "digest", "%v", err)
			} else {
				r.add(SeverityError, dir, "bundle", "the run bundle cannot be read: %v", err)
			}
		case b.AccuracyCheck != nil && b.AccuracyCheck.Target > 0 && !b.AccuracyCheck.Pass:
			r.add(SeverityError, dir, "accuracy", "%s %.4f is below its target %.4f", b.AccuracyCheck.Metric, b.AccuracyCheck.Value, b.AccuracyCheck.Target)
		}
	}
	summaryPath := filepath.Join(dir, "mlperf_log_summary.txt")
	summary, err := os.ReadFile(summaryPath)
	if err != nil {
		r.add(SeverityError, dir, "summary-missing", "no readable mlperf_log_summary.txt: %v", err)
	}
	d, err := readDetail(filepath.Join(dir, "mlperf_log_detail.txt"))
	if err != nil {
		r.add(SeverityError, dir, "detail", "mlperf_log_detail.txt: %v", err)
		if d == nil {
			return
		}
	}
	mode := d.str("effective_test_mode")
	performance := mode == "PerformanceOnly" || mode == "SubmissionRun" || mode == ""
	if summary != nil && performance {
		switch {
		case bytes.Contains(summary, []byte("Result is : VALID")):
		case bytes.Contains(summary, []byte("Result is : INVALID")):
			r.add(SeverityError, dir, "invalid", "the result is INVALID")
		default:
			r.add(SeverityError, dir, "summary", "mlperf_log_summary.txt has no \"Result is\" line")
		}
	}
	if performance {
		for _, c := range []struct{ key, what string }{
			{"result_min_duration_met", "the minimum duration was not met"},
			{"result_min_queries_met", "the minimum query count was not met"},
			{"early_stopping_met", "early stopping was not satisfied"},
		} {
			if v, ok := d.values[c.key]; ok && string(v) == "false" {
				r.add(SeverityError, dir, strings.TrimPrefix(c.key, "result_"), "%s (%s is false)", c.what, c.key)
			}
		}
	}
	r.checkSeeds(dir, d)
	for _, e := range d.errors {
		r.add(SeverityError, dir, "detail-error", "the detail log reports an error: %s", e)
	}
	accPath := filepath.Join(dir, "mlperf_log_accuracy.json")
	if st, err := os.Stat(accPath); err == nil {
		if performance && st.Size() > opts.MaxAccuracyLogBytes {
			r.add(SeverityWarning, dir, "accuracy-log-size", "mlperf_log_accuracy.json of a performance run is %d bytes, above %d (MLPerf truncates it before submission)", st.Size(), opts.MaxAccuracyLogBytes)
		}
		f, err := os.Open(accPath)
		if err == nil {
			_, err = accuracy.ReadLog(f)
			f.Close()
		}
		if err != nil {
			r.add(SeverityError, dir, "accuracy-log", "mlperf_log_accuracy.json: %v", err)
		}
	} else if !performance {
		r.add(SeverityError, dir, "accuracy-log", "an accuracy run without mlperf_log_accuracy.json")
	}
}

// checkSeeds compares the effective seeds with the requested ones and
// with MLPerf's official ones (the built-in mlperf.conf).
func (r *Report) checkSeeds(dir string, d *detail) {
	official, _, err := mlperfconf.LoadSettings(mlperfconf.LoadOptions{Scenario: loadgen.Offline})
	if err != nil {
		r.add(SeverityWarning, dir, "seeds", "the official seeds cannot be read: %v", err)
		return
	}
	for _, s := range []struct {
		name string
		want uint64
	}{{"qsl_rng_seed", official.QSLRNGSeed}, {"sample_index_rng_seed", official.SampleIndexRNGSeed}, {"schedule_rng_seed", official.ScheduleRNGSeed}} {
		eff, req := d.str("effective_"+s.name), d.str("requested_"+s.name)
		switch {
		case eff == "":
			r.add(SeverityError, dir, "seeds", "the detail log has no effective_%s", s.name)
		case req != "" && eff != req:
			r.add(SeverityError, dir, "seeds", "effective_%s %s differs from the requested %s", s.name, eff, req)
		case eff != fmt.Sprint(s.want):
			r.add(SeverityWarning, dir, "seeds", "%s is %s, not the official %d of mlperf.conf", s.name, eff, s.want)
		}
	}
}
