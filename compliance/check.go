package compliance

import (
	"aimeter/bandwidth"
	"aimeter/benchmark"
	"aimeter/train/trainbundle"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/loadgen"
	"aimeter/mlperfconf"
	"aimeter/sysdesc"
	"aimeter/sysinfo"
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
	// RequireAudits makes a missing audit test an error: every test that
	// MLPerf's compliance table requires of a model whose runs the folder
	// holds (RequiredTests) must have its verification somewhere under
	// the folder. Without it a missing test is a warning.
	RequireAudits bool
}

// requiredTests is MLPerf's table of the audit tests each benchmark needs
// (compliance/README.md), by the config files' model key, matched as a
// prefix ("bert" covers bert-99 and bert-99.9).
var requiredTests = []struct {
	model string
	tests []Test
}{
	{"resnet50", []Test{TEST01, TEST04}},
	{"retinanet", []Test{TEST01}},
	{"bert", []Test{TEST01}},
	{"dlrm-v2", []Test{TEST01}},
	{"3d-unet", []Test{TEST01}},
	{"stable-diffusion-xl", []Test{TEST01, TEST04}},
	{"llama2-70b", []Test{TEST06}},
	{"llama3_1-405b", []Test{TEST06}},
	{"llama3_1-8b", []Test{TEST06}},
	{"mixtral-8x7b", []Test{TEST06}},
	{"deepseek-r1", []Test{TEST06}},
	{"rgat", []Test{TEST01}},
	{"pointpainting", []Test{TEST01, TEST04}},
	{"whisper", []Test{TEST01}},
	{"gpt-oss-120b", []Test{TEST07, TEST09}},
	{"wan-2.2-t2v-a14b", []Test{TEST04}},
}

// RequiredTests returns the audit tests MLPerf's compliance table requires
// of model (a config files' model key such as "resnet50" or
// "llama2-70b-interactive"); none for a model it does not list.
func RequiredTests(model string) []Test {
	for _, r := range requiredTests {
		if strings.HasPrefix(model, r.model) {
			return r.tests
		}
	}
	return nil
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

// Check validates a result folder (loadgen-reference §13): every run
// folder under root (a folder holding an mlperf_log_summary.txt or an
// aimeter bundle's manifest.json, read with bundle.Read) and every audit
// verification (a TESTnn/verify_*.txt). For each run it checks that the
// logs are present and parse, that an aimeter bundle's files still match
// their manifest digests, that the effective random seeds are the
// requested ones and MLPerf's official ones, that a model whose official
// settings ask for equal-issue mode ran with it, and that an accuracy log
// parses with every index inside the data set and a performance run's
// stays small. An aimeter bundle's verdict is derived.Set.Verdict, the
// one aimeter run printed and exited with: an error per reason when it
// fails, and nothing else judges validity (a GB/T test's LoadGen summary
// may say INVALID; the detail log's errors are warnings). A result
// declared for MLPerf's network division needs its system description and
// diagram, and a route to the SUT that leaves the host (checkDivision).
// MLPerf logs
// without a bundle must be VALID with minimum duration, query count and
// early stopping met and no error in the detail log. Every verification
// must pass, and every audit folder and TESTnn folder must hold the
// evidence its test needs (AuditEvidence; checkAudits). The audit tests
// MLPerf's compliance table requires of each model present must be there
// (a warning unless opts.RequireAudits). A folder with no run at all is a
// finding. Check returns an error only when root is not a readable
// directory.
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
	models := map[string]string{} // model key → a run folder of it
	passed := map[Test]bool{}     // audit tests with a verification under root
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			r.add(SeverityError, path, "unreadable", "%v", err)
			return nil
		}
		if !d.IsDir() {
			if strings.HasPrefix(d.Name(), "verify_") && strings.HasSuffix(d.Name(), ".txt") && strings.HasPrefix(filepath.Base(filepath.Dir(path)), "TEST") {
				t := Test(filepath.Base(filepath.Dir(path)))
				if _, known := passed[t]; !known {
					passed[t] = false
				}
				passed[t] = r.checkVerification(path) || passed[t]
			}
			return nil
		}
		// A mixed GB/T test's foreign jobs (IN-50) are a part of its
		// bundle, judged by the bundle's verdict (their loss counts in
		// it), not a run of their own under MLPerf's rules.
		if d.Name() == bundle.ForeignDir && exists(filepath.Join(filepath.Dir(path), bundle.ManifestFile)) {
			return filepath.SkipDir
		}
		r.checkAudits(path)
		if exists(filepath.Join(path, "mlperf_log_summary.txt")) || exists(filepath.Join(path, bundle.ManifestFile)) {
			// TESTnn/performance/run_1 holds copies of an audit run's
			// logs: checked as the audit's, not as a run.
			if strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(path))), "TEST") && filepath.Base(filepath.Dir(path)) == "performance" {
				return nil
			}
			r.Runs = append(r.Runs, path)
			if m := r.checkRun(path, opts); m != "" {
				if _, ok := models[m]; !ok {
					models[m] = path
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(r.Runs) == 0 {
		r.add(SeverityError, root, "no-runs", "no run folder (mlperf_log_summary.txt or manifest.json) under it")
	}
	sev := SeverityWarning
	if opts.RequireAudits {
		sev = SeverityError
	}
	for _, m := range slices.Sorted(maps.Keys(models)) {
		for _, t := range RequiredTests(m) {
			if _, ok := passed[t]; !ok {
				r.add(sev, models[m], "audit-missing", "model %s needs audit test %s (MLPerf's compliance table); there is no %s/verify_*.txt under %s", m, t, t, root)
			}
		}
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

// hasVerification reports whether dir holds a TESTnn/verify_*.txt.
func hasVerification(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "TEST*", "verify_*.txt"))
	return len(m) > 0
}

// checkVerification checks an audit's verification output: it must say
// TEST PASS (TEST06: "TEST06 verification complete", as MLPerf's script
// writes it). It reports whether it passed.
func (r *Report) checkVerification(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		r.add(SeverityError, path, "audit-unreadable", "%v", err)
		return false
	}
	if !bytes.Contains(b, []byte("TEST PASS")) && !bytes.Contains(b, []byte("TEST06 verification complete")) {
		last := strings.TrimSpace(string(b))
		if i := strings.LastIndexByte(last, '\n'); i >= 0 {
			last = last[i+1:]
		}
		r.add(SeverityError, path, "audit-fail", "the audit did not pass: %q", last)
		return false
	}
	return true
}

// detail is what checkRun reads from mlperf_log_detail.txt: the last value
// of each key, and the entries flagged as errors.
type detail struct {
	values map[string]json.RawMessage
	// first is the first value of each key (what MLPerf's log parser
	// reads, loadgen-reference.md §13).
	first  map[string]json.RawMessage
	errors []string
}

// nonFinite matches a detail-log value that is a bare Infinity,
// -Infinity or NaN.
var nonFinite = regexp.MustCompile(`("value": )(-?Infinity|NaN)([,}])`)

func readDetail(path string) (*detail, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := &detail{values: map[string]json.RawMessage{}, first: map[string]json.RawMessage{}}
	sc := bufio.NewScanner(f)
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
			// LoadGen writes a non-finite double bare, as C++ prints it
			// (the rates of a pass with no successful sample), and
			// MLPerf's Python parser reads it; encoding/json does not.
			quoted := nonFinite.ReplaceAllString(text, `$1"$2"$3`)
			if quoted == text || json.Unmarshal([]byte(quoted), &e) != nil {
				return d, fmt.Errorf("line %d: %v", line, err)
			}
		}
		d.values[e.Key] = e.Value
		if _, ok := d.first[e.Key]; !ok {
			d.first[e.Key] = e.Value
		}
		if e.Metadata.IsError {
			d.errors = append(d.errors, fmt.Sprintf("%s: %s", e.Key, e.Value))
		}
	}
	return d, sc.Err()
}

func (d *detail) str(key string) string { return rawStr(d.values[key]) }

// firstStr is str of the key's first value.
func (d *detail) firstStr(key string) string { return rawStr(d.first[key]) }

func rawStr(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(v))
}

// checkRun checks one run folder and returns the config files' model key
// its bundle names ("" for none).
func (r *Report) checkRun(dir string, opts CheckOptions) (model string) {
	var b *bundle.Bundle
	if exists(filepath.Join(dir, bundle.ManifestFile)) {
		var err error
		if b, err = derived.Read(dir); err != nil {
			var de *bundle.DigestError
			if errors.As(err, &de) {
				r.add(SeverityError, dir, "digest", "%v", err)
			} else {
				r.add(SeverityError, dir, "bundle", "the run bundle cannot be read: %v", err)
			}
			b = nil
		}
	}
	if b != nil && trainbundle.Of(b) != nil {
		r.checkTraining(dir, b)
		return ""
	}
	if b != nil && invocation.Of(b) != nil {
		model = invocation.Of(b).Settings.Model
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
	if b != nil {
		// An aimeter bundle's verdict is the run's own (derived's, the
		// one aimeter run printed and exited with): LoadGen's validity,
		// the GB/T verdict, the accuracy target, failures. The summary's
		// and detail log's validity keys are not checked again: a GB/T
		// test's INVALID Server latency bound, say, is no failure.
		r.checkVerdict(dir, b)
		r.checkBandwidth(dir, b)
		r.checkDivision(dir, b)
	}
	if model != "" && performance {
		r.checkEqualIssue(dir, d, model)
	}
	if summary != nil && performance {
		switch {
		case bytes.Contains(summary, []byte("Result is : VALID")):
		case bytes.Contains(summary, []byte("Result is : INVALID")):
			if b == nil {
				r.add(SeverityError, dir, "invalid", "the result is INVALID")
			}
		default:
			r.add(SeverityError, dir, "summary", "mlperf_log_summary.txt has no \"Result is\" line")
		}
	}
	if b == nil && performance {
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
	// A bundle's detail-log errors (failed samples, say) are its
	// verdict's to judge; they are still shown.
	detailSev := SeverityError
	if b != nil {
		detailSev = SeverityWarning
	}
	for _, e := range d.errors {
		r.add(detailSev, dir, "detail-error", "the detail log reports an error: %s", e)
	}
	accPath := filepath.Join(dir, "mlperf_log_accuracy.json")
	if st, err := os.Stat(accPath); err == nil {
		if performance && st.Size() > opts.MaxAccuracyLogBytes {
			r.add(SeverityWarning, dir, "accuracy-log-size", "mlperf_log_accuracy.json of a performance run is %d bytes, above %d (MLPerf truncates it before submission)", st.Size(), opts.MaxAccuracyLogBytes)
		}
		if _, err := ReadAccuracyLog(accPath); err != nil {
			r.add(SeverityError, dir, "accuracy-log", "%v", err)
		}
	} else if !performance {
		r.add(SeverityError, dir, "accuracy-log", "an accuracy run without mlperf_log_accuracy.json")
	}
	return model
}

// checkVerdict reports an aimeter bundle's failing verdict
// (derived.Set.Verdict): one error per reason it gives. A run that
// decided nothing (VerdictNone) is no finding.
func (r *Report) checkVerdict(dir string, b *bundle.Bundle) {
	v, err := derived.Of(b).Verdict()
	if err != nil {
		r.add(SeverityError, dir, "verdict", "the run's verdict cannot be decided: %v", err)
		return
	}
	if v.Pass || v.Kind == derived.VerdictNone {
		return
	}
	// A verdict that fails always gives its reasons (verdict.Of).
	for _, reason := range v.Reasons {
		r.add(SeverityError, dir, "verdict", "%s", reason)
	}
}

// checkTraining checks a training run's bundle (aimeter train), which has
// no MLPerf inference logs: its digests were checked when it was read,
// and its result must be the complete, scored one aimeter train exits 0
// with (benchmark.TrainReasons: an error per reason it is not).
func (r *Report) checkTraining(dir string, b *bundle.Bundle) {
	reasons, err := benchmark.TrainReasons(b)
	if err != nil {
		r.add(SeverityError, dir, "training", "the training result cannot be computed: %v", err)
		return
	}
	for _, reason := range reasons {
		r.add(SeverityError, dir, "training", "%s", reason)
	}
}

// checkBandwidth reports a network run whose MLPerf datacenter bandwidth
// check (bandwidth.json, derived.Set.Bandwidth) failed: an error per
// direction that failed, naming what fell short. A check that could not
// be made for a benchmark of the table (no declared data type), or whose
// NIC speed is unknown, is a warning: a recorded gap, not a failure.
func (r *Report) checkBandwidth(dir string, b *bundle.Bundle) {
	bw := derived.Of(b).Bandwidth()
	if bw == nil {
		return
	}
	for _, f := range bw.Failed() {
		r.add(SeverityError, dir, "bandwidth", "%s", f)
	}
	if bw.Check == nil && bw.Benchmark != "" {
		if _, err := bandwidth.Lookup(bw.Benchmark); err == nil {
			r.add(SeverityWarning, dir, "bandwidth", "no bandwidth check: %s", bw.Gap)
		}
	}
	if c := bw.Check; c != nil && !c.NIC.Known() {
		r.add(SeverityWarning, dir, "bandwidth-nic", "the link speed of the NIC on the traffic's path is unknown: the bandwidth requirement was checked against the wire only")
	}
}

// checkDivision checks a result declared for MLPerf's network division
// (aimeter run --division network): it needs the system description and
// its diagram (sysdesc.Record.Problems), and a LoadGen node separate from
// the SUT ("The SUT and QDL must run on physically separate and distinct
// systems"): traffic that never left the host (a loopback route) is an
// error. The LoadGen node's NICs missing, or the interface or speed of
// the traffic's path unknown, are warnings: gaps in what the report must
// contain.
func (r *Report) checkDivision(dir string, b *bundle.Bundle) {
	rec := sysdesc.Of(b)
	if rec == nil || rec.Division != "network" {
		return
	}
	for _, p := range rec.Problems() {
		r.add(SeverityError, dir, "network-division", "%s", p)
	}
	if b.Result != nil && !strings.Contains(b.Result.SUTName, "Network SUT") {
		r.add(SeverityWarning, dir, "network-division", "the SUT's name %q lacks \"Network SUT\", which MLPerf's rules ask of a network-division QDL's Name and its submission checker requires", b.Result.SUTName)
	}
	sys := b.System
	if len(sys.NICs) == 0 {
		r.add(SeverityWarning, dir, "network-division", "no network interfaces of the LoadGen node are recorded (read from Linux's /sys/class/net)")
	}
	if len(sys.Routes) == 0 {
		r.add(SeverityWarning, dir, "network-division", "the interface the traffic to the SUT left by is not recorded")
	}
	for _, rt := range sys.Routes {
		switch {
		case rt.Method == sysinfo.RouteByLoopback || rt.Method == sysinfo.RouteByLocal:
			r.add(SeverityError, dir, "network-division", "the traffic to %s never left the LoadGen host (%s, %s): the network division needs the SUT on physically separate systems, connected over a fabric", rt.Target, rt.Method, rt.Interface)
		case rt.Interface == "":
			r.add(SeverityWarning, dir, "network-division", "the interface the traffic to %s left by is unknown: %s", rt.Target, rt.Note)
		default:
			for _, n := range sys.NICs {
				if n.Name == rt.Interface && n.SpeedMbps <= 0 {
					r.add(SeverityWarning, dir, "network-division", "the speed of %s, the interface the traffic to %s left by, is %s", n.Name, rt.Target, n.Speed())
				}
			}
		}
	}
}

// checkEqualIssue checks that a run of a model whose official settings
// ask for equal-issue mode (sample_concatenate_permutation = 1 in
// mlperf.conf) ran with it. An audit run whose audit.config turns it off,
// as TEST06's and TEST07's do, is exempt.
func (r *Report) checkEqualIssue(dir string, d *detail, model string) {
	scenario := d.str("effective_scenario")
	e, ok := mlperfconf.Builtin().Lookup(model, scenario, "sample_concatenate_permutation")
	if !ok || e.Uint != 1 || d.str("effective_sample_concatenate_permutation") == "true" {
		return
	}
	if exists(filepath.Join(filepath.Dir(dir), "audit.config")) && filepath.Base(dir) == "audit" {
		return
	}
	r.add(SeverityError, dir, "equal-issue", "model %s needs equal-issue mode in %s (sample_concatenate_permutation = 1 in mlperf.conf); the run had effective_sample_concatenate_permutation = %s",
		model, scenario, d.str("effective_sample_concatenate_permutation"))
}

// checkSeeds compares the effective seeds with the requested ones and
// with MLPerf's official ones (the built-in mlperf.conf).
func (r *Report) checkSeeds(dir string, d *detail) {
	official, err := officialSettings()
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

// officialSettings are the settings of the built-in mlperf.conf, read once
// for every run folder a Check meets (their seeds are MLPerf's official
// ones).
var officialSettings = sync.OnceValues(func() (loadgen.Settings, error) {
	s, _, err := mlperfconf.LoadSettings(mlperfconf.LoadOptions{Scenario: loadgen.Offline})
	return s, err
})
