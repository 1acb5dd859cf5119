package compliance

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"aimeter/bundle"
	"aimeter/loadgen"
)

// AccuracyVerification is the outcome of a verification of accuracy logs
// (TEST01, TEST06, TEST07, TEST09).
type AccuracyVerification struct {
	Pass bool
	// Output is what MLPerf's script prints or writes into the test's
	// verify_accuracy.txt (TEST09: verify_output_len.txt), line for line.
	Output string
	// Files are further files of TESTnn/accuracy/ (TEST01's fallback:
	// baseline_accuracy.txt, compliance_accuracy.txt and
	// mlperf_log_accuracy_baseline.json).
	Files []File
	// Matched and Mismatched count TEST01's compared samples.
	Matched, Mismatched int
}

// File is a file an audit writes besides its verification.
type File struct{ Name, Text string }

// VerifyAccuracyFiles is VerifyAccuracy of two accuracy logs, read with
// ReadAccuracyLog.
func VerifyAccuracyFiles(accuracyLog, testLog, dtype string) (AccuracyVerification, error) {
	acc, err := ReadAccuracyLog(accuracyLog)
	if err != nil {
		return AccuracyVerification{}, err
	}
	test, err := ReadAccuracyLog(testLog)
	if err != nil {
		return AccuracyVerification{}, err
	}
	return VerifyAccuracy(acc, test, dtype, accuracyLog, testLog)
}

// VerifyAccuracy compares the accuracy log of a performance run (test,
// TEST01's sampled log) with that of the accuracy run (acc), as MLPerf's
// TEST01 verify_accuracy.py: each test entry whose sample the accuracy run
// (or an earlier test entry) answered must agree with that answer in its
// first value of dtype, or both be empty; the test passes when no entry
// disagrees and at least one was compared. The names of the logs are for
// errors: data of a length that is no whole number of dtype values is
// one, naming the entry.
func VerifyAccuracy(acc, test []loadgen.AccuracyEntry, dtype, accName, testName string) (AccuracyVerification, error) {
	var v AccuracyVerification
	if _, err := dtypeSize(dtype); err != nil {
		return v, err
	}
	type answer struct {
		data []byte
		what func() string
	}
	known := map[uint64]answer{}
	dup, accMismatch, missing := 0, 0, 0
	for i, e := range acc {
		if a, ok := known[e.QSLIndex]; ok {
			dup++
			if string(a.data) != string(e.Data) {
				accMismatch++
			}
			continue
		}
		known[e.QSLIndex] = answer{e.Data, entryName(accName, i, e)}
	}
	for i, e := range test {
		what := entryName(testName, i, e)
		got, err := values(e.Data, dtype, what)
		if err != nil {
			return v, err
		}
		if a, ok := known[e.QSLIndex]; ok {
			v.Matched++
			want, err := values(a.data, dtype, a.what)
			if err != nil {
				return v, err
			}
			if len(want) == 0 || len(got) == 0 {
				if len(want) != len(got) {
					v.Mismatched++
				}
			} else if got[0] != want[0] {
				v.Mismatched++
			}
		} else {
			missing++
		}
		known[e.QSLIndex] = answer{e.Data, what}
	}
	var b strings.Builder
	b.WriteString("Verifying accuracy. This might take a while...\nReading accuracy mode results...\nReading performance mode results...\n")
	fmt.Fprintf(&b, "num_acc_log_entries = %d\nnum_acc_log_duplicate_keys = %d\nnum_acc_log_data_mismatch = %d\n", len(acc), dup, accMismatch)
	fmt.Fprintf(&b, "num_perf_log_entries = %d\nnum_perf_log_qsl_idx_match = %d\nnum_perf_log_data_mismatch = %d\nnum_missing_qsl_idxs = %d\n", len(test), v.Matched, v.Mismatched, missing)
	v.Pass = v.Mismatched == 0 && v.Matched > 0
	if v.Pass {
		b.WriteString("TEST PASS\n\n")
	} else {
		b.WriteString("TEST FAIL\n\n")
	}
	v.Output = b.String()
	return v, nil
}

// fallback is TEST01's answer to responses that differ (MLPerf's TEST01
// README, part III): the samples the audit run logged are scored in both
// runs, the accuracy run's restricted to them (the baseline), and the test
// passes when the scores differ by at most opts.AccuracyDelta (relative).
// The verdict replaces the last line of a's output; the baseline and both
// scores are written beside it.
func (r *AuditResult) fallback(a *AccuracyVerification, opts Options) error {
	accLog, testLog := r.Dir+"/accuracy/mlperf_log_accuracy.json", r.Dir+"/audit/mlperf_log_accuracy.json"
	acc, err := ReadAccuracyLog(accLog)
	if err != nil {
		return err
	}
	test, err := ReadAccuracyLog(testLog)
	if err != nil {
		return err
	}
	if len(test) == 0 {
		return nil // nothing to score: the comparison's TEST FAIL stands
	}
	logged := map[uint64]bool{}
	for _, e := range test {
		logged[e.QSLIndex] = true
	}
	var base []loadgen.AccuracyEntry
	for _, e := range acc {
		if logged[e.QSLIndex] {
			base = append(base, e)
		}
	}
	bs, err := opts.Score(base)
	if err != nil {
		return fmt.Errorf("TEST01 fallback: scoring the baseline (the accuracy run's responses to the %d logged samples): %w", len(logged), err)
	}
	cs, err := opts.Score(test)
	if err != nil {
		return fmt.Errorf("TEST01 fallback: scoring %s: %w", testLog, err)
	}
	delta := math.Abs(cs.Value - bs.Value)
	if bs.Value != 0 {
		delta /= math.Abs(bs.Value)
	}
	pass := delta <= opts.AccuracyDelta
	out := strings.TrimSuffix(a.Output, "TEST FAIL\n\n")
	out += fmt.Sprintf("%d of %d compared responses differ; comparing scores of the %d logged samples instead (baseline fallback):\n", a.Mismatched, a.Matched, len(logged))
	out += fmt.Sprintf("baseline %s = %s\ncompliance %s = %s\nrelative delta = %s (at most %s)\n", bs.Metric, pyFloat(bs.Value), cs.Metric, pyFloat(cs.Value), pyFloat(delta), pyFloat(opts.AccuracyDelta))
	if pass {
		out += "TEST PASS\n\n"
	} else {
		out += "TEST FAIL\n\n"
	}
	a.Output, a.Pass = out, pass
	a.Files = append(a.Files,
		File{"mlperf_log_accuracy_baseline.json", writeAccuracyLog(base)},
		File{"baseline_accuracy.txt", fmt.Sprintf("%s = %s over %d samples\n", bs.Metric, pyFloat(bs.Value), len(logged))},
		File{"compliance_accuracy.txt", fmt.Sprintf("%s = %s over %d samples\n", cs.Metric, pyFloat(cs.Value), len(logged))})
	return nil
}

// VerifyTokensFile is VerifyTokens of an accuracy log read with
// ReadAccuracyLog.
func VerifyTokensFile(path, scenario, dtype string, eos int64) (AccuracyVerification, error) {
	entries, err := ReadAccuracyLog(path)
	if err != nil {
		return AccuracyVerification{}, err
	}
	return VerifyTokens(entries, scenario, dtype, eos, path)
}

// VerifyTokens checks the token IDs an LLM's performance run logged, as
// MLPerf's TEST06 run_verification.py: no answer ends in two or more EOS
// tokens (eos); outside Offline, each answer begins with the first-token
// data reported for it; each answer holds token_count tokens. Output is
// what the script writes into TEST06/verify_accuracy.txt, ending "TEST06
// verification complete" or "TEST06 verification failed". An entry whose
// data is no whole number of dtype values, or that has no token_count, is
// an error naming it.
func VerifyTokens(entries []loadgen.AccuracyEntry, scenario, dtype string, eos int64, name string) (AccuracyVerification, error) {
	var v AccuracyVerification
	eosPass, firstPass, lenPass := true, true, true
	firstCheck := scenario != "Offline"
	for i, e := range entries {
		what := entryName(name, i, e)
		data, err := values(e.Data, dtype, what)
		if err != nil {
			return v, err
		}
		if !e.HasTokens {
			return v, fmt.Errorf("%s: no token_count (TEST06 needs a run with token latencies, use_token_latencies = 1)", what())
		}
		n := 0
		for j := len(data) - 1; j > 0 && data[j] == float64(eos); j-- {
			n++
		}
		if n >= 2 {
			eosPass = false
		}
		if firstCheck {
			first, err := values(e.TokenData, dtype, func() string { return what() + " token_data" })
			if err != nil {
				return v, err
			}
			for k := range min(len(first), len(data)) {
				if first[k] != data[k] {
					firstPass = false
				}
			}
		}
		if int64(len(data)) != e.TokenCount {
			lenPass = false
		}
	}
	var b strings.Builder
	if firstCheck {
		fmt.Fprintf(&b, "First token check pass: %s\n", pyBool(firstPass))
	} else {
		b.WriteString("First token check pass: Skipped\n")
	}
	fmt.Fprintf(&b, "EOS check pass: %s\nSample length check pass: %s\n", pyBool(eosPass), pyBool(lenPass))
	v.Pass = eosPass && firstPass && lenPass
	if v.Pass {
		b.WriteString("TEST06 verification complete\n")
	} else {
		b.WriteString("TEST06 verification failed\n")
	}
	v.Output = b.String()
	return v, nil
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// rule is the 80 '=' of TEST07's and TEST09's outputs.
var rule = strings.Repeat("=", 80)

// VerifyScoreFile is VerifyScore of an accuracy log read with
// ReadAccuracyLog.
func VerifyScoreFile(path string, score func([]loadgen.AccuracyEntry) (*bundle.AccuracyCheck, error), threshold float64) (AccuracyVerification, error) {
	entries, err := ReadAccuracyLog(path)
	if err != nil {
		return AccuracyVerification{}, err
	}
	return VerifyScore(entries, score, threshold)
}

// VerifyScore scores every sample a performance run logged (TEST07) and
// passes when the score is at least threshold, as MLPerf's TEST07
// run_verification.py: Output is the scorer's line followed by the
// script's summary, ending in "TEST PASS" or "TEST FAIL".
func VerifyScore(entries []loadgen.AccuracyEntry, score func([]loadgen.AccuracyEntry) (*bundle.AccuracyCheck, error), threshold float64) (AccuracyVerification, error) {
	var v AccuracyVerification
	if score == nil {
		return v, errors.New("TEST07 needs a scorer of the data set's answers: this data set has no labels")
	}
	if len(entries) == 0 {
		return v, errors.New("TEST07: the performance run logged no responses")
	}
	s, err := score(entries)
	if err != nil {
		return v, fmt.Errorf("TEST07: scoring the performance run's log: %w", err)
	}
	distinct := map[uint64]bool{}
	for _, e := range entries {
		distinct[e.QSLIndex] = true
	}
	v.Pass = s.Value >= threshold
	var b strings.Builder
	fmt.Fprintf(&b, "Scored %d responses (%d samples): '%s': %s\n", len(entries), len(distinct), s.Metric, pyFloat(s.Value))
	fmt.Fprintf(&b, "\n%s\nTEST07 Verification Summary\n%s\n", rule, rule)
	fmt.Fprintf(&b, "Accuracy score: %s\nAccuracy threshold: %s\nAccuracy check pass: %s\n", pyFloat(s.Value), pyFloat(threshold), pyBool(v.Pass))
	if v.Pass {
		b.WriteString("TEST PASS\n")
	} else {
		b.WriteString("TEST FAIL\n")
	}
	v.Output = b.String()
	return v, nil
}

// VerifyOutputLengthFile is VerifyOutputLength of an accuracy log read
// with ReadAccuracyLog.
func VerifyOutputLengthFile(path string, lo, hi float64) (AccuracyVerification, error) {
	entries, err := ReadAccuracyLog(path)
	if err != nil {
		return AccuracyVerification{}, err
	}
	return VerifyOutputLength(entries, lo, hi, path)
}

// VerifyOutputLength checks that the mean output length of the answers a
// performance run logged, in int32 tokens, lies within [lo, hi], as
// MLPerf's TEST09 run_verification.py (which counts whole 4-byte tokens);
// Output is what the script writes into TEST09/verify_output_len.txt. An
// entry whose data is no whole number of tokens is an error naming it.
func VerifyOutputLength(entries []loadgen.AccuracyEntry, lo, hi float64, name string) (AccuracyVerification, error) {
	var v AccuracyVerification
	if len(entries) == 0 {
		return v, errors.New("TEST09: the performance run logged no responses")
	}
	lengths := make([]int, len(entries))
	sum := 0
	for i, e := range entries {
		if len(e.Data)%4 != 0 {
			return v, fmt.Errorf("%s: %d bytes (%d hex digits) of data, not a whole number of 4-byte int32 tokens", entryName(name, i, e)(), len(e.Data), 2*len(e.Data))
		}
		lengths[i] = len(e.Data) / 4
		sum += lengths[i]
	}
	mean := float64(sum) / float64(len(lengths))
	variance := 0.0
	for _, x := range lengths {
		variance += (float64(x) - mean) * (float64(x) - mean)
	}
	variance /= float64(len(lengths))
	minPass, maxPass := mean >= lo, mean <= hi
	v.Pass = minPass && maxPass
	verdict := "TEST FAIL"
	if v.Pass {
		verdict = "TEST PASS"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nTEST09: Verify Output Token Length in Performance Mode\n%s\n\n", rule, rule)
	fmt.Fprintf(&b, "Output Token Length Statistics\n%s\n", strings.Repeat("-", 40))
	fmt.Fprintf(&b, "Total samples: %d\nMean output tokens: %.2f\nMin output tokens: %d\nMax output tokens: %d\nStd deviation: %.2f\n",
		len(lengths), mean, slices.Min(lengths), slices.Max(lengths), math.Sqrt(variance))
	fmt.Fprintf(&b, "\n%s\nVerification Results\n%s\n", rule, rule)
	fmt.Fprintf(&b, "Mean output tokens: %.2f\nMin threshold: %s\nMax threshold: %s\nMin check pass: %s\nMax check pass: %s\n\n%s\n",
		mean, pyFloat(lo), pyFloat(hi), pyBool(minPass), pyBool(maxPass), verdict)
	v.Output = b.String()
	return v, nil
}
