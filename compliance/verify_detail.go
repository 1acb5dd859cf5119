package compliance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// resultField is the detail-log key of each scenario's score.
var resultField = map[string]string{
	"Offline":      "result_samples_per_second",
	"SingleStream": "early_stopping_latency_ss",
	"MultiStream":  "early_stopping_latency_ms",
	"Server":       "result_completed_samples_per_sec",
}

// detailScore is what TEST01's verify_performance.py reads from a detail
// log.
type detailScore struct {
	scenario      string
	score         float64
	targetLatency string
	valid         bool
	hasError      bool
}

func readDetailScore(path string) (detailScore, error) {
	var s detailScore
	d, err := readDetail(path)
	if err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	s.scenario = d.firstStr("effective_scenario")
	key, ok := resultField[s.scenario]
	if !ok {
		return s, fmt.Errorf("%s: effective_scenario %q has no score", path, s.scenario)
	}
	raw, ok := d.first[key]
	if !ok {
		return s, fmt.Errorf("%s: no %s", path, key)
	}
	var f json.Number
	if err := json.Unmarshal(raw, &f); err != nil {
		return s, fmt.Errorf("%s: %s is %s, not a number", path, key, raw)
	}
	if s.score, err = strconv.ParseFloat(string(f), 64); err != nil {
		return s, fmt.Errorf("%s: %s: %w", path, key, err)
	}
	s.valid = d.firstStr("result_validity") == "VALID"
	s.targetLatency = strings.TrimSpace(string(d.first["effective_target_latency_ns"]))
	s.hasError = len(d.errors) > 0
	return s, nil
}

// VerifyDetailPerformanceFiles compares the detail log of a reference
// performance run with that of an audit run, as MLPerf's TEST01
// verify_performance.py: both must be VALID and of the same scenario (and,
// for Server, the same target latency); the test passes when its score
// (samples per second, or the early-stopping latency estimate of
// SingleStream and MultiStream) is within 10 % of the reference's either
// way (20 % for SingleStream latencies up to 200 µs and MultiStream ones
// up to 1.6 ms). Output is what the script prints, line for line, but for
// errors in a detail log, where the script fails on an undefined variable
// (loadgen-reference.md §15) and aimeter warns.
func VerifyDetailPerformanceFiles(refDetail, testDetail string) (Verification, error) {
	var v Verification
	var out strings.Builder
	out.WriteString("Verifying performance.\n")
	fail := func(msg string) (Verification, error) {
		out.WriteString(msg + "\n")
		v.Output = out.String()
		return v, nil
	}
	r, err := readDetailScore(refDetail)
	if err != nil {
		return v, fmt.Errorf("reference detail log: %w", err)
	}
	// The tolerance, set before any early failure too (see VerifyPerformance).
	v.Scenario, v.RefScore, v.Threshold = r.scenario, r.score, scoreThreshold(r.scenario, r.score)
	if !r.valid {
		return fail("TEST FAIL: Invalid results in " + refDetail)
	}
	if r.hasError {
		out.WriteString("WARNING: ERROR reported in " + refDetail + "\n")
	}
	t, err := readDetailScore(testDetail)
	if err != nil {
		return v, fmt.Errorf("test detail log: %w", err)
	}
	if !t.valid {
		return fail("TEST FAIL: Invalid results in " + testDetail)
	}
	if t.hasError {
		out.WriteString("WARNING: ERROR reported in " + testDetail + "\n")
	}
	v.Scenario, v.RefScore, v.TestScore = r.scenario, r.score, t.score
	if t.scenario != r.scenario {
		return fail("TEST FAIL: Test and reference scenarios do not match!")
	}
	if r.scenario == "Server" && t.targetLatency != r.targetLatency {
		return fail("TEST FAIL: Server target latency mismatch")
	}
	fmt.Fprintf(&out, "Reference score = %s\nTest score = %s\n", pyFloat(r.score), pyFloat(t.score))
	if r.score*(1-v.Threshold) <= t.score && t.score <= r.score*(1+v.Threshold) {
		v.Pass = true
		out.WriteString("TEST PASS\n")
	} else {
		out.WriteString("TEST FAIL: Test score invalid\n")
	}
	v.Output = out.String()
	return v, nil
}
