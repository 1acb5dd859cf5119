package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/bundle"
)

// An integer --set that LoadGen's strtoull would misread is refused with
// exit 2, naming the key, before anything runs or is written (issue 8,
// defect 4).
func TestRunSetRefusesMisreadIntegers(t *testing.T) {
	for _, r := range []struct {
		set, key, want string
		reason         string
	}{
		{"min_duration=-5", "min_duration", "negative", "strtoull wraps -5 to 2^64-5 ms and the run ends at once as INVALID"},
		{"min_duration=1e3", "min_duration", "not a whole number", "strtoull stops at 'e': 1 ms, not 1000"},
		{"min_query_count=2.5", "min_query_count", "not a whole number", "the fraction would be dropped"},
		{"max_query_count=99999999999999999999", "max_query_count", "out of range", "a 20-digit value saturates at 2^64-1"},
		{"min_duration=010", "min_duration", "octal", "a leading 0 reads as octal 8"},
		{"target_qps=inf", "target_qps", "not a finite number", "no schedule has an infinite rate"},
	} {
		t.Run(r.set, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			res := runCLI(t, "", "run", "-q", "--output-dir", out, "--set", r.set)
			if res.code != ExitUsage || !strings.Contains(res.stderr, r.key+" = ") || !strings.Contains(res.stderr, r.want) {
				t.Fatalf("%s: want exit 2 naming %s (%q), got %v", r.reason, r.key, r.want, res)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s: the refused run wrote %s", r.reason, out)
			}
		})
	}
}

// TestRunSetTokenBoundsNeedTokenLatencies: LoadGen reads ttft_latency and
// tpot_latency only while token latencies are on, so a --set of either
// without them is refused instead of silently ignored; --sut openai turns
// them on before --set when it streams, so its bounds apply.
func TestRunSetTokenBoundsNeedTokenLatencies(t *testing.T) {
	for _, r := range []struct {
		args   []string
		code   int
		reason string
	}{
		{[]string{"--scenario", "Server", "--set", "ttft_latency=2000"}, ExitUsage, "token latencies off: the bound would be ignored"},
		{[]string{"--scenario", "Server", "--set", "tpot_latency=200"}, ExitUsage, "the same for TPOT"},
		{[]string{"--scenario", "Server", "--set", "use_token_latencies=1", "--set", "ttft_latency=2000", "--set", "min_duration=100"}, ExitOK, "with token latencies on it is read"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		res := runCLI(t, "", append([]string{"run", "-q", "--output-dir", out}, r.args...)...)
		if res.code != r.code && !(r.code == ExitOK && res.code == ExitInvalid) {
			t.Fatalf("%s: want exit %d, got %v", r.reason, r.code, res)
		}
		if r.code == ExitUsage && !strings.Contains(res.stderr, "use_token_latencies=1") {
			t.Errorf("%s: the error should say how to turn them on: %s", r.reason, res.stderr)
		}
	}
}

// A config file keeps LoadGen's reading, but a surprising conversion is a
// warning on stderr and in the detail log; this one is in the audit.config of
// a self-test run, whose warnings were dropped before (issue 8, defect 4).
func TestRunConfigConversionWarning(t *testing.T) {
	wd := t.TempDir()
	if err := os.WriteFile(filepath.Join(wd, "audit.config"), []byte("\xEF\xBB\xBF*.SingleStream.min_query_count = 300.7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	res := runCLI(t, wd, quickArgs("SingleStream", out)...)
	if res.code != ExitOK {
		t.Fatalf("want exit 0\n%s", res)
	}
	const want = `value 300.7 is read as the integer 300`
	if !strings.Contains(res.stderr, "warning: ") || !strings.Contains(res.stderr, want) {
		t.Errorf("stderr lacks the conversion warning %q:\n%s", want, res.stderr)
	}
	if !strings.Contains(res.stderr, "byte-order mark") {
		t.Errorf("stderr lacks the byte-order-mark warning:\n%s", res.stderr)
	}
	if got := readRunInfoT(t, out).Effective.MinQueryCount; got != 300 {
		t.Errorf("min_query_count %d, want LoadGen's reading 300 (the BOM must not drop line 1)", got)
	}
	d := parseDetailLog(t, filepath.Join(out, bundle.DetailFile))
	var logged bool
	for _, v := range d["warning_generic_message"] {
		var s string
		if json.Unmarshal(v, &s) == nil && strings.Contains(s, want) {
			logged = true
		}
	}
	if !logged {
		t.Errorf("detail log lacks the conversion warning %q", want)
	}
}

// The warnings reach the user before the run: a mistyped model key names
// the nearest known ones, and a 10-minute official run says so and why.
func TestRunWarnsBeforeItStarts(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, dir, "run", "-q", "--model", "resnet-50", "--set", "min_duration=50", "--set", "min_query_count=1", "--set", "target_qps=1000", "--output-dir", filepath.Join(dir, "a"))
	if !strings.Contains(r.stderr, `--model "resnet-50" is not a model key`) || !strings.Contains(r.stderr, "nearest known keys: resnet50") {
		t.Errorf("no warning naming resnet50 for --model resnet-50:\n%v", r)
	}
	r = runCLI(t, dir, "run", "-q", "--model", "resnet50", "--timeout", "100ms", "--output-dir", filepath.Join(dir, "b"))
	if !strings.Contains(r.stderr, "this run will take at least 10m0s for resnet50 Server: min_duration = 600000 ms, from the built-in mlperf.conf") {
		t.Errorf("no notice of the 10-minute run:\n%v", r)
	}
	if r.code != ExitInterrupted {
		t.Errorf("want exit %d from --timeout, got %v", ExitInterrupted, r)
	}
}
