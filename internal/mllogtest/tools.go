package mllogtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"aimeter/internal/peerstest"
)

// Python returns the python executable of a virtualenv that can import
// mlperf_logging (scripts/install-peers.sh kserve-python installs one), or
// skips t, or fails it under AIMETER_REQUIRE_PEERS=1; see peerstest.Bin.
func Python(t testing.TB) string {
	t.Helper()
	return filepath.Join(peerstest.Bin(t, nil, "mlperf_logging"), "python")
}

// CheckCompliance runs mlperf-logging's compliance checker on file, as
// `python -m mlperf_logging.compliance_checker --usage training --ruleset
// RULESET FILE` (its log file goes to a temporary folder, not the working
// directory). ok is whether the file passed; output is what the checker
// printed, stdout then stderr, warnings included (a passing file
// may have some). err is for a checker that did not run or did not finish
// with a verdict.
func CheckCompliance(pythonBin, file, ruleset string) (ok bool, output string, err error) {
	tmp, err := os.MkdirTemp("", "mllogtest-compliance-")
	if err != nil {
		return false, "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(pythonBin, "-m", "mlperf_logging.compliance_checker",
		"--usage", "training", "--ruleset", ruleset,
		"--log_output", filepath.Join(tmp, "compliance_checker.log"), file)
	stdout, stderr, runErr := run(cmd)
	output = stdout + stderr
	var exit *exec.ExitError
	switch {
	case runErr == nil && strings.Contains(output, "SUCCESS"):
		return true, output, nil
	case errors.As(runErr, &exit) && exit.ExitCode() == 1 && strings.Contains(output, "ERROR - FAILED"):
		return false, output, nil
	case runErr == nil:
		return false, output, fmt.Errorf("mllogtest: compliance checker on %s exited 0 without SUCCESS: %s", file, output)
	default:
		return false, output, fmt.Errorf("mllogtest: compliance checker on %s: %w: %s", file, runErr, output)
	}
}

// Score is what mlperf-logging's compute_score printed for a folder of
// result files.
type Score struct {
	// PerFile maps a result file's base name to its time to train in
	// minutes, for each file that passed the compliance check ("Score -
	// Time to Train (minutes) for FILE: X" lines).
	PerFile map[string]float64
	// Final is the "Final score - Time to Train (minutes)" figure: the
	// olympic average, or with fewer files than the benchmark needs the
	// plain mean (see the package comment); nil when it printed none or
	// "None" (too many dropped files).
	Final *float64
	// Dropped maps the base name of each file that compute_score dropped to
	// why ("Compliance check failed", "run_stop not recorded", …).
	Dropped map[string]string
	// OlympicSkipped is whether it warned "Olympic scoring skipped": fewer
	// files than the benchmark's required number of runs.
	OlympicSkipped bool
	// Patched is whether ComputeScore had to mend compute_score's call of
	// result_summarizer._compute_strong_score_standalone (which returns five
	// values where compute_score in mlperf-logging 4.1.68 unpacks four, so
	// that it fails before printing any score); only the return value is
	// trimmed, the computation is mlperf-logging's.
	Patched bool
	// Output is everything it printed, stdout then stderr.
	Output string
}

// computeScoreMain runs mlperf_logging.result_summarizer.compute_score as
// `python -m` would, first mending the unpacking bug of mlperf-logging 4.1.68
// when, and only when, its source still has it.
const computeScoreMain = `
import importlib.util, re, runpy, sys
from mlperf_logging.result_summarizer import result_summarizer as rs
name = "mlperf_logging.result_summarizer.compute_score"
with open(importlib.util.find_spec(name + ".__main__").origin) as f:
    src = f.read()
if re.search(r"scores_track, power_scores_track, score, power_score = \(", src):
    orig = rs._compute_strong_score_standalone
    def trimmed(*args, **kwargs):
        r = orig(*args, **kwargs)
        if kwargs.get("return_full_scores") and len(r) == 5:
            return r[:4]
        return r
    rs._compute_strong_score_standalone = trimmed
    print("mllogtest: patched compute_score: _compute_strong_score_standalone returns 5 values, compute_score unpacks 4")
sys.argv = [name] + sys.argv[1:]
runpy.run_module(name, run_name="__main__", alter_sys=True)
`

// ComputeScore runs mlperf-logging's `python -m
// mlperf_logging.result_summarizer.compute_score --benchmark_folder DIR
// --usage training --ruleset RULESET` on the result_*.txt files in dir and
// parses what it printed. Beware that compute_score deletes dir/scaling.json.
func ComputeScore(pythonBin, dir, ruleset string) (Score, error) {
	cmd := exec.Command(pythonBin, "-c", computeScoreMain,
		"--benchmark_folder", dir, "--usage", "training", "--ruleset", ruleset)
	stdout, stderr, err := run(cmd)
	if err != nil {
		return Score{Output: stdout + stderr}, fmt.Errorf("mllogtest: compute_score on %s: %w: %s%s", dir, err, stdout, stderr)
	}
	s, err := parseScore(stdout)
	s.Output = stdout + stderr
	return s, err
}

// run runs cmd and returns its stdout and stderr, kept apart so that lines
// of the one cannot break lines of the other.
func run(cmd *exec.Cmd) (stdout, stderr string, err error) {
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

var (
	perFileRE = regexp.MustCompile(`^Score - Time to Train \(minutes\) for (.+): (\S+)\. Samples/Epochs to converge: `)
	finalRE   = regexp.MustCompile(`^Final score - Time to Train \(minutes\): (\S+)$`)
	droppedRE = regexp.MustCompile(`^(.+) in (\S*result_[^/\s]*\.txt)$`)
)

// parseScore parses compute_score's standard output. Floats are Python's
// repr of a float, which strconv.ParseFloat reads exactly.
func parseScore(out string) (Score, error) {
	s := Score{PerFile: map[string]float64{}, Dropped: map[string]string{}, Output: out}
	final := false // the first Final score line is the time to train
	for line := range strings.SplitSeq(strings.ReplaceAll(out, "\r\n", "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "mllogtest: patched compute_score"):
			s.Patched = true
		case line == "WARNING: Olympic scoring skipped":
			s.OlympicSkipped = true
		}
		if m := perFileRE.FindStringSubmatch(line); m != nil {
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				return s, fmt.Errorf("mllogtest: compute_score: %q: %w", line, err)
			}
			s.PerFile[filepath.Base(m[1])] = v
		} else if m := finalRE.FindStringSubmatch(line); m != nil && !final {
			final = true
			if m[1] == "None" {
				continue
			}
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				return s, fmt.Errorf("mllogtest: compute_score: %q: %w", line, err)
			}
			s.Final = &v
		} else if m := droppedRE.FindStringSubmatch(line); m != nil {
			s.Dropped[filepath.Base(m[2])] = m[1]
		}
	}
	return s, nil
}
