package mlperfconf

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"aimeter/loadgen"
)

func mustParse(t *testing.T, text string) *Config {
	t.Helper()
	c, err := Parse(strings.NewReader(text), "t.conf")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func entryMap(c *Config) map[string]string {
	m := map[string]string{}
	for _, e := range c.Entries() {
		m[e.Key] = e.Value
	}
	return m
}

func TestParseSyntax(t *testing.T) {
	tests := []struct {
		reason   string
		in       string
		want     map[string]string // nil: expect an error
		errLines []int             // lines the errors must name
		warns    []string          // substrings, one per expected warning
	}{
		{reason: "blank and whitespace-only lines are nothing", in: "\n \t\r\n\v\f\n", want: map[string]string{}},
		{reason: "plain key = value", in: "resnet50.Server.target_latency = 15\n", want: map[string]string{"resnet50.Server.target_latency": "15"}},
		{reason: "the last line needs no newline", in: "a.b.c = 1", want: map[string]string{"a.b.c": "1"}},
		{reason: "any C whitespace separates tokens; CRLF is fine", in: "a\t=\v1\r\nb\f=  2 \r\n", want: map[string]string{"a": "1", "b": "2"}},
		{reason: "a=b is one token: LoadGen ignores the line silently; we warn", in: "a=1\n", want: map[string]string{}, warns: []string{"t.conf:1: \"a=1\" is ignored: LoadGen needs spaces around '='"}},
		{reason: "a =b: the second token must be exactly '='", in: "\na =1\n", errLines: []int{2}},
		{reason: "a= b: the key is 'a=' and 'b' is not '='", in: "a= 1\n", errLines: []int{1}},
		{reason: "a line whose first token is '#' is a comment", in: "# x = 1\n  # indented\n", want: map[string]string{}},
		{reason: "'#x' is an ordinary key token, not a comment", in: "#x = 1\n", want: map[string]string{"#x": "1"}},
		{reason: "'#x' alone is a key without value: ignored", in: "#comment\n", want: map[string]string{}, warns: []string{"has no '= value'"}},
		{reason: "'key # text' stops at '#' before the '=': ignored", in: "k # note\n", want: map[string]string{}, warns: []string{"followed by a comment"}},
		{reason: "a trailing '# comment' after a value is an error", in: "k = 1 # note\n", errLines: []int{1}},
		{reason: "'key = #': '#' is read as a value and is not a number", in: "k = #\n", errLines: []int{1}},
		{reason: "missing value: nothing is set, no error", in: "k =\n", want: map[string]string{}, warns: []string{"has no value"}},
		{reason: "several values: each is checked, the last wins", in: "k = 1 2\n", want: map[string]string{"k": "2"}, warns: []string{"several values"}},
		{reason: "several values: a bad one fails the line", in: "k = 1 x\n", errLines: []int{1}},
		{reason: "duplicate keys: the last wins", in: "k = 1\nk = 2\n", want: map[string]string{"k": "2"}, warns: []string{"t.conf:2: key \"k\" is already set on line 1"}},
		{reason: "hex integer", in: "k = 0x1F\n", want: map[string]string{"k": "0x1F"}},
		{reason: "leading-0 octal integer", in: "k = 010\n", want: map[string]string{"k": "010"}},
		{reason: "08 is not octal but strtod takes it", in: "k = 08\n", want: map[string]string{"k": "08"}},
		{reason: "signed integers", in: "a = -1\nb = +5\n", want: map[string]string{"a": "-1", "b": "+5"}},
		{reason: "integer overflow saturates but is valid", in: "k = 18446744073709551616\n", want: map[string]string{"k": "18446744073709551616"}},
		{reason: "strtod forms: exponent, bare fraction, trailing dot", in: "a = 1e3\nb = .5\nc = 5.\nd = 1.5e-3\n", want: map[string]string{"a": "1e3", "b": ".5", "c": "5.", "d": "1.5e-3"}},
		{reason: "strtod accepts inf, infinity and nan(chars)", in: "a = inf\nb = -INFINITY\nc = nan\nd = nan(x_1)\n", want: map[string]string{"a": "inf", "b": "-INFINITY", "c": "nan", "d": "nan(x_1)"}},
		{reason: "strtod accepts hex floats", in: "a = 0x1.8p3\nb = 0x.8\n", want: map[string]string{"a": "0x1.8p3", "b": "0x.8"}},
		{reason: "an exponent without digits is not consumed", in: "k = 1e\n", errLines: []int{1}},
		{reason: "0x without hex digits is not a number", in: "k = 0x\n", errLines: []int{1}},
		{reason: "no digit separators", in: "k = 1_000\n", errLines: []int{1}},
		{reason: "no binary literals (pre-C23 strtoul)", in: "k = 0b101\n", errLines: []int{1}},
		{reason: "'infin' is 'inf' plus junk", in: "k = infin\n", errLines: []int{1}},
		{reason: "words are not values", in: "k = true\n", errLines: []int{1}},
		{reason: "a NUL byte ends the C string: the value is never whole", in: "k = 1\x002\n", errLines: []int{1}},
		{reason: "U+00A0 is not C whitespace", in: "k\u00a0= 1\n", errLines: []int{1}},
		{reason: "every bad line is reported", in: "a = x\nok = 1\nb = y\n", errLines: []int{1, 3}},
		{reason: "keys need no dots (they just never match a lookup)", in: "plain = 1\n", want: map[string]string{"plain": "1"}},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			c, err := Parse(strings.NewReader(tc.in), "t.conf")
			if tc.want == nil {
				if err == nil {
					t.Fatalf("want an error, got entries %v", entryMap(c))
				}
				if c != nil {
					t.Errorf("want a nil Config with the error")
				}
				var lines []int
				for _, e := range unjoin(err) {
					var ce *Error
					if !errors.As(e, &ce) {
						t.Fatalf("error %v is not a *Error", e)
					}
					if ce.File != "t.conf" || ce.Key == "" {
						t.Errorf("error %+v lacks file or key", ce)
					}
					if !strings.Contains(e.Error(), "t.conf:") || !strings.Contains(e.Error(), strconv.Quote(ce.Key)) {
						t.Errorf("message %q does not name file and key", e)
					}
					lines = append(lines, ce.Line)
				}
				if !slices.Equal(lines, tc.errLines) {
					t.Errorf("error lines %v, want %v (%v)", lines, tc.errLines, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got := entryMap(c); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("entries %v, want %v", got, tc.want)
			}
			if len(c.Warnings) != len(tc.warns) {
				t.Fatalf("warnings %q, want %d matching %q", c.Warnings, len(tc.warns), tc.warns)
			}
			for i, w := range tc.warns {
				if !strings.Contains(c.Warnings[i], w) {
					t.Errorf("warning %q does not contain %q", c.Warnings[i], w)
				}
			}
		})
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestTrailingCommentErrorMessage(t *testing.T) {
	_, err := Parse(strings.NewReader("\n*.Server.target_qps = 10 # my note\n"), "user.conf")
	want := `user.conf:2: key "*.Server.target_qps": value "#" needs to be an integer or a double (LoadGen allows no comment after a value)`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

// The expected numbers come from glibc 2.36 strtoull/strtod.
func TestCNumberReadings(t *testing.T) {
	tests := []struct {
		tok   string
		uint  uint64
		uLen  int
		float float64
		fLen  int
	}{
		{"0", 0, 1, 0, 1},
		{"010", 8, 3, 10, 3},
		{"08", 0, 1, 8, 2},
		{"0x1F", 31, 4, 31, 4},
		{"0x", 0, 1, 0, 1},
		{"0x.8", 0, 1, 0.5, 4},
		{"0x1.8p3", 1, 3, 12, 7},
		{"0x1p", 1, 3, 1, 3},
		{"1e3", 1, 1, 1000, 3},
		{"1e", 1, 1, 1, 1},
		{".5", 0, 0, 0.5, 2},
		{"5.", 5, 1, 5, 2},
		{"1.e5", 1, 1, 1e5, 4},
		{"2.5", 2, 1, 2.5, 3},
		{"99.9", 99, 2, 99.9, 4},
		{"inf", 0, 0, math.Inf(1), 3},
		{"-INF", 0, 0, math.Inf(-1), 4},
		{"infinity", 0, 0, math.Inf(1), 8},
		{"infin", 0, 0, math.Inf(1), 3},
		{"nan(x_1)", 0, 0, math.NaN(), 8},
		{"nan(", 0, 0, math.NaN(), 3},
		{"-1", math.MaxUint64, 2, -1, 2},
		{"+5", 5, 2, 5, 2},
		{"18446744073709551615", math.MaxUint64, 20, 18446744073709551615, 20},
		{"18446744073709551616", math.MaxUint64, 20, 18446744073709551616, 20},
		{"1e400", 1, 1, math.Inf(1), 5},
		{"1e-400", 1, 1, 0, 6},
		{"0b101", 0, 1, 0, 1},
		{"1e+", 1, 1, 1, 1},
		{".", 0, 0, 0, 0},
		{"e5", 0, 0, 0, 0},
		{"1.2.3", 1, 1, 1.2, 3},
	}
	for _, tc := range tests {
		u, un := cStrtoull(tc.tok)
		f, fn := cStrtod(tc.tok)
		sameF := f == tc.float || math.IsNaN(f) && math.IsNaN(tc.float)
		if u != tc.uint || un != tc.uLen || !sameF || fn != tc.fLen {
			t.Errorf("%q: strtoull %d/%d, strtod %v/%d; want %d/%d, %v/%d", tc.tok, u, un, f, fn, tc.uint, tc.uLen, tc.float, tc.fLen)
		}
	}
	if f, _ := cStrtod("-0"); !math.Signbit(f) {
		t.Errorf("-0 lost its sign")
	}
}

func TestEntryReadings(t *testing.T) {
	c := mustParse(t, "a = 010\nb = 1e3\nc = 0x10\n")
	for key, want := range map[string]Entry{
		"a": {Key: "a", Value: "010", Line: 1, Uint: 8, Float: 10},
		"b": {Key: "b", Value: "1e3", Line: 2, Uint: 1, Float: 1000},
		"c": {Key: "c", Value: "0x10", Line: 3, Uint: 16, Float: 16},
	} {
		if got, ok := c.Get(key); !ok || got != want {
			t.Errorf("Get(%q) = %+v, want %+v", key, got, want)
		}
	}
	if c.Len() != 3 {
		t.Errorf("Len = %d", c.Len())
	}
}

func TestLookupPrecedence(t *testing.T) {
	all := []string{"m.Server.x = 1", "*.Server.x = 2", "m.*.x = 3", "*.*.x = 4"}
	for i := range all {
		c := mustParse(t, strings.Join(all[i:], "\n"))
		e, ok := c.Lookup("m", "Server", "x")
		if !ok || e.Uint != uint64(i+1) {
			t.Errorf("with %q: got %+v, %v; want value %d", all[i:], e, ok, i+1)
		}
	}
	// Scenario beats model: "*.Server.x" wins over "m.*.x".
	c := mustParse(t, "m.*.x = 3\n*.Server.x = 2\n")
	if e, _ := c.Lookup("m", "Server", "x"); e.Value != "2" {
		t.Errorf("*.Server.x should beat m.*.x, got %v", e.Value)
	}
	// Other models and scenarios never match.
	c = mustParse(t, "other.Server.x = 1\nm.Offline.x = 2\n")
	if e, ok := c.Lookup("m", "Server", "x"); ok {
		t.Errorf("unexpected match %+v", e)
	}
}

func applied(t *testing.T, text, model string, sc loadgen.Scenario, kind Kind) loadgen.Settings {
	t.Helper()
	s := loadgen.DefaultSettings()
	s.Scenario = sc
	if err := mustParse(t, text).Apply(&s, model, sc, kind); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return s
}

func TestApplyUnits(t *testing.T) {
	pct := func(p float64) float64 { return p * 0.01 } // FromConfig's runtime product
	s := applied(t, `
*.Server.target_latency = 15
*.SingleStream.target_latency = 0.5
*.MultiStream.target_latency = 528
*.SingleStream.target_latency_percentile = 90
*.MultiStream.target_latency_percentile = 99.9
*.Server.target_latency_percentile = 97
*.*.min_duration = 600000
*.*.max_duration = 700000
*.Server.target_qps = 2500.5
*.Offline.target_qps = 1e4
*.*.use_token_latencies = 1
*.Server.ttft_latency = 2000
*.Server.tpot_latency = 0x10
`, "m", loadgen.Server, UserConf)
	checks := []struct {
		name      string
		got, want any
	}{
		{"Server target_latency ms → ns", s.ServerTargetLatencyNs, uint64(15_000_000)},
		{"SingleStream target_latency ms → expected ns (floating)", s.SingleStreamExpectedLatencyNs, uint64(500_000)},
		{"MultiStream target_latency ms → expected ns", s.MultiStreamExpectedLatencyNs, uint64(528_000_000)},
		{"SingleStream percentile percent → fraction", s.SingleStreamTargetLatencyPercentile, pct(90)},
		{"MultiStream percentile percent → fraction", s.MultiStreamTargetLatencyPercentile, pct(99.9)},
		{"Server percentile percent → fraction", s.ServerTargetLatencyPercentile, pct(97)},
		{"min_duration stays ms", s.MinDurationMs, uint64(600_000)},
		{"max_duration stays ms", s.MaxDurationMs, uint64(700_000)},
		{"Server target_qps floating", s.ServerTargetQPS, 2500.5},
		{"Offline target_qps floating", s.OfflineExpectedQPS, 1e4},
		{"ttft ms → ns", s.ServerTTFTLatencyNs, uint64(2_000_000_000)},
		{"tpot hex ms → ns", s.ServerTPOTLatencyNs, uint64(16_000_000)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	// 99.9 × 0.01 is not the double nearest 0.999: keep LoadGen's product.
	if s.MultiStreamTargetLatencyPercentile == 0.999 {
		t.Logf("note: 99.9*0.01 happens to equal 0.999 here")
	}
}

func TestApplyIntegerQuirks(t *testing.T) {
	c := mustParse(t, `
*.Server.target_latency = 2.5
*.*.min_duration = 6e5
*.*.min_query_count = 010
*.*.max_query_count = -1
*.Server.max_async_queries = 4294967296
`)
	s := loadgen.DefaultSettings()
	var warns []string
	if err := c.apply(&s, "m", loadgen.Server, UserConf, func(w string) { warns = append(warns, w) }, nil); err != nil {
		t.Fatal(err)
	}
	if s.ServerTargetLatencyNs != 2_000_000 {
		t.Errorf("2.5 ms read as integer: got %d ns, want 2000000", s.ServerTargetLatencyNs)
	}
	if s.MinDurationMs != 6 {
		t.Errorf("6e5 read by strtoull: got %d, want 6", s.MinDurationMs)
	}
	if s.MinQueryCount != 8 {
		t.Errorf("010 is octal: got %d", s.MinQueryCount)
	}
	if s.MaxQueryCount != math.MaxUint64 {
		t.Errorf("-1 wraps: got %d", s.MaxQueryCount)
	}
	if s.ServerMaxAsyncQueries != 0 {
		t.Errorf("4294967296 through a 32-bit int: got %d, want 0", s.ServerMaxAsyncQueries)
	}
	if len(warns) != 5 {
		t.Errorf("want one warning per quirk, got %q", warns)
	}
	for _, w := range warns {
		if !strings.HasPrefix(w, "t.conf:") {
			t.Errorf("warning %q does not name the file and line", w)
		}
	}
	s = applied(t, "*.Server.max_async_queries = 2147483648\n", "m", loadgen.Server, UserConf)
	if s.ServerMaxAsyncQueries != 0xFFFFFFFF80000000 {
		t.Errorf("2^31 through int: got %#x", s.ServerMaxAsyncQueries)
	}
}

func TestApplyFixedScenarioLookups(t *testing.T) {
	// ttft/tpot are read under "Server" whatever the scenario; Offline lines are never read.
	s := applied(t, `
m.*.use_token_latencies = 1
m.Server.ttft_latency = 5
m.Offline.tpot_latency = 7
m.SingleStream.target_latency_percentile = 95
m.Server.target_qps = 3
m.Offline.target_qps = 4
`, "m", loadgen.Offline, UserConf)
	if s.ServerTTFTLatencyNs != 5_000_000 {
		t.Errorf("ttft read under Server: got %d", s.ServerTTFTLatencyNs)
	}
	if s.ServerTPOTLatencyNs != 100_000_000 {
		t.Errorf("Offline tpot line must be ignored: got %d", s.ServerTPOTLatencyNs)
	}
	if pct := 95.0; s.SingleStreamTargetLatencyPercentile != pct*0.01 || s.ServerTargetQPS != 3 || s.OfflineExpectedQPS != 4 {
		t.Errorf("scenario-fixed keys not applied for Offline run: %+v", s)
	}
	// Keys read under the run's scenario: a SingleStream line does not apply to Server.
	s = applied(t, "m.SingleStream.min_query_count = 5\n", "m", loadgen.Server, UserConf)
	if s.MinQueryCount != 100 {
		t.Errorf("SingleStream min_query_count applied to Server: %d", s.MinQueryCount)
	}
}

func TestApplyTokenGate(t *testing.T) {
	s := applied(t, "*.Server.ttft_latency = 5\n*.*.token_latency_scaling_factor = 9\n", "m", loadgen.Server, UserConf)
	if s.ServerTTFTLatencyNs != 100_000_000 || s.TokenLatencyScalingFactor != 0 {
		t.Errorf("token keys must be ignored while token modes are off: %+v", s)
	}
	// Token mode on from an earlier file (mlperf.conf): user.conf's ttft is read.
	s = loadgen.DefaultSettings()
	s.UseTokenLatencies = true
	s.InferTokenLatencies = true
	if err := mustParse(t, "*.Server.ttft_latency = 5\n*.*.token_latency_scaling_factor = 9\n").Apply(&s, "m", loadgen.Server, UserConf); err != nil {
		t.Fatal(err)
	}
	if s.ServerTTFTLatencyNs != 5_000_000 || s.TokenLatencyScalingFactor != 9 {
		t.Errorf("token keys must be read once a mode is on: %+v", s)
	}
}

func TestApplyBooleans(t *testing.T) {
	s := applied(t, `
*.*.use_token_latencies = 2
*.*.sample_concatenate_permutation = 2
*.*.performance_issue_same = 2
*.*.print_timestamps = 0x1
*.Server.coalesce_queries = -1
`, "m", loadgen.Server, UserConf)
	if s.UseTokenLatencies || s.SampleConcatenatePermutation {
		t.Errorf("use_token_latencies and sample_concatenate_permutation are true only for 1")
	}
	if !s.PerformanceIssueSame || !s.PrintTimestamps || !s.ServerCoalesceQueries {
		t.Errorf("performance_issue_same, print_timestamps and coalesce_queries are true unless 0")
	}
}

func TestApplyMode(t *testing.T) {
	for v, want := range []loadgen.Mode{loadgen.SubmissionRun, loadgen.AccuracyOnly, loadgen.PerformanceOnly, loadgen.FindPeakPerformance} {
		s := applied(t, "*.*.mode = "+string(rune('0'+v)), "m", loadgen.Server, UserConf)
		if s.Mode != want {
			t.Errorf("mode %d: got %v", v, s.Mode)
		}
	}
	c := mustParse(t, "*.*.min_query_count = 5\n*.Server.mode = 4\n")
	s := loadgen.DefaultSettings()
	err := c.Apply(&s, "m", loadgen.Server, UserConf)
	var ce *Error
	if !errors.As(err, &ce) || ce.Line != 2 || ce.Key != "*.Server.mode" {
		t.Fatalf("want a Error for line 2, got %v", err)
	}
	if s != loadgen.DefaultSettings() {
		t.Errorf("an invalid mode must change nothing")
	}
}

func TestConfOnlyKeysIgnoredOutsideMLPerfConf(t *testing.T) {
	text := `
*.*.qsl_rng_seed = 1
*.*.sample_index_rng_seed = 2
*.*.schedule_rng_seed = 3
*.*.accuracy_log_probability = 50
*.*.test05 = 1
*.*.test05_qsl_rng_seed = 4
*.*.test05_sample_index_rng_seed = 5
*.*.test05_schedule_rng_seed = 6
*.*.accuracy_log_rng_seed = 7
`
	for _, kind := range []Kind{UserConf, AuditConf} {
		s := applied(t, text, "m", loadgen.Server, kind)
		want := loadgen.DefaultSettings()
		want.Scenario = loadgen.Server
		want.AccuracyLogRNGSeed = 7 // not conf-only: audit.config TEST01 sets it
		if s != want {
			t.Errorf("%v: conf-only keys applied: %+v", kind, s)
		}
	}
	s := applied(t, text, "m", loadgen.Server, BuiltinConf)
	if s.QSLRNGSeed != 1 || s.SampleIndexRNGSeed != 2 || s.ScheduleRNGSeed != 3 || s.AccuracyLogProbability != 50*0.01 ||
		!s.Test05 || s.Test05QSLRNGSeed != 4 || s.Test05SampleIndexRNGSeed != 5 || s.Test05ScheduleRNGSeed != 6 {
		t.Errorf("mlperf.conf must set the conf-only keys: %+v", s)
	}
}

func TestAuditConfigModelLinesIgnored(t *testing.T) {
	text := "resnet50.Server.min_query_count = 5\n*.Server.performance_issue_same = 1\nresnet50.*.performance_issue_same_index = 3\n"
	s := applied(t, text, "resnet50", loadgen.Server, AuditConf)
	if s.MinQueryCount != 100 || s.PerformanceIssueSameIndex != 0 {
		t.Errorf("model-specific audit.config lines must be ignored: %+v", s)
	}
	if !s.PerformanceIssueSame {
		t.Errorf("generic audit.config line not applied")
	}
	// The same lines do apply from a user.conf.
	s = applied(t, text, "resnet50", loadgen.Server, UserConf)
	if s.MinQueryCount != 5 || s.PerformanceIssueSameIndex != 3 {
		t.Errorf("user.conf model lines not applied: %+v", s)
	}
}

func TestEmptyModelIsGeneric(t *testing.T) {
	s := applied(t, ".Server.min_query_count = 5\n*.Server.max_query_count = 9\n", "", loadgen.Server, UserConf)
	if s.MinQueryCount != 100 || s.MaxQueryCount != 9 {
		t.Errorf("empty model must act as \"*\": %+v", s)
	}
}

func TestBuiltinParses(t *testing.T) {
	c, err := parseConfig(bytes.NewReader(builtinConfText), builtinConfName)
	if err != nil {
		t.Fatalf("embedded mlperf.conf: %v", err)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("embedded mlperf.conf warnings: %q", c.Warnings)
	}
	if !strings.HasPrefix(string(builtinConfText), "# Values from MLCommons LoadGen loadgen/mlperf.conf (Apache-2.0") {
		t.Errorf("attribution line missing")
	}
	b := Builtin()
	if b.Len() != c.Len() || b.Name != "mlperf.conf" {
		t.Errorf("Builtin differs from a fresh parse")
	}
	b.Warnings = append(b.Warnings, "x")
	if len(Builtin().Warnings) != 0 {
		t.Errorf("Builtin shares its Warnings")
	}
}

func builtin(t *testing.T, model string, sc loadgen.Scenario) loadgen.Settings {
	t.Helper()
	s := loadgen.DefaultSettings()
	s.Scenario = sc
	if err := Builtin().Apply(&s, model, sc, BuiltinConf); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBuiltinGolden(t *testing.T) {
	s := builtin(t, "resnet50", loadgen.Server)
	if s.ServerTargetLatencyNs != 15_000_000 || s.PerformanceSampleCountOverride != 1024 || s.MinDurationMs != 600_000 || s.ServerTargetQPS != 1 {
		t.Errorf("resnet50 Server: %+v", s)
	}
	if s.QSLRNGSeed != 2085463073848966840 || s.SampleIndexRNGSeed != 2747215439041700203 || s.ScheduleRNGSeed != 16159082839903944936 {
		t.Errorf("seeds: %d %d %d", s.QSLRNGSeed, s.SampleIndexRNGSeed, s.ScheduleRNGSeed)
	}
	if s.Test05QSLRNGSeed != 7975553102935885558 || s.Test05SampleIndexRNGSeed != 11403566307062068064 || s.Test05ScheduleRNGSeed != 15816800565822761601 || s.Test05 {
		t.Errorf("test05 seeds: %+v", s)
	}
	if s.ServerTargetLatencyPercentile != 99*0.01 || s.Mode != loadgen.PerformanceOnly {
		t.Errorf("resnet50 Server percentile/mode: %+v", s)
	}

	s = builtin(t, "llama2-70b", loadgen.Server)
	if !s.UseTokenLatencies || s.ServerTTFTLatencyNs != 2_000_000_000 || s.ServerTPOTLatencyNs != 200_000_000 ||
		s.ServerTargetLatencyNs != 0 || !s.SampleConcatenatePermutation || s.PerformanceSampleCountOverride != 24576 {
		t.Errorf("llama2-70b Server: %+v", s)
	}

	s = builtin(t, "3d-unet", loadgen.Offline)
	if !s.SampleConcatenatePermutation || s.PerformanceSampleCountOverride != 0 || s.MinQueryCount != 43 || s.OfflineExpectedQPS != 1 {
		t.Errorf("3d-unet Offline: %+v", s)
	}

	s = builtin(t, "retinanet", loadgen.MultiStream)
	if s.MultiStreamExpectedLatencyNs != 528_000_000 || s.MultiStreamSamplesPerQuery != 8 || s.MinQueryCount != 662 || s.MultiStreamTargetLatencyPercentile != 99*0.01 {
		t.Errorf("retinanet MultiStream: %+v", s)
	}
	s = builtin(t, "resnet50", loadgen.MultiStream)
	if s.MultiStreamExpectedLatencyNs != 80_000_000 {
		t.Errorf("MultiStream default expected latency: %d", s.MultiStreamExpectedLatencyNs)
	}

	s = builtin(t, "pointpainting", loadgen.SingleStream)
	if s.SingleStreamTargetLatencyPercentile != 99.9*float64(0.01) || s.SingleStreamExpectedLatencyNs != 10_000_000 || s.MinQueryCount != 100 {
		t.Errorf("pointpainting SingleStream: %+v", s)
	}
	pct := 99.9
	if s.SingleStreamTargetLatencyPercentile != pct*0.01 {
		t.Errorf("pointpainting percentile %v", s.SingleStreamTargetLatencyPercentile)
	}

	s = builtin(t, "gptj", loadgen.Offline)
	if !s.InferTokenLatencies || s.TokenLatencyScalingFactor != 69 || s.UseTokenLatencies || s.MinQueryCount != 13368 {
		t.Errorf("gptj Offline: %+v", s)
	}

	s = builtin(t, "gpt-oss-120b-interactive", loadgen.Server)
	if s.ServerTTFTLatencyNs != 2_000_000_000 || s.ServerTPOTLatencyNs != 15_000_000 || s.AccuracySampleCountOverride != 4395 || s.PerformanceSampleCountOverride != 6396 {
		t.Errorf("gpt-oss-120b-interactive Server: %+v", s)
	}

	s = builtin(t, "unknown-model", loadgen.Server)
	if s.ServerTargetLatencyNs != 10_000_000 || s.PerformanceSampleCountOverride != 0 || s.UseTokenLatencies {
		t.Errorf("generic Server defaults: %+v", s)
	}
}

// TestBuiltinModelTable checks every row of the reference's "Current
// mlperf.conf" table (loadgen-reference.md §11).
func TestBuiltinModelTable(t *testing.T) {
	const none = math.MaxUint64
	rows := []struct {
		model      string
		psc        uint64 // performance_sample_count_override (none: not set)
		server     uint64 // Server target_latency in ms (none: the 10 ms default)
		ttft, tpot uint64 // ms, 0: not set
		offline    uint64 // Offline min_query_count (none: the default 100)
		eq, tokens bool
	}{
		{"resnet50", 1024, 15, 0, 0, 24576, false, false},
		{"ssd-mobilenet", 256, none, 0, 0, none, false, false},
		{"retinanet", 64, 100, 0, 0, 24576, false, false},
		{"bert", 10833, 130, 0, 0, 10833, false, false},
		{"dlrm", 204800, 60, 0, 0, none, false, false},
		{"dlrm-v2", 204800, 60, 0, 0, 24576, false, false},
		{"dlrm-v3", none, 80, 0, 0, none, false, false},
		{"rnnt", 2513, 1000, 0, 0, 2513, false, false},
		{"gptj", 13368, 20000, 0, 0, 13368, true, false},
		{"mixtral-8x7b", 15000, 0, 2000, 200, 15000, true, true},
		{"llama2-70b", 24576, 0, 2000, 200, 24576, true, true},
		{"llama2-70b-interactive", 24576, 0, 450, 40, none, true, true},
		{"llama3_1-405b", 8313, 0, 6000, 175, 8313, true, true},
		{"llama3_1-405b-interactive", 8313, 0, 4500, 80, none, true, true},
		{"llama3_1-8b", 13368, 0, 2000, 100, 13368, true, true},
		{"llama3_1-8b-interactive", 13368, 0, 500, 30, none, true, true},
		{"llama3_1-8b-edge", 5000, none, 0, 0, 5000, true, true},
		{"deepseek-r1", 4388, 0, 2000, 80, 4388, true, true},
		{"deepseek-r1-interactive", 4388, 0, 1500, 15, none, true, true},
		{"gpt-oss-120b", 6396, 0, 3000, 80, none, true, true},
		{"gpt-oss-120b-interactive", 6396, 0, 2000, 15, none, true, true},
		{"whisper", 1633, none, 0, 0, 1633, true, true},
		{"qwen3-vl-235b-a22b", 48289, 12000, 0, 0, 48289, true, false},
		{"stable-diffusion-xl", 5000, 20000, 0, 0, 5000, false, false},
		{"wan-2.2-t2v-a14b", 248, none, 0, 0, 248, false, false},
		{"rgat", 788379, none, 0, 0, 788379, true, false},
		{"pointpainting", 1024, none, 0, 0, none, false, false},
		{"yolo", 64, none, 0, 0, none, false, false},
		{"3d-unet", 0, none, 0, 0, 43, true, false},
	}
	for _, r := range rows {
		srv := builtin(t, r.model, loadgen.Server)
		off := builtin(t, r.model, loadgen.Offline)
		want := func(v, dflt uint64) uint64 {
			if v == none {
				return dflt
			}
			return v
		}
		if srv.PerformanceSampleCountOverride != want(r.psc, 0) {
			t.Errorf("%s psc %d", r.model, srv.PerformanceSampleCountOverride)
		}
		if srv.ServerTargetLatencyNs != want(r.server, 10)*1_000_000 {
			t.Errorf("%s Server target_latency %d ns", r.model, srv.ServerTargetLatencyNs)
		}
		if r.ttft != 0 && (srv.ServerTTFTLatencyNs != r.ttft*1_000_000 || srv.ServerTPOTLatencyNs != r.tpot*1_000_000) {
			t.Errorf("%s ttft/tpot %d/%d ns", r.model, srv.ServerTTFTLatencyNs, srv.ServerTPOTLatencyNs)
		}
		if r.ttft == 0 && (srv.ServerTTFTLatencyNs != 100_000_000 || srv.ServerTPOTLatencyNs != 100_000_000) {
			t.Errorf("%s has token bounds it should not", r.model)
		}
		if off.MinQueryCount != want(r.offline, 100) {
			t.Errorf("%s Offline min_query_count %d", r.model, off.MinQueryCount)
		}
		if srv.SampleConcatenatePermutation != r.eq || srv.UseTokenLatencies != r.tokens {
			t.Errorf("%s equal-issue %v tokens %v", r.model, srv.SampleConcatenatePermutation, srv.UseTokenLatencies)
		}
		if off.MinDurationMs != 600_000 || srv.MinDurationMs != 600_000 {
			t.Errorf("%s min_duration", r.model)
		}
	}
	// Every model named in the embedded file is in the table.
	known := map[string]bool{"*": true}
	for _, r := range rows {
		known[r.model] = true
	}
	for _, e := range Builtin().Entries() {
		if m, _, _, _ := splitKey(e.Key); !known[m] {
			t.Errorf("mlperf.conf key %s: model not in the reference table", e.Key)
		}
	}
}

func TestUnused(t *testing.T) {
	c := mustParse(t, `
m.Server.min_query_count = 1
*.Server.min_query_count = 2
*.*.qsl_rng_seed = 3
*.Server.target_duration = 0
other.Server.max_query_count = 4
m.Offline.max_query_count = 5
*.Offline.target_qps = 6
m.*.mode = 2
`)
	got := c.Unused("m", loadgen.Server, UserConf)
	want := []string{"*.*.qsl_rng_seed", "*.Server.min_query_count", "*.Server.target_duration", "m.Offline.max_query_count", "other.Server.max_query_count"}
	if !slices.Equal(got, want) {
		t.Errorf("Unused = %q\nwant     %q", got, want)
	}
	got = c.Unused("m", loadgen.Server, AuditConf)
	want = []string{"*.*.qsl_rng_seed", "*.Server.target_duration", "m.*.mode", "m.Offline.max_query_count", "m.Server.min_query_count", "other.Server.max_query_count"}
	if !slices.Equal(got, want) {
		t.Errorf("Unused(audit) = %q\nwant            %q", got, want)
	}
}

// TestReadKeysMatchApply keeps readKeys (used by Unused) in step with Apply.
func TestReadKeysMatchApply(t *testing.T) {
	var text strings.Builder
	for _, k := range readKeys {
		sc := k.scenario
		if sc == "" {
			sc = "Server"
		}
		v := "3"
		if k.name == "use_token_latencies" || k.name == "infer_token_latencies" || k.name == "test05" {
			v = "1"
		}
		text.WriteString("m." + sc + "." + k.name + " = " + v + "\n")
	}
	c := mustParse(t, text.String())
	seen := map[settingKey]bool{}
	s := loadgen.DefaultSettings()
	if err := c.apply(&s, "m", loadgen.Server, BuiltinConf, nil, func(k settingKey) { seen[k] = true }); err != nil {
		t.Fatal(err)
	}
	for _, k := range readKeys {
		if !seen[k] {
			t.Errorf("readKeys has %+v but Apply does not read it", k)
		}
		delete(seen, k)
	}
	for k := range seen {
		t.Errorf("Apply reads %+v, missing from readKeys", k)
	}
	if u := c.Unused("m", loadgen.Server, BuiltinConf); len(u) != 0 {
		t.Errorf("Unused with every key set: %q", u)
	}
	// Each key changes the settings on its own.
	for _, k := range readKeys {
		sc := k.scenario
		if sc == "" {
			sc = "Server"
		}
		v := "3"
		switch k.name {
		case "use_token_latencies", "infer_token_latencies", "test05", "performance_issue_unique",
			"performance_issue_same", "sample_concatenate_permutation", "coalesce_queries", "print_timestamps":
			v = "1"
		}
		s := loadgen.DefaultSettings()
		s.UseTokenLatencies, s.InferTokenLatencies = k.name != "use_token_latencies", k.name != "infer_token_latencies"
		before := s
		if err := mustParse(t, "m."+sc+"."+k.name+" = "+v).Apply(&s, "m", loadgen.Server, BuiltinConf); err != nil {
			t.Fatal(err)
		}
		if s == before {
			t.Errorf("key %s changed nothing", k.name)
		}
	}
}

func TestFormatRoundTrip(t *testing.T) {
	c := Builtin()
	var b bytes.Buffer
	if err := c.Format(&b); err != nil {
		t.Fatal(err)
	}
	c2 := mustParse(t, b.String())
	if !sameEntries(c, c2) {
		t.Errorf("round trip changed the entries")
	}
	if first, _, _ := strings.Cut(b.String(), "\n"); first != "*.*.qsl_rng_seed = 2085463073848966840" {
		t.Errorf("first canonical line %q", first)
	}
}

func sameEntries(a, b *Config) bool {
	ea, eb := a.Entries(), b.Entries()
	if len(ea) != len(eb) {
		return false
	}
	for i := range ea {
		x, y := ea[i], eb[i]
		if x.Key != y.Key || x.Value != y.Value || x.Uint != y.Uint ||
			math.Float64bits(x.Float) != math.Float64bits(y.Float) && !(math.IsNaN(x.Float) && math.IsNaN(y.Float)) {
			return false
		}
	}
	return true
}

func TestLoadSettings(t *testing.T) {
	dir := filepath.Join("testdata", "config")
	s, warns, err := LoadSettings(LoadOptions{
		Model:           "resnet50",
		Scenario:        loadgen.Server,
		Mode:            loadgen.AccuracyOnly,
		ModeSet:         true,
		UserConfPath:    filepath.Join(dir, "user.conf"),
		AuditConfigPath: filepath.Join(dir, "audit.config"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Scenario != loadgen.Server || s.ServerTargetLatencyNs != 15_000_000 || s.PerformanceSampleCountOverride != 1024 {
		t.Errorf("mlperf.conf not applied: %+v", s)
	}
	if s.ServerTargetQPS != 2500.5 || s.OfflineExpectedQPS != 40000 || s.SingleStreamExpectedLatencyNs != 500_000 || s.MinDurationMs != 60000 {
		t.Errorf("user.conf not applied: %+v", s)
	}
	if s.QSLRNGSeed != 2085463073848966840 {
		t.Errorf("user.conf seed must be ignored: %d", s.QSLRNGSeed)
	}
	if s.Mode != loadgen.PerformanceOnly || !s.PerformanceIssueSame || s.PerformanceIssueSameIndex != 3 || s.MinQueryCount != 100 {
		t.Errorf("audit.config not applied as LoadGen does: %+v", s)
	}
	for _, w := range []string{
		"user.conf:7: key \"*.*.qsl_rng_seed\": qsl_rng_seed is read only from mlperf.conf",
		AuditConfigWarning,
		"audit.config:7: key \"resnet50.*.min_query_count\": model-specific audit.config lines are ignored",
		"audit.config:2: key \"*.*.mode\": mode AccuracyOnly chosen explicitly is overridden by PerformanceOnly",
	} {
		if !slices.ContainsFunc(warns, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("missing warning %q in %q", w, warns)
		}
	}

	// No files: defaults plus mlperf.conf; PerformanceOnly unless chosen.
	s, warns, err = LoadSettings(LoadOptions{Model: "bert", Scenario: loadgen.Offline, AuditConfigPath: filepath.Join(dir, "no-such-audit.config")})
	if err != nil || len(warns) != 0 {
		t.Fatalf("err %v warnings %q", err, warns)
	}
	if s.Mode != loadgen.PerformanceOnly || s.MinQueryCount != 10833 || s.Scenario != loadgen.Offline {
		t.Errorf("bert Offline: %+v", s)
	}

	// A replacement mlperf.conf is read as mlperf.conf: seeds and probability count.
	s, warns, err = LoadSettings(LoadOptions{Model: "m", Scenario: loadgen.Server, MLPerfConfPath: filepath.Join(dir, "mlperf-replacement.conf")})
	if err != nil {
		t.Fatal(err)
	}
	if s.QSLRNGSeed != 11 || s.SampleIndexRNGSeed != 22 || s.ScheduleRNGSeed != 33 || s.AccuracyLogProbability != 50*0.01 || s.ServerTargetLatencyNs != 7_000_000 || s.MinDurationMs != 10_000 {
		t.Errorf("replacement mlperf.conf: %+v", s)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "replaces the built-in mlperf.conf") {
		t.Errorf("warnings %q", warns)
	}

	// A copy of the built-in file is no cause for a warning.
	cp := filepath.Join(t.TempDir(), "mlperf.conf")
	if err := os.WriteFile(cp, builtinConfText, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, warns, err = LoadSettings(LoadOptions{Model: "m", Scenario: loadgen.Server, MLPerfConfPath: cp}); err != nil || len(warns) != 0 {
		t.Errorf("identical mlperf.conf: err %v warnings %q", err, warns)
	}
}

func TestLoadSettingsErrors(t *testing.T) {
	dir := filepath.Join("testdata", "config")
	_, _, err := LoadSettings(LoadOptions{Model: "m", Scenario: loadgen.Server, UserConfPath: filepath.Join(dir, "bad.conf")})
	if err == nil {
		t.Fatal("bad.conf must fail")
	}
	for _, want := range []string{"bad.conf:1: key \"*.Server.target_qps\"", "bad.conf:2: key \"*.Server.min_duration\""} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, _, err := LoadSettings(LoadOptions{Scenario: loadgen.Server, UserConfPath: filepath.Join(dir, "missing.conf")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing user.conf: %v", err)
	}
	if _, _, err := LoadSettings(LoadOptions{Scenario: loadgen.Server, MLPerfConfPath: filepath.Join(dir, "missing.conf")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing mlperf.conf: %v", err)
	}
	if _, _, err := LoadSettings(LoadOptions{Scenario: loadgen.Scenario(9)}); err == nil {
		t.Errorf("bad scenario accepted")
	}
	bad := filepath.Join(t.TempDir(), "user.conf")
	if err := os.WriteFile(bad, []byte("*.*.mode = 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadSettings(LoadOptions{Scenario: loadgen.Server, UserConfPath: bad}); err == nil || !strings.Contains(err.Error(), "invalid mode 7") {
		t.Errorf("invalid mode: %v", err)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{BuiltinConf: "mlperf.conf", UserConf: "user.conf", AuditConf: "audit.config", 7: "Kind(7)"} {
		if k.String() != want {
			t.Errorf("%d: %q", int(k), k.String())
		}
	}
}

func FuzzParse(f *testing.F) {
	// More seeds are in testdata/fuzz/FuzzParse. Seeds stay small: the
	// fuzzer minimises every new input, which is slow for long ones.
	f.Add([]byte("a=b\nk = 1 2\n# c\nk # x\nm.Server.ttft_latency = 0x10\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(bytes.NewReader(data), "fuzz.conf")
		if err != nil {
			if c != nil {
				t.Fatal("Config with error")
			}
			for _, e := range unjoin(err) {
				var ce *Error
				if !errors.As(e, &ce) || ce.Line < 1 {
					t.Fatalf("error %v is not a Error with a line", e)
				}
			}
			return
		}
		for _, e := range c.Entries() {
			if !isCNumber(e.Value) || strings.ContainsFunc(e.Key+e.Value, func(r rune) bool { return r < 0x80 && cIsSpace(byte(r)) }) {
				t.Fatalf("bad entry %+v", e)
			}
		}
		var b bytes.Buffer
		if err := c.Format(&b); err != nil {
			t.Fatal(err)
		}
		c2, err := Parse(bytes.NewReader(b.Bytes()), "canonical.conf")
		if err != nil {
			t.Fatalf("canonical form does not parse: %v\n%s", err, b.Bytes())
		}
		if !sameEntries(c, c2) || len(c2.Warnings) != 0 {
			t.Fatalf("round trip differs:\n%q\n%q\nwarnings %q", entryMap(c), entryMap(c2), c2.Warnings)
		}
		var b2 bytes.Buffer
		_ = c2.Format(&b2)
		if !bytes.Equal(b.Bytes(), b2.Bytes()) {
			t.Fatalf("Format is not canonical")
		}
		for _, sc := range []loadgen.Scenario{loadgen.SingleStream, loadgen.MultiStream, loadgen.Server, loadgen.Offline} {
			for _, kind := range []Kind{BuiltinConf, UserConf, AuditConf} {
				s := loadgen.DefaultSettings()
				before := s
				if err := c.apply(&s, "m", sc, kind, func(string) {}, nil); err != nil && s != before {
					t.Fatalf("failed Apply changed settings")
				}
				_ = c.Unused("m", sc, kind)
			}
			// What CheckStrict accepts, LoadGen reads as written.
			if c.CheckStrict("m", sc, BuiltinConf) == nil {
				s := loadgen.DefaultSettings()
				var warns []string
				if err := c.apply(&s, "m", sc, BuiltinConf, func(w string) { warns = append(warns, w) }, nil); err == nil && len(warns) > 0 {
					t.Fatalf("CheckStrict accepted values that Apply warns about: %q", warns)
				}
			}
		}
	})
}

func TestLoadSources(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.conf")
	if err := os.WriteFile(user, []byte("resnet50.Server.target_qps = 250\n*.*.min_query_count = 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		opts      LoadOptions
		key       string
		wantFile  string // "" = the key has no source
		wantBuilt bool
		wantKey   string
		known     bool
	}{
		{"min_duration of resnet50 Server comes from the embedded mlperf.conf", LoadOptions{Model: "resnet50", Scenario: loadgen.Server}, "min_duration", "mlperf.conf", true, "*.Server.min_duration", true},
		{"a user.conf line wins over mlperf.conf", LoadOptions{Model: "resnet50", Scenario: loadgen.Server, UserConfPath: user}, "target_qps", user, false, "resnet50.Server.target_qps", true},
		{"a generic user.conf line is named as such", LoadOptions{Model: "resnet50", Scenario: loadgen.Offline, UserConfPath: user}, "min_query_count", user, false, "*.*.min_query_count", true},
		{"a Server-only key has no source in Offline", LoadOptions{Model: "resnet50", Scenario: loadgen.Offline, UserConfPath: user}, "ttft_latency", "", false, "", true},
		{"a mistyped model is unknown and gets the generic lines", LoadOptions{Model: "resnet-50", Scenario: loadgen.Server}, "min_duration", "mlperf.conf", true, "*.Server.min_duration", false},
	}
	for _, tc := range tests {
		l, err := Load(tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if l.ModelKnown != tc.known {
			t.Errorf("%s: ModelKnown = %v", tc.name, l.ModelKnown)
		}
		src, ok := l.Sources[tc.key]
		if tc.wantFile == "" {
			if ok {
				t.Errorf("%s: unexpected source %+v", tc.name, src)
			}
			continue
		}
		if !ok || src.File != tc.wantFile || src.Builtin != tc.wantBuilt || src.Entry.Key != tc.wantKey {
			t.Errorf("%s: source %+v (found %v)", tc.name, src, ok)
		}
	}
}

func TestModels(t *testing.T) {
	models := Builtin().Models()
	for _, want := range []string{"resnet50", "bert", "llama2-70b"} {
		if !slices.Contains(models, want) {
			t.Errorf("Models() lacks %q: %v", want, models)
		}
	}
	if slices.Contains(models, "*") {
		t.Errorf("Models() lists the wildcard")
	}
}
