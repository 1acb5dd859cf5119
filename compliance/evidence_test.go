package compliance

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"aimeter/benchmark"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/gbt"
	"aimeter/loadgen/loadgentest"
)

// evidenceErrors are the paths Check names as missing audit evidence.
func evidenceErrors(rep *Report) []string {
	var paths []string
	for _, f := range rep.Findings {
		if f.Severity == SeverityError && f.Code == "audit-evidence-missing" {
			paths = append(paths, f.Path)
		}
	}
	return paths
}

func errorFindings(rep *Report) []Finding {
	var fs []Finding
	for _, f := range rep.Findings {
		if f.Severity == SeverityError {
			fs = append(fs, f)
		}
	}
	return fs
}

// TestCheckAuditEvidence runs each audit test for real (on synctest's
// clock) and checks its folder: complete, it has no error and holds every
// file of the test's Evidence; with any piece of the evidence deleted
// (the verification, a run, a log a verification read, a copy) Check
// names the missing path as an error. On the old code every deletion
// below passed with "0 errors".
func TestCheckAuditEvidence(t *testing.T) {
	same := func(n int, i uint64) []byte { return []byte{label(i)} }
	fewDiffer := func(n int, i uint64) []byte {
		if n >= 4096 && i%500 == 7 {
			return []byte{label(i) + 1}
		}
		return []byte{label(i)}
	}
	labelled := func(answer func(int, uint64) []byte) func(string) benchmark.Plan {
		return func(dir string) benchmark.Plan {
			p := labelledPlan(dir, &serviceSUT{service: time.Millisecond, answer: answer})
			p.Settings.Set = append(p.Settings.Set, "min_query_count=300")
			return p
		}
	}
	llm := func(answer func(int, uint64) []byte) func(string) benchmark.Plan {
		return func(dir string) benchmark.Plan {
			p := llmPlan(dir, &serviceSUT{service: time.Millisecond, answer: answer})
			// Enough queries for early stopping: the audit run is VALID.
			p.Settings.Set = append(p.Settings.Set, "min_query_count=600")
			return p
		}
	}
	eight := func(n int, i uint64) []byte { return tokens(1, 2, 3, 4, 5, 6, 7, 8) }
	// remove lists what a row deletes; want the paths Check must name
	// (nil: remove).
	type row struct {
		remove []string
		want   []string
		reason string
	}
	for _, tc := range []struct {
		name string
		test Test
		plan func(dir string) benchmark.Plan
		opts Options
		rows []row
	}{
		{"TEST01", TEST01, labelled(same), Options{}, []row{
			{[]string{"TEST01/verify_performance.txt"}, nil, "the performance verification was deleted (issue 39's reproduction)"},
			{[]string{"TEST01/verify_accuracy.txt"}, nil, "the accuracy verification was deleted"},
			{[]string{"audit"}, nil, "the whole audit run was deleted"},
			{[]string{"accuracy"}, nil, "the accuracy run the answers were compared with was deleted"},
			{[]string{"performance/run_1"}, nil, "the reference performance run was deleted"},
			{[]string{"audit.config"}, nil, "the audit settings were deleted"},
			{[]string{"audit.config", "audit"}, nil, "a TEST01 folder whose audit folder lacks both audit.config and audit/"},
			{[]string{"audit/mlperf_log_accuracy.json"}, nil, "the audit run's accuracy log, which the verification read, was deleted"},
			{[]string{"performance/run_1/mlperf_log_detail.txt"}, nil, "the reference run's detail log, which the verification read, was deleted"},
			{[]string{"audit/manifest.json"}, nil, "the audit run is no longer a bundle"},
			{[]string{"TEST01/accuracy/mlperf_log_accuracy.json"}, nil, "the copy of the audit run's accuracy log was deleted"},
			{[]string{"TEST01/performance"}, []string{"TEST01/performance/run_1/mlperf_log_summary.txt", "TEST01/performance/run_1/mlperf_log_detail.txt"}, "the copies of the audit run's performance logs were deleted"},
			{[]string{"TEST01"}, []string{"TEST01/verify_accuracy.txt", "TEST01/verify_performance.txt"}, "the whole verification folder was deleted (audit.config names the test)"},
		}},
		{"TEST01 with the baseline fallback", TEST01, labelled(fewDiffer), Options{}, []row{
			{[]string{"TEST01/accuracy/baseline_accuracy.txt"}, nil, "verify_accuracy.txt reports the fallback's scores, whose file was deleted"},
			{[]string{"TEST01/accuracy/compliance_accuracy.txt"}, nil, "the same, the audit run's score"},
		}},
		{"TEST04", TEST04, func(dir string) benchmark.Plan {
			return auditPlan(dir, &serviceSUT{service: time.Millisecond})
		}, Options{}, []row{
			{[]string{"TEST04/verify_performance.txt"}, nil, "the verification was deleted"},
			{[]string{"audit"}, nil, "the audit run was deleted"},
			{[]string{"performance/run_1"}, nil, "the reference run was deleted"},
			{[]string{"performance/run_1/mlperf_log_summary.txt"}, nil, "the reference summary, which the verification read, was deleted"},
			{[]string{"TEST04/performance/run_1/mlperf_log_detail.txt"}, nil, "a copy of the audit run's logs was deleted"},
		}},
		{"TEST06", TEST06, llm(func(n int, i uint64) []byte { return tokens(int32(i)+10, 5, 6, 2) }), Options{}, []row{
			{[]string{"TEST06/verify_accuracy.txt"}, nil, "the verification was deleted"},
			{[]string{"audit"}, nil, "the audit run was deleted"},
			{[]string{"audit/mlperf_log_detail.txt"}, nil, "the detail log the verification read was deleted"},
			{[]string{"TEST06/accuracy/mlperf_log_accuracy.json"}, nil, "the copy of the accuracy log was deleted"},
		}},
		{"TEST07", TEST07, labelled(same), Options{AccuracyThreshold: 99}, []row{
			{[]string{"TEST07/verify_accuracy.txt"}, nil, "the verification was deleted"},
			{[]string{"audit/mlperf_log_accuracy.json"}, nil, "the accuracy log that was scored was deleted"},
			{[]string{"TEST07/performance/run_1/mlperf_log_summary.txt"}, nil, "a copy of the audit run's logs was deleted"},
		}},
		{"TEST09", TEST09, llm(eight), Options{MinOutputTokens: 7.5, MaxOutputTokens: 8.5}, []row{
			{[]string{"TEST09/verify_output_len.txt"}, nil, "the verification was deleted"},
			{[]string{"audit.config"}, nil, "the audit settings with the bounds were deleted"},
			{[]string{"audit"}, nil, "the audit run was deleted"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good := t.TempDir()
			res := runAudit(t, tc.test, tc.plan(good), tc.opts)
			if !res.Pass {
				t.Fatalf("the audit failed:\n%s", res.Output())
			}
			rep, err := Check(good, CheckOptions{})
			if err != nil || len(errorFindings(rep)) != 0 {
				t.Fatalf("the complete audit folder: %v, errors %v", err, errorFindings(rep))
			}
			// The table names what the audit wrote.
			e, _ := EvidenceOf(tc.test)
			files := []string{"audit.config"}
			for _, r := range e.Runs {
				files = append(files, r+"/manifest.json")
			}
			files = append(files, e.Logs...)
			for _, f := range slices.Concat(e.Verify, e.Copies) {
				files = append(files, string(tc.test)+"/"+f)
			}
			if strings.Contains(res.Output(), fallbackNote) {
				for _, f := range e.Fallback {
					files = append(files, string(tc.test)+"/"+f)
				}
			}
			for _, f := range files {
				if !exists(filepath.Join(good, f)) {
					t.Errorf("%s's Evidence names %s, which the audit did not write", tc.test, f)
				}
			}
			for _, r := range tc.rows {
				d := t.TempDir()
				copyTree(t, good, d)
				for _, p := range r.remove {
					if err := os.RemoveAll(filepath.Join(d, p)); err != nil {
						t.Fatal(err)
					}
				}
				want := r.want
				if want == nil {
					want = r.remove
				}
				rep, err := Check(d, CheckOptions{})
				if err != nil {
					t.Fatalf("%s: %v", r.reason, err)
				}
				got := evidenceErrors(rep)
				for _, w := range want {
					if !slices.Contains(got, filepath.Join(d, w)) && !slices.Contains(got, filepath.Join(d, w)+string(filepath.Separator)) {
						t.Errorf("%s: no audit-evidence-missing error naming %s; findings %v", r.reason, w, rep.Findings)
					}
				}
				if rep.OK() {
					t.Errorf("%s: the folder passed", r.reason)
				}
			}
		})
	}
}

// TestCheckVerificationFolderAlone: a TESTnn folder that aimeter wrote,
// moved away from its audit folder, lacks audit.config and the runs (an
// error each); the same folder as an MLPerf submission holds it (LoadGen's
// own logs, no audit folder) needs only its verification files.
func TestCheckVerificationFolderAlone(t *testing.T) {
	good := t.TempDir()
	runAudit(t, TEST04, auditPlan(good, &serviceSUT{service: time.Millisecond}), Options{})
	for _, tc := range []struct {
		mlperf bool
		want   []string
		reason string
	}{
		{false, []string{"audit.config", "audit/", "performance/run_1/"}, "aimeter's TEST04 folder alone: its audit folder lacks audit.config and the runs"},
		{true, nil, "an MLPerf submission's TEST04 folder (LoadGen's logs) needs only its verification"},
	} {
		d := t.TempDir()
		copyTree(t, filepath.Join(good, "TEST04"), filepath.Join(d, "TEST04"))
		if tc.mlperf {
			edit(t, filepath.Join(d, "TEST04", "performance", "run_1", "mlperf_log_detail.txt"), `"value": "aimeter `, `"value": "5.0.`)
		}
		rep, err := Check(d, CheckOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := evidenceErrors(rep)
		if len(got) != len(tc.want) {
			t.Errorf("%s: evidence errors %v, want %v", tc.reason, got, tc.want)
		}
		for _, w := range tc.want {
			if !slices.Contains(got, filepath.Join(d, w)) {
				t.Errorf("%s: no error naming %s: %v", tc.reason, w, got)
			}
		}
	}
}

// TestCheckBundleVerdict: for a run bundle, Check's verdict errors are
// derived's verdict (one per reason), never LoadGen's summary: a GB/T
// test that passed is no error though its summary says INVALID (LoadGen's
// Server latency bound is no GB/T rule), and a failing run's errors are
// its Reasons. Every row asserts that Check and derived agree, whatever
// the verdict; the runs are on synctest's clock. On the old code the GB/T
// row failed ("invalid") and no run had "verdict" errors.
func TestCheckBundleVerdict(t *testing.T) {
	for _, tc := range []struct {
		name     string
		plan     func(dir string) benchmark.Plan
		invalid  bool // make the summary say INVALID (manifest updated)
		wantPass bool
		reason   string
	}{
		{"GB/T pass, summary INVALID", func(dir string) benchmark.Plan {
			return benchmark.Plan{
				Custom: &benchmark.Custom{SUT: &serviceSUT{service: 20 * time.Millisecond}, QSL: &loadgentest.QSL{Total: 1024}},
				GBT: &benchmark.GBT{Input: gbt.PlanInput{
					Arrival:       gbt.Arrival{Mode: gbt.ModePoisson, Lambda: 200, Duration: time.Second},
					LossThreshold: 0.01,
				}},
				OutputDir: dir, NoReport: true, SpinWindow: -1,
			}
		}, true, true, "a GB/T test that lost nothing passes, whatever LoadGen says of its Server latency bound"},
		{"MLPerf VALID", func(dir string) benchmark.Plan {
			return auditPlan(dir, &serviceSUT{service: time.Millisecond})
		}, false, true, "a VALID run has no verdict error"},
		{"MLPerf INVALID latency", func(dir string) benchmark.Plan {
			return benchmark.Plan{
				Custom: &benchmark.Custom{SUT: &serviceSUT{service: 50 * time.Millisecond}, QSL: &loadgentest.QSL{Total: 1024}},
				Settings: benchmark.Settings{Scenario: "Server", Set: []string{"target_qps=50", "target_latency=10",
					"min_duration=1000", "min_query_count=100"}},
				OutputDir: dir, NoReport: true, SpinWindow: -1,
			}
		}, false, false, "a Server run over its latency bound is INVALID: its reasons are the errors"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			synctest.Test(t, func(t *testing.T) {
				if _, err := benchmark.Run(context.Background(), tc.plan(dir)); err != nil {
					t.Fatal(err)
				}
			})
			if tc.invalid {
				p := filepath.Join(dir, "mlperf_log_summary.txt")
				if b, _ := os.ReadFile(p); strings.Contains(string(b), "Result is : VALID") {
					edit(t, p, "Result is : VALID", "Result is : INVALID")
					redigest(t, dir, "mlperf_log_summary.txt")
				}
			}
			b, err := bundle.Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			v, err := derived.Of(b).Verdict()
			if err != nil {
				t.Fatal(err)
			}
			if v.Pass != tc.wantPass {
				t.Fatalf("%s: the run's verdict %+v, want pass %v", tc.reason, v, tc.wantPass)
			}
			rep, err := Check(filepath.Dir(dir), CheckOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			if !v.Pass && v.Kind != derived.VerdictNone {
				want = v.Reasons
				if len(want) == 0 {
					want = []string{"the run's verdict is " + v.Word()}
				}
			}
			for _, f := range errorFindings(rep) {
				if f.Code == "verdict" {
					got = append(got, f.Message)
				} else {
					t.Errorf("%s: an error beside the verdict's: %v", tc.reason, f)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: verdict errors %q, want the verdict's reasons %q", tc.reason, got, want)
			}
			if rep.OK() != v.Pass {
				t.Errorf("%s: check OK %v, the run's verdict %s", tc.reason, rep.OK(), v.Word())
			}
		})
	}
}
