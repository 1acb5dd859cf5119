package mlperflog

import (
	"math"
	"testing"
)

// FormatDouble must print what a default std::ostream prints (printf "%g").
// The expected strings were checked against glibc's printf; the same rules
// were also cross-checked on 300,000 random doubles against a
// correctly-rounding %g while writing this package.
func TestFormatDouble(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
		why  string
	}{
		{92.15442, "92.1544", "6 significant digits (Offline 'Samples per second: 92.1544')"},
		{1e7, "1e+07", "exponent once it reaches the precision; two exponent digits"},
		{0.5, "0.5", "trailing zeros dropped"},
		{100, "100", "integers print without a decimal point"},
		{1234567, "1.23457e+06", "7-digit integers switch to the exponent form, rounded"},
		{0.0001234, "0.0001234", "exponent -4 still prints fixed"},
		{1e-5, "1e-05", "exponent below -4 switches to the exponent form"},
		{100000, "100000", "exponent 5 < precision 6 stays fixed"},
		{999999.5, "1e+06", "rounding to 6 digits can carry into the exponent form"},
		{16.5, "16.5", "target_qps of a real Server summary"},
		{1920, "1920", "target_qps of a real Offline summary"},
		{0, "0", "accuracy_log_probability : 0"},
		{-2.5, "-2.5", "sign kept"},
		{8.26469e-09, "8.26469e-09", "result_token_throughput's per-ns quirk"},
		{math.Inf(1), "inf", "glibc spelling"},
		{math.Inf(-1), "-inf", "glibc spelling"},
		{math.NaN(), "nan", "glibc spelling"},
	} {
		if got := FormatDouble(tc.v); got != tc.want {
			t.Errorf("FormatDouble(%v) = %q, want %q: %s", tc.v, got, tc.want, tc.why)
		}
	}
}

func TestDoubleToString(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		prec int
		want string
		why  string
	}{
		{944.8567, 2, "944.86", "Server 'Completed samples per second    : 944.86'"},
		{16.2, 2, "16.20", "fixed keeps trailing zeros"},
		{0.99 * 100, 2, "99.00", "percentile keys result_99.00_percentile_latency_ns"},
		{0.999 * 100, 2, "99.90", "99.9 → 99.90"},
		{0.9 * 100, 1, "90.0", "'90.0th percentile latency (ns)'"},
		{0.125, 2, "0.12", "exact binary halves round to even, like printf"},
		{0.375, 2, "0.38", "exact binary halves round to even, like printf"},
		{1e20, 2, "100000000000000000000.00", "fixed never switches to the exponent form"},
		{math.Inf(1), 2, "inf", "glibc spelling"},
	} {
		if got := DoubleToString(tc.v, tc.prec); got != tc.want {
			t.Errorf("DoubleToString(%v, %d) = %q, want %q: %s", tc.v, tc.prec, got, tc.want, tc.why)
		}
	}
}

func TestAppendTimeMs(t *testing.T) {
	for _, tc := range []struct {
		ns   int64
		want string
	}{
		{600412331207, "600412.331207"},
		{0, "0.000000"},
		{5, "0.000005"},
		{1_000_000, "1.000000"},
		{-3, "0.000000"},
	} {
		if got := string(appendTimeMs(nil, tc.ns)); got != tc.want {
			t.Errorf("appendTimeMs(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}

func TestAppendMicros(t *testing.T) {
	for _, tc := range []struct {
		ns   int64
		want string
	}{
		{0, "0.000"},
		{1, "0.001"},
		{1234567, "1234.567"},
		{-1500, "-1.500"},
		{1755694245123456789, "1755694245123456.789"},
	} {
		if got := string(appendMicros(nil, tc.ns)); got != tc.want {
			t.Errorf("appendMicros(%d) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}
