package compliance

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// AccuracyVerification is the outcome of TEST01's accuracy verification,
// as MLPerf's TEST01/verify_accuracy.py (its default mode, --dtype byte)
// computes and prints it.
type AccuracyVerification struct {
	Pass bool
	// Output is what the script prints.
	Output string
	// The script's counts.
	AccEntries, AccDuplicateKeys, AccDataMismatch  int
	PerfEntries, PerfQSLIdxMatch, PerfDataMismatch int
	MissingQSLIdxs                                 int
}

// accEntry is an entry of mlperf_log_accuracy.json as the script reads
// it: the sample index and the data's hex.
type accEntry struct {
	QSLIdx uint64 `json:"qsl_idx"`
	Data   string `json:"data"`
}

func readAccuracyLog(path string) ([]accEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var entries []accEntry
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(&entries); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, e := range entries {
		if _, err := hex.DecodeString(e.Data); err != nil {
			return nil, fmt.Errorf("%s: entry %d (qsl_idx %d): data is not hex: %w", path, i, e.QSLIdx, err)
		}
	}
	return entries, nil
}

// VerifyAccuracyFiles compares the accuracy log of a performance-mode run
// (test, which logged a sample of its responses) with that of the accuracy
// run (ref), as TEST01's verify_accuracy.py: for every logged sample whose
// index the accuracy run also answered, the first byte of the two
// responses must be equal (or both empty); the test passes with no
// mismatch and at least one match. Later entries of the test log replace
// earlier ones of the same index, as in the script.
func VerifyAccuracyFiles(ref, test string) (AccuracyVerification, error) {
	acc, err := readAccuracyLog(ref)
	if err != nil {
		return AccuracyVerification{}, err
	}
	perf, err := readAccuracyLog(test)
	if err != nil {
		return AccuracyVerification{}, err
	}
	var v AccuracyVerification
	results := map[uint64]string{}
	for _, e := range acc {
		if d, ok := results[e.QSLIdx]; ok {
			v.AccDuplicateKeys++
			if d != e.Data {
				v.AccDataMismatch++
			}
		} else {
			results[e.QSLIdx] = e.Data
		}
	}
	for _, e := range perf {
		data, _ := hex.DecodeString(e.Data)
		if ref, ok := results[e.QSLIdx]; ok {
			v.PerfQSLIdxMatch++
			refData, _ := hex.DecodeString(ref)
			if len(refData) == 0 || len(data) == 0 {
				if len(refData) != len(data) {
					v.PerfDataMismatch++
				}
			} else if data[0] != refData[0] {
				v.PerfDataMismatch++
			}
		} else {
			v.MissingQSLIdxs++
		}
		results[e.QSLIdx] = e.Data
	}
	v.AccEntries, v.PerfEntries = len(acc), len(perf)
	var b strings.Builder
	b.WriteString("Verifying accuracy. This might take a while...\nReading accuracy mode results...\nReading performance mode results...\n")
	fmt.Fprintf(&b, "num_acc_log_entries = %d\nnum_acc_log_duplicate_keys = %d\nnum_acc_log_data_mismatch = %d\n", v.AccEntries, v.AccDuplicateKeys, v.AccDataMismatch)
	fmt.Fprintf(&b, "num_perf_log_entries = %d\nnum_perf_log_qsl_idx_match = %d\nnum_perf_log_data_mismatch = %d\n", v.PerfEntries, v.PerfQSLIdxMatch, v.PerfDataMismatch)
	fmt.Fprintf(&b, "num_missing_qsl_idxs = %d\n", v.MissingQSLIdxs)
	v.Pass = v.PerfDataMismatch == 0 && v.PerfQSLIdxMatch > 0
	if v.Pass {
		b.WriteString("TEST PASS\n\n")
	} else {
		b.WriteString("TEST FAIL\n\n")
	}
	v.Output = b.String()
	return v, nil
}

// detailScoreKeys are the detail-log keys of each scenario's score, as
// TEST01's verify_performance.py reads them.
var detailScoreKeys = map[string]string{
	"Offline":      "result_samples_per_second",
	"SingleStream": "early_stopping_latency_ss",
	"MultiStream":  "early_stopping_latency_ms",
	"Server":       "result_completed_samples_per_sec",
}

// VerifyDetailPerformanceFiles compares the detail logs of the reference
// and audit performance runs as TEST01's verify_performance.py: both
// VALID, the same scenario (and, for Server, target latency), and the
// test's score within ±10 % of the reference's (±20 % for SingleStream
// references up to 200,000 and MultiStream ones up to 1,600,000; the
// score is the scenario's key of detailScoreKeys, a latency for
// SingleStream and MultiStream, as the script reads it).
func VerifyDetailPerformanceFiles(ref, test string) (Verification, error) {
	var v Verification
	var out strings.Builder
	out.WriteString("Verifying performance.\n")
	fail := func(msg string) (Verification, error) {
		out.WriteString(msg + "\n")
		v.Output = out.String()
		return v, nil
	}
	read := func(path string) (scenario string, score float64, latency string, valid bool, err error) {
		f, err := os.Open(path)
		if err != nil {
			return "", 0, "", false, err
		}
		defer f.Close()
		d, err := parseDetail(f)
		if err != nil {
			return "", 0, "", false, fmt.Errorf("%s: %w", path, err)
		}
		scenario = d.str("effective_scenario")
		key, ok := detailScoreKeys[scenario]
		if !ok {
			return scenario, 0, "", false, fmt.Errorf("%s: unknown scenario %q", path, scenario)
		}
		if err := json.Unmarshal(d.values[key], &score); err != nil {
			return scenario, 0, "", false, fmt.Errorf("%s: %s: %v", path, key, err)
		}
		return scenario, score, d.str("effective_target_latency_ns"), d.str("result_validity") == "VALID", nil
	}
	rs, rScore, rLat, rValid, err := read(ref)
	if err != nil {
		return v, err
	}
	if !rValid {
		return fail("TEST FAIL: Invalid results in " + ref)
	}
	ts, tScore, tLat, tValid, err := read(test)
	if err != nil {
		return v, err
	}
	if !tValid {
		return fail("TEST FAIL: Invalid results in " + test)
	}
	v.Scenario, v.RefScore, v.TestScore = rs, rScore, tScore
	if ts != rs {
		return fail("TEST FAIL: Test and reference scenarios do not match!")
	}
	if rs == "Server" && tLat != rLat {
		return fail("TEST FAIL: Server target latency mismatch")
	}
	fmt.Fprintf(&out, "Reference score = %s\nTest score = %s\n", pyFloat(rScore), pyFloat(tScore))
	v.Threshold = 0.10
	if (rs == "SingleStream" && rScore <= 200000) || (rs == "MultiStream" && rScore <= 1600000) {
		v.Threshold = 0.20
	}
	if rScore*(1-v.Threshold) <= tScore && tScore <= rScore*(1+v.Threshold) {
		v.Pass = true
		out.WriteString("TEST PASS\n")
	} else {
		out.WriteString("TEST FAIL: Test score invalid\n")
	}
	v.Output = out.String()
	return v, nil
}
