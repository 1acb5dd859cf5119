// Package compliance runs MLPerf's audit tests against any system under
// test that aimeter can drive, through the one-run library entry point
// (benchmark.Run), and verifies them as MLPerf's own run_verification.py
// scripts do, writing the same verification files.
//
// An audit is several ordinary runs of the same plan, each an ordinary
// run bundle (aimeter report regenerates it), plus the verification
// output. The layout under the audit's directory is the one MLPerf's
// scripts read and write:
//
//	accuracy/                   TEST01: the accuracy run (a bundle)
//	performance/run_1/          the reference performance run (a bundle)
//	audit/                      the run under the test's audit.config (a bundle)
//	audit.config                the audit settings that run used
//	TESTnn/verify_performance.txt (TEST01: and verify_accuracy.txt)
//	TESTnn/performance/run_1/   the audit run's summary and detail logs
//	TEST01/accuracy/            the audit run's accuracy log
//
// so that `python3 compliance/TESTnn/run_verification.py -r DIR -c
// DIR/audit -o OUT` accepts the folder too.
//
// TEST01 (loadgen-reference.md §12) checks that the SUT answers in
// performance mode as in accuracy mode: the audit run, in performance
// mode, logs the responses of about 4,096 samples (accuracy_log_rng_seed
// and accuracy_log_sampling_target), whose first bytes must equal the
// accuracy run's for the same samples, and its score must stay within
// 10 % of the reference run's (20 % for short latencies).
//
// TEST04 (loadgen-reference.md §12) detects a SUT that caches results: the
// audit run issues the same sample again and again (performance_issue_same
// at index 3); a SUT that answers a repeated sample faster than a fresh one
// scores more than 10 % above its reference run (20 % for short
// SingleStream and MultiStream latencies) and fails.
package compliance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"aimeter/benchmark"
)

// Test names an audit test.
type Test string

// The audit tests this package runs.
const (
	TEST01 Test = "TEST01"
	TEST04 Test = "TEST04"
)

// Tests lists the audit tests Run knows.
var Tests = []Test{TEST01, TEST04}

// ParseTest returns the test named s ("TEST04", case-insensitive).
func ParseTest(s string) (Test, error) {
	for _, t := range Tests {
		if strings.EqualFold(s, string(t)) {
			return t, nil
		}
	}
	names := make([]string, len(Tests))
	for i, t := range Tests {
		names[i] = string(t)
	}
	return "", fmt.Errorf("unknown audit test %q (known: %s)", s, strings.Join(names, ", "))
}

// scenarios are the scenario names of an audit.config's wildcard keys.
var scenarios = []string{"SingleStream", "MultiStream", "Server", "Offline"}

// AuditConfig returns the audit.config of test: its settings for every
// model ("*") and scenario, in the key = value format of LoadGen's config
// files (read by the settings cascade after mlperf.conf and user.conf).
func AuditConfig(test Test) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# audit.config of %s, written by aimeter (package compliance).\n", test)
	switch test {
	case TEST01:
		// Performance mode, logging the responses of a sample of about
		// 4,096 queries chosen by this seed (MLPerf's TEST01 values).
		for _, sc := range scenarios {
			fmt.Fprintf(&b, "*.%s.mode = 2\n*.%s.accuracy_log_rng_seed = 720381539243781796\n*.%s.accuracy_log_sampling_target = 4096\n", sc, sc, sc)
		}
	case TEST04:
		// A performance run that issues the loaded sample at index 3
		// every time: a cache would serve all but the first.
		for _, sc := range scenarios {
			fmt.Fprintf(&b, "*.%s.mode = 2\n*.%s.performance_issue_unique = 0\n*.%s.performance_issue_same = 1\n*.%s.performance_issue_same_index = 3\n", sc, sc, sc, sc)
		}
	default:
		return "", fmt.Errorf("no audit.config for %s", test)
	}
	return b.String(), nil
}

// Result is an audit's outcome.
type Result struct {
	Test Test
	// Dir is the audit's directory (see the package comment).
	Dir string
	// Pass is the verdict: every verification printed TEST PASS.
	Pass bool
	// Verification is the performance verification, as written to
	// TESTnn/verify_performance.txt; Accuracy (TEST01 only) the accuracy
	// verification of TESTnn/verify_accuracy.txt.
	Verification Verification
	Accuracy     *AccuracyVerification
	// Reference and Audit are the performance runs; AccuracyRun, for
	// TEST01, the accuracy run.
	Reference, Audit, AccuracyRun *benchmark.Outcome
}

// Run runs audit test with the runs it needs, each plan a copy of plan
// with its own OutputDir under plan.OutputDir (which must be set) and,
// for the audit run, the test's audit.config, then verifies them and
// writes the verification files. A run that fails to start or to write
// its bundle is an error; a failing verification is not (Result.Pass is
// false).
func Run(ctx context.Context, test Test, plan benchmark.Plan) (*Result, error) {
	if plan.OutputDir == "" {
		return nil, errors.New("compliance: the plan has no OutputDir")
	}
	conf, err := AuditConfig(test)
	if err != nil {
		return nil, err
	}
	if plan.Settings.Explicit != nil {
		return nil, errors.New("compliance: an audit needs the settings cascade (the audit.config is applied by it); the plan has explicit settings")
	}
	if plan.Settings.AuditConfig != "" {
		return nil, errors.New("compliance: the plan already names an audit.config; the audit brings its own")
	}
	dir := plan.OutputDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	confPath := filepath.Join(dir, "audit.config")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	r := &Result{Test: test, Dir: dir}
	name := func(p *benchmark.Plan, what string) {
		if plan.Name == "" {
			p.Name = string(test) + " " + what
		}
	}
	if test == TEST01 {
		acc := plan
		acc.OutputDir = filepath.Join(dir, "accuracy")
		acc.Settings.Mode = "accuracy"
		name(&acc, "accuracy")
		if r.AccuracyRun, err = runOne(ctx, acc); err != nil {
			return r, fmt.Errorf("%s accuracy run: %w", test, err)
		}
	}
	ref := plan
	ref.OutputDir = filepath.Join(dir, "performance", "run_1")
	ref.Settings.Mode = "performance"
	name(&ref, "reference")
	if r.Reference, err = runOne(ctx, ref); err != nil {
		return r, fmt.Errorf("%s reference run: %w", test, err)
	}
	aud := plan
	aud.OutputDir = filepath.Join(dir, "audit")
	aud.Settings.AuditConfig = confPath
	aud.Settings.Mode = ""
	name(&aud, "audit")
	if r.Audit, err = runOne(ctx, aud); err != nil {
		return r, fmt.Errorf("%s audit run: %w", test, err)
	}
	out := filepath.Join(dir, string(test))
	if err := os.MkdirAll(filepath.Join(out, "performance", "run_1"), 0o755); err != nil {
		return r, err
	}
	var v Verification
	switch test {
	case TEST01:
		av, err := VerifyAccuracyFiles(filepath.Join(dir, "accuracy", "mlperf_log_accuracy.json"), filepath.Join(aud.OutputDir, "mlperf_log_accuracy.json"))
		if err != nil {
			return r, err
		}
		r.Accuracy = &av
		if err := os.WriteFile(filepath.Join(out, "verify_accuracy.txt"), []byte(av.Output), 0o644); err != nil {
			return r, err
		}
		if err := os.MkdirAll(filepath.Join(out, "accuracy"), 0o755); err != nil {
			return r, err
		}
		if err := copyFile(filepath.Join(aud.OutputDir, "mlperf_log_accuracy.json"), filepath.Join(out, "accuracy", "mlperf_log_accuracy.json")); err != nil {
			return r, err
		}
		v, err = VerifyDetailPerformanceFiles(filepath.Join(ref.OutputDir, "mlperf_log_detail.txt"), filepath.Join(aud.OutputDir, "mlperf_log_detail.txt"))
		if err != nil {
			return r, err
		}
	default:
		v, err = VerifyPerformanceFiles(filepath.Join(ref.OutputDir, "mlperf_log_summary.txt"), filepath.Join(aud.OutputDir, "mlperf_log_summary.txt"))
		if err != nil {
			return r, err
		}
	}
	r.Verification = v
	r.Pass = v.Pass && (r.Accuracy == nil || r.Accuracy.Pass)
	if err := os.WriteFile(filepath.Join(out, "verify_performance.txt"), []byte(v.Output), 0o644); err != nil {
		return r, err
	}
	for _, name := range []string{"mlperf_log_summary.txt", "mlperf_log_detail.txt"} {
		if err := copyFile(filepath.Join(aud.OutputDir, name), filepath.Join(out, "performance", "run_1", name)); err != nil {
			return r, err
		}
	}
	return r, nil
}

// runOne runs p; an INVALID result is not an error (the verification
// judges it).
func runOne(ctx context.Context, p benchmark.Plan) (*benchmark.Outcome, error) {
	return benchmark.Run(ctx, p)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// Verification is the outcome of a performance verification, as MLPerf's
// TEST04 verify_performance.py computes and prints it.
type Verification struct {
	Pass bool
	// Output is what the script prints, line by line, ending in "TEST
	// PASS" or a "TEST FAIL: …" line.
	Output string
	// Scenario is the scenario of both runs; RefScore and TestScore their
	// scores (samples per second, or 1e9 over the early-stopping latency
	// estimate for SingleStream and MultiStream); Threshold the fraction
	// by which the test may exceed the reference.
	Scenario            string
	RefScore, TestScore float64
	Threshold           float64
}

// VerifyPerformanceFiles is VerifyPerformance of two summary files.
func VerifyPerformanceFiles(refSummary, testSummary string) (Verification, error) {
	rf, err := os.Open(refSummary)
	if err != nil {
		return Verification{}, err
	}
	defer rf.Close()
	tf, err := os.Open(testSummary)
	if err != nil {
		return Verification{}, err
	}
	defer tf.Close()
	return VerifyPerformance(rf, tf)
}

// summaryScore is what verify_performance.py reads from one summary.
type summaryScore struct {
	scenario  string
	score     float64
	printed   string // the score as the script prints it
	haveScore bool
	// events are the lines the script acts on, in file order: an "N
	// ERROR" count (a warning) and an INVALID result (the script exits
	// there).
	events []summaryEvent
}

type summaryEvent struct {
	kind  string // "errors" or "invalid"
	value string
}

var (
	earlySingle = regexp.MustCompile(`^.*Early stopping (90th|90\.0th|99\.9th) percentile estimate`)
	earlyMulti  = regexp.MustCompile(`^.*Early stopping (99th|99\.0th) percentile estimate`)
	errorCount  = regexp.MustCompile(`^\d+ ERROR`)
)

// readSummary reads a summary as the script does: the line prefixes it
// matches with re.match, the value after the first ": ".
func readSummary(r io.Reader) (summaryScore, error) {
	var s summaryScore
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	value := func(line string) string {
		_, v, _ := strings.Cut(line, ": ")
		return strings.TrimSpace(v)
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Scenario") {
			s.scenario = value(line)
			continue
		}
		var raw string
		inverse := false
		switch s.scenario {
		case "SingleStream":
			if earlySingle.MatchString(line) {
				raw, inverse = value(line), true
			}
		case "MultiStream":
			if earlyMulti.MatchString(line) {
				raw, inverse = value(line), true
			}
		case "Server":
			if strings.HasPrefix(line, "Completed samples per second") {
				raw = value(line)
			}
			// The script also compares the runs' target latencies,
			// on lines matching re.match("target_latency (ns)", …):
			// the parentheses are a regex group, so the pattern wants
			// "target_latency ns" and never meets LoadGen's
			// "target_latency (ns)". Its comparison never runs, and
			// neither does this one.
		case "Offline":
			if strings.HasPrefix(line, "Samples per second") {
				raw = value(line)
			}
		}
		if raw != "" {
			v, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				return s, fmt.Errorf("score %q: %w", raw, err)
			}
			s.printed = raw // Server and Offline: the string as read
			if inverse {
				v = 1e9 / v
				s.printed = pyFloat(v)
			}
			s.score, s.haveScore = v, true
			continue
		}
		if strings.HasPrefix(line, "Result is") && value(line) == "INVALID" {
			s.events = append(s.events, summaryEvent{"invalid", ""})
		}
		if errorCount.MatchString(line) {
			s.events = append(s.events, summaryEvent{"errors", strings.Fields(line)[0]})
		}
	}
	return s, sc.Err()
}

// VerifyPerformance compares the summary of a reference performance run
// with that of an audit run, as MLPerf's TEST04 verify_performance.py: an
// INVALID run fails; the test passes when its score is below the reference's times 1.1 (1.2 for
// SingleStream references up to 200,000 and MultiStream ones up to
// 1,600,000, where run-to-run variation is large). Output is what the
// script prints, line for line.
func VerifyPerformance(ref, test io.Reader) (Verification, error) {
	var v Verification
	var out strings.Builder
	fail := func(msg string) (Verification, error) {
		out.WriteString(msg + "\n")
		v.Output = out.String()
		return v, nil
	}
	out.WriteString("Verifying performance.\n")
	r, err := readSummary(ref)
	if err != nil {
		return v, fmt.Errorf("reference summary: %w", err)
	}
	t, err := readSummary(test)
	if err != nil {
		return v, fmt.Errorf("test summary: %w", err)
	}
	v.Scenario, v.RefScore, v.TestScore = r.scenario, r.score, t.score
	for _, e := range r.events {
		switch e.kind {
		case "errors":
			out.WriteString("WARNING: " + e.value + " ERROR reported in reference results\n")
		case "invalid":
			return fail("TEST FAIL: Reference results are invalid")
		}
	}
	for _, e := range t.events {
		switch e.kind {
		case "errors":
			out.WriteString("WARNING: " + e.value + " ERROR reported in test results\n")
		case "invalid":
			return fail("TEST FAIL: Test results are invalid")
		}
	}
	if t.scenario != r.scenario {
		return fail("Test and reference scenarios do not match!")
	}
	if !r.haveScore || !t.haveScore {
		which := "reference"
		if r.haveScore {
			which = "test"
		}
		return fail("TEST FAIL: no score in the " + which + " summary")
	}
	fmt.Fprintf(&out, "reference score = %s\n", r.printed)
	fmt.Fprintf(&out, "test score = %s\n", t.printed)
	v.Threshold = 0.10
	if (r.scenario == "SingleStream" && r.score <= 200000) || (r.scenario == "MultiStream" && r.score <= 1600000) {
		v.Threshold = 0.20
	}
	if t.score < r.score*(1+v.Threshold) {
		v.Pass = true
		out.WriteString("TEST PASS\n")
	} else {
		out.WriteString("TEST FAIL: Test score invalid\n")
	}
	v.Output = out.String()
	return v, nil
}

// pyFloat formats x as Python's str of a float: the shortest repr, with
// ".0" on integral values and an exponent from 1e16.
func pyFloat(x float64) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if strings.ContainsAny(s, "e") {
		mant, exp, _ := strings.Cut(s, "e")
		e, _ := strconv.Atoi(exp)
		if e >= -4 && e < 16 {
			s = strconv.FormatFloat(x, 'f', -1, 64)
		} else {
			sign := "+"
			if e < 0 {
				sign, e = "-", -e
			}
			return fmt.Sprintf("%se%s%02d", mant, sign, e)
		}
	}
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}
