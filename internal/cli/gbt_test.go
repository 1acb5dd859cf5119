package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/derived"
	"aimeter/gbt"
)

func TestGBTRunWritesMetricsLogAndResult(t *testing.T) {
	tests := []struct {
		name   string
		reason string
		args   []string
	}{
		{"mode 0", "closed loop with the 2 s timeout (GB-7.4.2-T10-mode0)", []string{"--arrival-mode", "0", "--duration", "300ms"}},
		{"mode 1", "fixed period T = 50 ms, n = 3 (GB-7.4.2-T10-mode1)", []string{"--arrival-mode", "1", "--period", "50ms", "--jobs-per-period", "3", "--duration", "1200ms"}},
		{"mode 2", "Poisson λ = 200/s through LoadGen's Server schedule", []string{"--arrival-mode", "2", "--lambda", "200", "--duration", "1200ms"}},
		{"mode 3", "peak: Poisson background and two bursts (IN-49)", []string{"--arrival-mode", "3", "--lambda", "50", "--duration", "2s", "--bursts", "2", "--burst-length", "300ms", "--burst-period", "10ms", "--burst-jobs", "5"}},
		{"mode 4", "offline: everything at once, no timeout", []string{"--arrival-mode", "4", "--set", "min_query_count=500"}},
		{"mode 5", "mixed: foreign Poisson jobs beside fixed-period ones (IN-50)", []string{"--arrival-mode", "5", "--mixed-base-mode", "1", "--period", "50ms", "--duration", "1200ms", "--mixed-lambda", "20"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"run", "--sut", "null-async", "-q", "--output-dir", dir}, tc.args...)
			r := runCLI(t, "", args...)
			if r.code != ExitOK {
				t.Fatalf("%s: %v", tc.reason, r)
			}
			res, err := readGBTResult(filepath.Join(dir, "gbt_result.json"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Arrival.Mode != gbt.ArrivalMode(mustAtoi(tc.args[1])) || res.Schedule.Hash == "" || res.Lifecycle.TestEnd.IsZero() {
				t.Errorf("%s: result %+v", tc.reason, res)
			}
			if res.Metrics.Loss.Sent == 0 || res.Metrics.Time.Records != res.Metrics.Loss.Sent || res.Metrics.Throughput.Samples == 0 {
				t.Errorf("%s: gbt_result.json metrics %+v", tc.reason, res.Metrics)
			}
			if (res.Metrics.Foreign != nil) != (res.Arrival.Mode == gbt.ModeMixed) {
				t.Errorf("%s: foreign-job metrics %+v", tc.reason, res.Metrics.Foreign)
			}
			if (res.Metrics.Elasticity != nil) != (res.Arrival.Mode == gbt.ModePeak) {
				t.Errorf("%s: elasticity %+v", tc.reason, res.Metrics.Elasticity)
			}
			f, err := os.Open(filepath.Join(dir, "gbt_inference.log"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			lines := 0
			for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
				if !gbt.LogLineRE.MatchString(sc.Text()) {
					t.Fatalf("%s: log line %q does not match the 7.3 f) format", tc.reason, sc.Text())
				}
			}
			if lines == 0 {
				t.Errorf("%s: the inference log is empty (a final line is always written)", tc.reason)
			}
			if !strings.Contains(r.stdout, "Lost: 0 of") {
				t.Errorf("%s: stdout %s", tc.reason, r.stdout)
			}
			// The modes LoadGen's Server scenario carries run on a schedule:
			// the console gives result.json's send lateness.
			checkSendLatenessLine(t, r.stdout, dir, strings.Contains(r.stdout, "carried by LoadGen's Server scenario"))
		})
	}
}

func TestGBTRejectsImpossibleParameters(t *testing.T) {
	tests := []struct {
		args  []string
		names string // in stderr
	}{
		{[]string{"--arrival-mode", "2", "--lambda", "0"}, "lambda"},
		{[]string{"--arrival-mode", "1", "--jobs-per-period", "0"}, "n"},
		{[]string{"--arrival-mode", "3", "--duration", "5s", "--bursts", "2", "--burst-length", "3s"}, "burst_length"},
		{[]string{"--arrival-mode", "1", "--period", "10s", "--job-timeout", "1s"}, "timeout"},
		{[]string{"--arrival-mode", "7"}, "arrival-mode"},
		{[]string{"--arrival-mode", "2", "--scenario", "Offline"}, "--scenario"},
		{[]string{"--arrival-mode", "2", "--scenario-id", "T99-1"}, "scenario-id"},
		{[]string{"--arrival-mode", "2", "--loss-threshold", "2"}, "loss-threshold"},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		r := runCLI(t, "", append([]string{"run", "-q", "--output-dir", filepath.Join(dir, "out")}, tc.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.names) {
			t.Errorf("%v: want exit 2 naming %q, got %v", tc.args, tc.names, r)
		}
		if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
			t.Errorf("%v: nothing may run or be written for impossible parameters", tc.args)
		}
	}
}

func TestVideoStreamsReportsANumber(t *testing.T) {
	r := runCLI(t, "", "video-streams", "--sut", "null-async", "--fps", "50", "--duration", "200ms", "--max-streams", "8", "-q")
	if r.code != ExitOK || !strings.Contains(r.stdout, "Maximum video streams: at least 8") {
		t.Fatalf("%v", r)
	}
}

func TestScenariosListsTheCatalogue(t *testing.T) {
	r := runCLI(t, "", "scenarios")
	if r.code != ExitOK || !strings.Contains(r.stdout, "T11-2") || !strings.Contains(r.stdout, "resnet50") {
		t.Fatalf("%v", r)
	}
	// The scenarios whose workload runs are named, with how to run them.
	if !strings.Contains(r.stdout, "T13-1  ocr-dbnet: --sut onnx --onnx-workload ocr-dbnet") {
		t.Errorf("the list does not say that T13-1 runs:\n%s", r.stdout)
	}
}

func mustAtoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestECPFromTwoRuns(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	for _, dir := range []string{dirA, dirB} {
		if r := runCLI(t, "", "run", "--sut", "null-async", "-q", "--output-dir", dir, "--arrival-mode", "1", "--period", "20ms", "--duration", "600ms"); r.code != ExitOK {
			t.Fatal(r)
		}
	}
	runA, err := derived.ReadECPRun("a", dirA, "", false)
	thA := runA.Throughput
	if err != nil || !(thA > 0) {
		t.Fatalf("throughput %v, %v", thA, err)
	}
	cfg := filepath.Join(t.TempDir(), "w.json")
	// Baselines equal to the measured throughputs: every ratio is 1, so
	// the effective computing power is α (GB-7.6.4-T18-ecp).
	runB, _ := derived.ReadECPRun("b", dirB, "", false)
	thB := runB.Throughput
	os.WriteFile(cfg, []byte(fmt.Sprintf(`{"format":"aimeter-gbt-ecp/1","alpha":100,"scenarios":[
		{"name":"a","weight":0.5,"baseline":%v},{"name":"b","weight":0.5,"baseline":%v}]}`, thA, thB)), 0o644)
	r := runCLI(t, "", "ecp", cfg, "a="+dirA, "b="+dirB)
	if r.code != ExitOK || !strings.Contains(r.stdout, "Effective computing power: 100.0000") {
		t.Fatalf("%v", r)
	}
	if r := runCLI(t, "", "ecp", cfg, "a="+dirA); r.code != ExitUsage {
		t.Errorf("a weighted scenario without a run must be refused: %v", r)
	}
}

// TestECPRefusesMixedBases: a run measured on Table 18's T_DIP union (the
// reference SUT reports its stage times) and one on the tester-side span
// (the null SUT reports none) are two different figures; ECP refuses to
// combine them and names both runs (issue 39).
func TestECPRefusesMixedBases(t *testing.T) {
	union, span := t.TempDir(), t.TempDir()
	for _, run := range []struct{ sut, dir string }{{"reference", union}, {"null", span}} {
		if r := runCLI(t, "", "run", "--sut", run.sut, "-q", "--output-dir", run.dir, "--arrival-mode", "1", "--period", "20ms",
			"--duration", "200ms", "--set", "min_query_count=10"); r.code != ExitOK {
			t.Fatal(r)
		}
	}
	cfg := filepath.Join(t.TempDir(), "w.json")
	os.WriteFile(cfg, []byte(`{"format":"aimeter-gbt-ecp/1","alpha":100,"scenarios":[
		{"name":"a","weight":0.5,"baseline":1},{"name":"b","weight":0.5,"baseline":1}]}`), 0o644)
	r := runCLI(t, "", "ecp", cfg, "a="+union, "b="+span)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "a="+union) || !strings.Contains(r.stderr, "b="+span) {
		t.Fatalf("mixed bases must be refused naming both runs: %v", r)
	}
}

func TestSetCanChooseSeeds(t *testing.T) {
	// Seeds are read only from mlperf.conf in LoadGen; --set is read the
	// same way, so a run can be pinned to any seed from the command line.
	dir := t.TempDir()
	r := runCLI(t, "", "run", "-q", "--scenario", "Offline", "--output-dir", dir, "--set", "target_qps=1000",
		"--set", "qsl_rng_seed=42", "--set", "sample_index_rng_seed=7", "--set", "schedule_rng_seed=0x10000002a")
	// The seeds are the subject, not the verdict: an Offline run that
	// outpaces its expected rate misses min_duration (exit 3).
	if r.code != ExitOK && r.code != ExitInvalid {
		t.Fatal(r)
	}
	b, err := os.ReadFile(filepath.Join(dir, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"qsl_rng_seed": 42`, `"sample_index_rng_seed": 7`, `"schedule_rng_seed": 4294967338`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("settings.json lacks %s", want)
		}
	}
}

// A --set that the arrival mode overrules is refused before anything runs,
// naming both the setting and the arrival parameter (issue 7).
func TestGBTSetConflictIsAUsageError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	r := runCLI(t, "", "run", "-q", "--output-dir", dir, "--arrival-mode", "2", "--duration", "500ms", "--set", "min_duration=3000")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--set min_duration=3000") || !strings.Contains(r.stderr, "arrival duration 500ms") {
		t.Fatalf("want exit 2 naming --set min_duration=3000 and the arrival duration 500ms, got %v", r)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("nothing may run or be written for a conflicting --set")
	}
	// The same value as the arrival sets is no conflict.
	r = runCLI(t, "", "run", "-q", "--sut", "null-async", "--output-dir", dir, "--arrival-mode", "2", "--lambda", "100", "--duration", "300ms", "--set", "min_duration=300")
	if r.code != ExitOK {
		t.Fatalf("--set equal to what the mode sets: %v", r)
	}
	for _, name := range []string{gbt.TestFileName, gbt.ResultFileName, gbt.InferenceLogFileName} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

// A user.conf line is a choice like --set: one that the arrival mode
// overrules is refused naming the file and line, unless a --set replaces
// it; an equal value is no conflict.
func TestGBTUserConfConflict(t *testing.T) {
	wd := t.TempDir()
	conf := filepath.Join(wd, "mine.conf")
	if err := os.WriteFile(conf, []byte("# mine\n*.Server.target_qps = 100\n*.Server.min_duration = 3000\n*.SingleStream.target_latency = 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"run", "-q", "--sut", "null-async", "--user-conf", conf, "--arrival-mode", "2", "--duration", "300ms"}
	for _, c := range []struct {
		why       string
		args      []string
		code      int
		want, not []string
	}{
		{"both lines the mode sets otherwise are named, with file and line", []string{"--lambda", "500"}, ExitUsage,
			[]string{"user.conf mine.conf, line 2: target_qps=100 conflicts with the GB/T arrival rate λ = 500", "user.conf mine.conf, line 3: min_duration=3000 conflicts with the GB/T arrival duration 300ms"},
			[]string{"target_latency"}},
		{"a --set replaces the user.conf line it names", []string{"--lambda", "100", "--set", "min_duration=300"}, ExitOK, nil, []string{"conflicts"}},
		{"a line the mode sets alike (target_qps = λ) is not named; the other one still is", []string{"--lambda", "100"}, ExitUsage,
			[]string{"line 3: min_duration=3000"}, []string{"target_qps"}},
	} {
		r := runCLI(t, wd, append(append(append([]string{}, base...), c.args...), "--output-dir", filepath.Join(t.TempDir(), "out"))...)
		if r.code != c.code {
			t.Errorf("%s: exit %d, want %d\n%v", c.why, r.code, c.code, r)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr lacks %q\n%v", c.why, w, r)
			}
		}
		for _, w := range c.not {
			if strings.Contains(r.stderr, w) {
				t.Errorf("%s: stderr has %q\n%v", c.why, w, r)
			}
		}
	}
}

// readGBTResult reads a gbt_result.json file.
func readGBTResult(path string) (gbt.ResultFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return gbt.ResultFile{}, err
	}
	defer f.Close()
	return gbt.ReadResultFile(f)
}
