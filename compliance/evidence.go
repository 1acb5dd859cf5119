package compliance

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Evidence is what one audit test's verification is computed from and
// what it leaves behind: the files AuditWith (aimeter audit) writes and
// Check (aimeter check) requires, so that a folder whose verification or
// runs were deleted fails the check. Paths are slash-separated; Runs and
// Logs are relative to the audit's folder (its --output-dir), Verify,
// Copies and Fallback to the test's folder TESTnn inside it.
type Evidence struct {
	Test Test
	// Runs are the run folders the verification reads, each an aimeter
	// run bundle (manifest.json): the accuracy run, the reference
	// performance run and the audit run, as the test has them.
	Runs []string
	// Logs are the files of those runs that the verification reads.
	Logs []string
	// Verify are the verification outputs (TESTnn/verify_*.txt).
	Verify []string
	// Copies are the audit run's logs, copied where MLPerf's
	// run_verification.py copies them.
	Copies []string
	// Fallback are the files TEST01's baseline fallback writes beside its
	// verification, required when verify_accuracy.txt says it ran.
	Fallback []string
}

// The run folders of an audit, and what each is.
const (
	dirAccuracy  = "accuracy"
	dirReference = "performance/run_1"
	dirAudit     = "audit"
)

var runWhat = map[string]string{
	dirAccuracy:  "the accuracy run",
	dirReference: "the reference performance run",
	dirAudit:     "the audit run (under audit.config)",
}

// fallbackNote is what TEST01's verify_accuracy.txt says when its
// baseline fallback ran (Result.fallback).
const fallbackNote = "baseline fallback"

var (
	copiesPerf = []string{"performance/run_1/mlperf_log_summary.txt", "performance/run_1/mlperf_log_detail.txt"}
	copiesAll  = append([]string{"accuracy/mlperf_log_accuracy.json"}, copiesPerf...)
)

// AuditEvidence is the evidence of every audit test, in the order of
// Tests: the one table that AuditWith's layout follows, Check enforces and
// aimeter check's help prints (EvidenceTable).
var AuditEvidence = []Evidence{
	{
		Test: TEST01,
		Runs: []string{dirAccuracy, dirReference, dirAudit},
		Logs: []string{"accuracy/mlperf_log_accuracy.json", "performance/run_1/mlperf_log_detail.txt",
			"audit/mlperf_log_accuracy.json", "audit/mlperf_log_detail.txt"},
		Verify:   []string{"verify_accuracy.txt", "verify_performance.txt"},
		Copies:   copiesAll,
		Fallback: []string{"accuracy/mlperf_log_accuracy_baseline.json", "accuracy/baseline_accuracy.txt", "accuracy/compliance_accuracy.txt"},
	},
	{
		Test:   TEST04,
		Runs:   []string{dirReference, dirAudit},
		Logs:   []string{"performance/run_1/mlperf_log_summary.txt", "audit/mlperf_log_summary.txt"},
		Verify: []string{"verify_performance.txt"},
		Copies: copiesPerf,
	},
	{
		Test:   TEST06,
		Runs:   []string{dirAudit},
		Logs:   []string{"audit/mlperf_log_detail.txt", "audit/mlperf_log_accuracy.json"},
		Verify: []string{"verify_accuracy.txt"},
		Copies: copiesAll,
	},
	{
		Test:   TEST07,
		Runs:   []string{dirAudit},
		Logs:   []string{"audit/mlperf_log_accuracy.json"},
		Verify: []string{"verify_accuracy.txt"},
		Copies: copiesAll,
	},
	{
		Test:   TEST09,
		Runs:   []string{dirAudit},
		Logs:   []string{"audit/mlperf_log_accuracy.json"},
		Verify: []string{"verify_output_len.txt"},
		Copies: copiesAll,
	},
}

// EvidenceOf returns the evidence of test; false for a test this package
// does not run.
func EvidenceOf(test Test) (Evidence, bool) {
	for _, e := range AuditEvidence {
		if e.Test == test {
			return e, true
		}
	}
	return Evidence{}, false
}

// EvidenceTable is AuditEvidence as aimeter check's help prints it: per
// test its verification files, the runs they are computed from and the
// folders of the copies of the audit run's logs, relative to the audit's
// folder.
func EvidenceTable() string {
	var b strings.Builder
	for _, e := range AuditEvidence {
		test := string(e.Test) + "/"
		verify := make([]string, len(e.Verify))
		for i, v := range e.Verify {
			verify[i] = test + v
		}
		fmt.Fprintf(&b, "  %s  %s\n", e.Test, strings.Join(verify, ", "))
		runs := make([]string, len(e.Runs))
		for i, r := range e.Runs {
			runs[i] = r + "/"
		}
		copies := []string{}
		for _, c := range e.Copies {
			if d := test + path.Dir(c) + "/"; !slices.Contains(copies, d) {
				copies = append(copies, d)
			}
		}
		fmt.Fprintf(&b, "          runs %s\n          copies %s\n", strings.Join(runs, ", "), strings.Join(copies, ", "))
	}
	return b.String()
}

var auditConfigHeader = regexp.MustCompile(`^# audit\.config of (TEST\d+)`)

// checkAudits checks the audit evidence of dir: the tests whose
// verification dir holds (a TESTnn folder of verification output) or whose
// audit.config it holds (aimeter's names its test on its first line).
// Every test found must have its Evidence: the verification files and,
// in an aimeter audit (dir holds audit.config or audit/, or the copies
// name aimeter as their LoadGen), audit.config, the runs and their logs
// and the copies. A TESTnn folder of an MLPerf submission (no audit.config,
// no audit run, LoadGen's own logs) needs only its verification files: its
// runs are not part of the submission, and MLPerf's scripts copy different
// logs per test.
func (r *Report) checkAudits(dir string) {
	confPath := filepath.Join(dir, "audit.config")
	conf := exists(confPath)
	var tests []Evidence
	for _, e := range AuditEvidence {
		if isVerificationDir(filepath.Join(dir, string(e.Test))) || conf && auditConfigTest(confPath) == e.Test {
			tests = append(tests, e)
		}
	}
	if len(tests) == 0 {
		if conf && exists(filepath.Join(dir, dirAudit)) && !hasVerification(dir) {
			r.add(SeverityError, dir, "audit-verification-missing", "an audit folder (audit.config, audit/) without its TESTnn/verify_*.txt: the audit did not finish")
		}
		return
	}
	aimeterAudit := conf || exists(filepath.Join(dir, dirAudit))
	for _, e := range tests {
		aimeterAudit = aimeterAudit || copiedByAimeter(filepath.Join(dir, string(e.Test)))
	}
	for _, e := range tests {
		r.checkEvidence(dir, e, aimeterAudit)
	}
}

// checkEvidence reports every file of e missing under the audit folder
// dir (see checkAudits).
func (r *Report) checkEvidence(dir string, e Evidence, aimeterAudit bool) {
	missing := func(rel, what string) {
		r.add(SeverityError, filepath.Join(dir, filepath.FromSlash(rel)), "audit-evidence-missing", "%s's verification needs %s (%s), which is missing", e.Test, rel, what)
	}
	test := string(e.Test) + "/"
	if aimeterAudit {
		if !exists(filepath.Join(dir, "audit.config")) {
			missing("audit.config", "the audit settings the audit run used")
		}
		present := map[string]bool{}
		for _, run := range e.Runs {
			if present[run] = isDir(filepath.Join(dir, filepath.FromSlash(run))); !present[run] {
				missing(run+"/", runWhat[run])
			} else if !exists(filepath.Join(dir, filepath.FromSlash(run), "manifest.json")) {
				missing(run+"/manifest.json", runWhat[run]+"'s bundle manifest")
			}
		}
		for _, l := range e.Logs {
			run := l[:strings.LastIndexByte(l, '/')]
			if present[run] && !exists(filepath.Join(dir, filepath.FromSlash(l))) {
				missing(l, "a log of "+runWhat[run])
			}
		}
	}
	for _, v := range e.Verify {
		if !exists(filepath.Join(dir, string(e.Test), v)) {
			missing(test+v, "the verification's output")
		}
	}
	if aimeterAudit {
		for _, c := range e.Copies {
			if !exists(filepath.Join(dir, string(e.Test), filepath.FromSlash(c))) {
				missing(test+c, "the copy of the audit run's log")
			}
		}
	}
	if len(e.Fallback) > 0 {
		if b, err := os.ReadFile(filepath.Join(dir, string(e.Test), "verify_accuracy.txt")); err == nil && bytes.Contains(b, []byte(fallbackNote)) {
			for _, f := range e.Fallback {
				if !exists(filepath.Join(dir, string(e.Test), filepath.FromSlash(f))) {
					missing(test+f, "the baseline fallback's scores, which verify_accuracy.txt reports")
				}
			}
		}
	}
}

// auditConfigTest is the test an audit.config that aimeter wrote names on
// its first line; "" for any other.
func auditConfigTest(path string) Test {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if m := auditConfigHeader.FindSubmatch(b); m != nil {
		return Test(m[1])
	}
	return ""
}

// isVerificationDir reports whether dir is a TESTnn folder of
// verification output: verify_*.txt, or the copies of an audit run's logs
// (whose verification may have been deleted), and not an audit's own
// folder (audit.config, audit/) that happens to be named TESTnn.
func isVerificationDir(dir string) bool {
	if !isDir(dir) || exists(filepath.Join(dir, "audit.config")) || exists(filepath.Join(dir, dirAudit)) {
		return false
	}
	m, _ := filepath.Glob(filepath.Join(dir, "verify_*.txt"))
	return len(m) > 0 || isDir(filepath.Join(dir, "accuracy")) || isDir(filepath.Join(dir, "performance"))
}

// copiedByAimeter reports whether the copies under the test folder dir
// are an aimeter run's logs (loadgen_version "aimeter …").
func copiedByAimeter(dir string) bool {
	d, err := readDetail(filepath.Join(dir, "performance", "run_1", "mlperf_log_detail.txt"))
	return err == nil && strings.HasPrefix(d.firstStr("loadgen_version"), "aimeter")
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
