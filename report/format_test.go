package report

import (
	"math"
	"testing"
)

func TestFmtSig(t *testing.T) {
	tests := []struct {
		reason string
		v      float64
		digits int
		want   string
	}{
		{"the accuracy of the issue: a float64's expansion is cut", 86.57000000000001, 4, "86.57"},
		{"an accuracy target keeps the digits it has", 75.6954, 6, "75.6954"},
		{"trailing zeros are dropped", 2.5, 4, "2.5"},
		{"a whole number has no decimal point", 2000, 4, "2,000"},
		{"the integer part is never rounded away; thousands are grouped", 97862.09565041763, 4, "97,862"},
		{"seven digits show a find-peak probe's first decimal", 97862.09565041763, 7, "97,862.1"},
		{"rounding up carries into a new digit", 999.96, 4, "1,000"},
		{"a small fraction keeps its significant digits", 0.0123456, 4, "0.01235"},
		{"under 0.001, e-notation rather than a run of zeros", 0.0000123456, 3, "1.23e-05"},
		{"zero", 0, 4, "0"},
		{"a negative value keeps its sign and grouping", -12345.678, 4, "-12,346"},
		{"a tiny negative value keeps its sign in e-notation", -0.0000456, 2, "-4.6e-05"},
		{"millions are grouped twice", 1234567.4, 4, "1,234,567"},
		{"NaN is not a number to show", math.NaN(), 4, "n/a"},
		{"neither is an infinity", math.Inf(1), 4, "n/a"},
	}
	for _, tt := range tests {
		if got := fmtSig(tt.v, tt.digits); got != tt.want {
			t.Errorf("%s: fmtSig(%v, %d) = %q, want %q", tt.reason, tt.v, tt.digits, got, tt.want)
		}
	}
}

func TestFmtCount(t *testing.T) {
	tests := []struct {
		reason string
		n      uint64
		want   string
	}{
		{"zero", 0, "0"},
		{"three digits need no separator", 999, "999"},
		{"four digits get one", 1000, "1,000"},
		{"a partial first group", 12345678, "12,345,678"},
		{"the largest count", math.MaxUint64, "18,446,744,073,709,551,615"},
	}
	for _, tt := range tests {
		if got := fmtCount(tt.n); got != tt.want {
			t.Errorf("%s: fmtCount(%d) = %q, want %q", tt.reason, tt.n, got, tt.want)
		}
	}
}

func TestFmtDur(t *testing.T) {
	tests := []struct {
		reason string
		ns     int64
		want   string
	}{
		{"under a microsecond, whole nanoseconds", 850, "850 ns"},
		{"microseconds with four digits", 12_345, "12.35 µs"},
		{"milliseconds keep trailing zeros so columns line up", 3_000_000, "3.000 ms"},
		{"a 10 ms bound", 10_000_000, "10.00 ms"},
		{"hundreds of milliseconds", 664_337_290, "664.3 ms"},
		{"seconds", 1_250_000_000, "1.250 s"},
		{"a ten-minute min_duration", 600_000_000_000, "600.0 s"},
		{"past 1,000 s, whole grouped seconds", 86_400_000_000_000, "86,400 s"},
		{"a negative time keeps its sign", -2_500_000, "-2.500 ms"},
	}
	for _, tt := range tests {
		if got := fmtDur(tt.ns); got != tt.want {
			t.Errorf("%s: fmtDur(%d) = %q, want %q", tt.reason, tt.ns, got, tt.want)
		}
	}
}

func TestFmtRate(t *testing.T) {
	tests := []struct {
		reason string
		v      float64
		unit   string
		want   string
	}{
		{"the target QPS of the issue", 97862.09565041763, "queries/s", "97,862 queries/s"},
		{"a rate under 1,000 keeps four digits", 499.87, "samples/s", "499.9 samples/s"},
		{"a slow rate", 0.5, "samples/s", "0.5 samples/s"},
		{"a rate that could not be computed", math.NaN(), "samples/s", "n/a"},
	}
	for _, tt := range tests {
		if got := fmtRate(tt.v, tt.unit); got != tt.want {
			t.Errorf("%s: fmtRate(%v) = %q, want %q", tt.reason, tt.v, got, tt.want)
		}
	}
}

func TestFmtBytes(t *testing.T) {
	tests := []struct {
		reason string
		n      uint64
		want   string
	}{
		{"under a KiB, whole bytes", 512, "512 B"},
		{"a fraction of a KiB", 1536, "1.5 KiB"},
		{"the 182 MB a run wrote", 182_000_000, "174 MiB"},
		{"a machine's memory", 64 << 30, "64 GiB"},
		{"three digits, rounded", 16_700_000_000, "15.6 GiB"},
		{"rounding that reaches the next unit moves to it", 1<<30 - 1, "1 GiB"},
		{"terabytes", 3 << 40, "3 TiB"},
	}
	for _, tt := range tests {
		if got := fmtBytes(tt.n); got != tt.want {
			t.Errorf("%s: fmtBytes(%d) = %q, want %q", tt.reason, tt.n, got, tt.want)
		}
	}
}

func TestFmtPct(t *testing.T) {
	tests := []struct {
		reason string
		p      float64
		want   string
	}{
		{"a whole percentile", 0.99, "p99"},
		{"a tenth", 0.999, "p99.9"},
		{"the SingleStream target", 0.9, "p90"},
		{"the median", 0.5, "p50"},
	}
	for _, tt := range tests {
		if got := fmtPct(tt.p); got != tt.want {
			t.Errorf("%s: fmtPct(%v) = %q, want %q", tt.reason, tt.p, got, tt.want)
		}
	}
}

func TestFmtAccuracy(t *testing.T) {
	tests := []struct {
		reason          string
		metric          string
		v               float64
		wantName, wantV string
	}{
		{"a percentage metric moves its unit to the value", "top-1 accuracy (%)", 86.57000000000001, "top-1 accuracy", "86.57 %"},
		{"a 99 % target keeps its digits", "top-1 accuracy (%)", 75.6954, "top-1 accuracy", "75.6954 %"},
		{"a metric without a unit stays as it is", "mAP", 0.3712, "mAP", "0.3712"},
		{"six digits at most", "mAP", 0.37123456789, "mAP", "0.371235"},
	}
	for _, tt := range tests {
		name, v := fmtAccuracy(tt.metric, tt.v)
		if name != tt.wantName || v != tt.wantV {
			t.Errorf("%s: fmtAccuracy(%q, %v) = %q, %q, want %q, %q", tt.reason, tt.metric, tt.v, name, v, tt.wantName, tt.wantV)
		}
	}
}

func TestFmtSetting(t *testing.T) {
	tests := []struct {
		reason string
		v      float64
		want   string
	}{
		{"the target_qps of the issue, as a config file would read it", 97862.09565041763, "97862.1"},
		{"a round value", 2000, "2000"},
		{"a percentile", 0.99, "0.99"},
		{"a probability", 0.1, "0.1"},
		{"not a number", math.NaN(), "n/a"},
	}
	for _, tt := range tests {
		if got := fmtSetting(tt.v); got != tt.want {
			t.Errorf("%s: fmtSetting(%v) = %q, want %q", tt.reason, tt.v, got, tt.want)
		}
	}
}

func TestFmtValue(t *testing.T) {
	tests := []struct {
		reason string
		v      any
		want   string
	}{
		{"a float from the detail log", 0.30000000000000004, "0.3"},
		{"an integer as logged", int64(270336), "270336"},
		{"a string as logged", "Reduce target QPS", "Reduce target QPS"},
		{"a bool as logged", true, "true"},
	}
	for _, tt := range tests {
		if got := fmtValue(tt.v); got != tt.want {
			t.Errorf("%s: fmtValue(%v) = %q, want %q", tt.reason, tt.v, got, tt.want)
		}
	}
}
