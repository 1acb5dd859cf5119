package mlperfconf

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/loadgen"
)

// TestCheckStrict covers the --set reading: integer settings refuse what
// LoadGen's strtoull would misread, floating-point settings refuse
// non-finite values, and ordinary values pass.
func TestCheckStrict(t *testing.T) {
	for _, tc := range []struct {
		line   string
		sc     loadgen.Scenario
		want   string // substring of the error; "" for no error
		reason string
	}{
		{"min_duration = 1000", loadgen.Server, "", "a plain decimal integer is fine"},
		{"min_duration = 0", loadgen.Server, "", "zero is a plain integer, not an octal one"},
		{"schedule_rng_seed = 0x10000002a", loadgen.Server, "", "hex reads as written, and only mlperf.conf-kind configs read seeds"},
		{"min_duration = 18446744073709551615", loadgen.Server, "", "2^64-1 is the largest uint64 and fits"},
		{"min_duration = -5", loadgen.Server, "min_duration = -5 is negative", "strtoull wraps -5 to 2^64-5"},
		{"min_duration = -0", loadgen.Server, "negative", "a sign on an integer setting is refused even when harmless"},
		{"min_duration = +5", loadgen.Server, "has a sign", "a plus sign is not a plain number"},
		{"min_duration = 1e3", loadgen.Server, "min_duration = 1e3 is not a whole number", "strtoull stops at 'e' and reads 1"},
		{"min_duration = 1.5", loadgen.Server, "not a whole number", "strtoull drops the fraction"},
		{"min_duration = 1.0", loadgen.Server, "not a whole number", "a fraction is refused even when it is zero"},
		{"min_duration = inf", loadgen.Server, "not a whole number", "strtoull reads nothing of inf"},
		{"min_duration = 18446744073709551616", loadgen.Server, "out of range", "2^64 saturates"},
		{"min_query_count = 99999999999999999999", loadgen.Server, "min_query_count = 99999999999999999999 is out of range", "a 20-digit number beyond 2^64-1"},
		{"min_duration = 010", loadgen.Server, "leading 0", "010 is octal 8 in LoadGen"},
		{"target_latency = 18446744073709", loadgen.Server, "", "the largest Server target_latency in ms whose ns fit in 64 bits"},
		{"target_latency = 18446744073710", loadgen.Server, "target_latency = 18446744073710 is out of range", "× 10^6 would wrap"},
		{"tpot_latency = 18446744073710", loadgen.Server, "out of range", "tpot_latency is ms → ns too"},
		{"max_async_queries = 2147483647", loadgen.Server, "", "the largest 32-bit int"},
		{"max_async_queries = 2147483648", loadgen.Server, "out of range", "LoadGen's int would turn it negative"},
		{"target_latency = 0.001", loadgen.SingleStream, "", "SingleStream target_latency is a floating-point setting"},
		{"target_latency = 1e-3", loadgen.MultiStream, "", "an exponent is fine on a floating-point setting"},
		{"target_qps = 1e12", loadgen.Server, "", "a large finite rate is not this check's concern"},
		{"target_qps = inf", loadgen.Offline, "target_qps = inf is not a finite number", "infinity is no rate"},
		{"target_qps = nan", loadgen.Server, "not a finite number", "NaN is no rate"},
		{"target_qps = 1e999", loadgen.Server, "not a finite number", "strtod overflows to +Inf"},
		{"target_qps = 1e-999", loadgen.Server, "below the range of a double", "strtod underflows to 0"},
		{"target_qps = 0", loadgen.Server, "", "a zero rate is Validate's concern, and reads as written"},
		{"target_latency_percentile = 99", loadgen.Server, "", "percentile is floating-point"},
		{"accuracy_log_probability = -inf", loadgen.Server, "not a finite number", "mlperf.conf-only float keys are checked too"},
		{"target_latency = -1", loadgen.Offline, "", "a key the scenario never reads is left to Unused"},
	} {
		t.Run(shorten(tc.line), func(t *testing.T) {
			name, value, _ := strings.Cut(tc.line, " = ")
			c := mustParse(t, "*."+tc.sc.String()+"."+name+" = "+value+"\n")
			err := c.CheckStrict("*", tc.sc, BuiltinConf)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s: unexpected error %v", tc.reason, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s: error %v, want one containing %q", tc.reason, err, tc.want)
			case err != nil:
				var ce *Error
				if !errors.As(err, &ce) || ce.Line != 1 || !strings.HasSuffix(ce.Key, "."+name) {
					t.Errorf("%s: error %#v does not name line 1 and key %s", tc.reason, err, name)
				}
			}
		})
	}
}

// TestCheckStrictReportsEveryKey checks that all refused keys are named,
// not only the first.
func TestCheckStrictReportsEveryKey(t *testing.T) {
	c := mustParse(t, "*.Server.min_duration = -5\n*.Server.min_query_count = 1e3\n*.Server.max_duration = 7\n")
	err := c.CheckStrict("*", loadgen.Server, BuiltinConf)
	if got := len(unjoin(err)); got != 2 {
		t.Fatalf("want 2 errors, got %d: %v", got, err)
	}
	for _, k := range []string{"min_duration", "min_query_count"} {
		if !strings.Contains(err.Error(), k) {
			t.Errorf("error %v does not name %s", err, k)
		}
	}
}

// TestConfigFileIntegerWarnings covers the config-file reading: LoadGen's
// strtoull value is kept exactly, and every surprising conversion is a
// warning naming the file, line and key.
func TestConfigFileIntegerWarnings(t *testing.T) {
	huge := "9" + strings.Repeat("0", 2000)
	for _, tc := range []struct {
		line   string
		read   func(loadgen.Settings) uint64
		want   uint64
		warn   string // substring of the single warning; "" for none
		reason string
	}{
		{"*.*.min_duration = 1000", minDur, 1000, "", "a plain integer reads as written"},
		{"*.*.min_duration = 1.0", minDur, 1, "", "a zero fraction changes nothing"},
		{"*.*.min_duration = 0x10", minDur, 16, "", "hex reads as written"},
		{"*.*.min_duration = -5", minDur, math.MaxUint64 - 4, "negative value -5 wraps", "strtoull negates modulo 2^64"},
		{"*.*.min_duration = 1e3", minDur, 1, `stops before "e3"`, "an exponent is cut off"},
		{"*.*.min_duration = 2.5", minDur, 2, `stops before ".5"`, "a fraction is truncated"},
		{"*.*.min_duration = 010", minDur, 8, "read as octal", "a leading 0 is octal"},
		{"*.*.min_duration = 18446744073709551616", minDur, math.MaxUint64, "saturates", "2^64 overflows"},
		{"*.*.min_duration = " + huge, minDur, math.MaxUint64, "(2001 characters)", "a huge value saturates and the warning stays short"},
		{"*.*.min_duration = -99999999999999999999", minDur, math.MaxUint64, "saturates", "a huge negative value saturates too"},
		{"*.*.min_duration = 99999999999999999999.5", minDur, math.MaxUint64, "saturates", "overflow before a fraction"},
		{"*.*.min_duration = inf", minDur, 0, `stops before "inf"`, "strtoull reads nothing of inf"},
		{"*.Server.target_latency = 18446744073710", func(s loadgen.Settings) uint64 { return s.ServerTargetLatencyNs },
			18446744073710000000 - math.MaxUint64 - 1, "wraps to", "ms × 10^6 wraps in LoadGen's uint64"},
		{"*.Server.max_async_queries = 4294967296", func(s loadgen.Settings) uint64 { return s.ServerMaxAsyncQueries },
			0, "does not fit LoadGen's int", "LoadGen's 32-bit int"},
	} {
		t.Run(shorten(tc.line), func(t *testing.T) {
			c := mustParse(t, tc.line+"\n")
			s := loadgen.DefaultSettings()
			warns, err := c.ApplyWarn(&s, "m", loadgen.Server, UserConf)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.read(s); got != tc.want {
				t.Errorf("%s: read %d, want %d", tc.reason, got, tc.want)
			}
			if tc.warn == "" {
				if len(warns) != 0 {
					t.Errorf("%s: unexpected warnings %q", tc.reason, warns)
				}
				return
			}
			if len(warns) != 1 || !strings.Contains(warns[0], tc.warn) || !strings.HasPrefix(warns[0], "t.conf:1: key ") {
				t.Errorf("%s: warnings %q, want one \"t.conf:1: key …\" containing %q", tc.reason, warns, tc.warn)
			}
			if len(warns) == 1 && len(warns[0]) > 400 {
				t.Errorf("%s: warning of %d bytes", tc.reason, len(warns[0]))
			}
		})
	}
}

func minDur(s loadgen.Settings) uint64 { return s.MinDurationMs }

// TestConfigFileFloatWarnings covers floating-point settings in a config
// file: strtod's value is kept, and a value beyond the range of a double is
// a warning.
func TestConfigFileFloatWarnings(t *testing.T) {
	for _, tc := range []struct {
		value  string
		want   float64
		warn   string
		reason string
	}{
		{"2000", 2000, "", "a plain number"},
		{"1e12", 1e12, "", "an exponent reads as written in a double"},
		{"0x1p4", 16, "", "a hex float reads as written"},
		{"0", 0, "", "a zero is read as zero"},
		{"0.000", 0, "", "a zero with a fraction is still zero"},
		{"inf", math.Inf(1), "", "infinity written out is not a surprise (Validate refuses it)"},
		{"1e999", math.Inf(1), "beyond the range of a double", "strtod overflows to +Inf"},
		{"-1e999", math.Inf(-1), "beyond the range of a double", "and to -Inf"},
		{"1e-999", 0, "below the range of a double", "strtod underflows to 0"},
		{"0x1p-99999", 0, "below the range of a double", "a hex float underflows too"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			c := mustParse(t, "*.Server.target_qps = "+tc.value+"\n")
			s := loadgen.DefaultSettings()
			warns, err := c.ApplyWarn(&s, "m", loadgen.Server, UserConf)
			if err != nil {
				t.Fatal(err)
			}
			if s.ServerTargetQPS != tc.want {
				t.Errorf("%s: read %v, want %v", tc.reason, s.ServerTargetQPS, tc.want)
			}
			switch {
			case tc.warn == "" && len(warns) != 0:
				t.Errorf("%s: unexpected warnings %q", tc.reason, warns)
			case tc.warn != "" && (len(warns) != 1 || !strings.Contains(warns[0], tc.warn)):
				t.Errorf("%s: warnings %q, want one containing %q", tc.reason, warns, tc.warn)
			}
		})
	}
}

// TestLoadWarnsAboutUserConf checks that Load passes the conversion warnings
// of a user.conf on (the CLI prints them and logs them in the detail log).
func TestLoadWarnsAboutUserConf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "user.conf")
	if err := os.WriteFile(path, []byte("*.Server.min_duration = -5\n*.Server.min_query_count = 99999999999999999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Load(LoadOptions{Scenario: loadgen.Server, UserConfPath: path})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(l.Warnings, "\n")
	for _, w := range []string{`"*.Server.min_duration": negative value -5 wraps`, `"*.Server.min_query_count": value 99999999999999999999 is beyond 2^64-1`} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings %q lack %q", l.Warnings, w)
		}
	}
}

// TestByteOrderMark checks that a UTF-8 byte-order mark at the start of a
// file is skipped with a warning instead of swallowing line 1, and only
// there.
func TestByteOrderMark(t *testing.T) {
	c := mustParse(t, "\xEF\xBB\xBF*.Server.min_duration = 5\n*.Server.max_duration = 6\n")
	if e, ok := c.Get("*.Server.min_duration"); !ok || e.Uint != 5 || e.Line != 1 {
		t.Errorf("line 1 after a BOM: %+v, %v; entries %q", e, ok, entryMap(c))
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "byte-order mark") || !strings.HasPrefix(c.Warnings[0], "t.conf:1: ") {
		t.Errorf("warnings %q", c.Warnings)
	}
	// A BOM later in the file is an ordinary byte of a key, as in LoadGen.
	c = mustParse(t, "a.b.c = 1\n\xEF\xBB\xBFx.y.z = 2\n")
	if _, ok := c.Get("\xEF\xBB\xBFx.y.z"); !ok || len(c.Warnings) != 0 {
		t.Errorf("BOM on line 2: entries %q warnings %q", entryMap(c), c.Warnings)
	}
	// Format keeps a key that starts with a BOM off the first bytes, so the
	// canonical form reads back to the same keys.
	c = mustParse(t, "\xEF\xBB\xBF\xEF\xBB\xBFk.S.n = 1\n")
	var b bytes.Buffer
	if err := c.Format(&b); err != nil {
		t.Fatal(err)
	}
	c2 := mustParse(t, b.String())
	if !sameEntries(c, c2) {
		t.Errorf("round trip of a BOM key: %q → %q", entryMap(c), entryMap(c2))
	}
}
