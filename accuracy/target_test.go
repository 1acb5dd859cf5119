package accuracy

import "testing"

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   float64
		ok     bool
		reason string
	}{
		{"99% of FP32 (76.46)", 0.99 * 76.46, true, "MLPerf's ResNet-50 target"},
		{" 99.9 % of fp16 ( 90.874 ) ", 0.999 * 90.874, true, "spaces and decimals"},
		{"75.69", 75.69, true, "a plain value"},
		{"101% of FP32 (1)", 0, false, "more than the reference"},
		{"99% of", 0, false, "no reference value"},
		{"NaN", 0, false, "not a number"},
	} {
		got, err := ParseTarget(tc.in)
		if (err == nil) != tc.ok || (tc.ok && !near(got.Value, tc.want)) {
			t.Errorf("%s: %q → %+v, %v", tc.reason, tc.in, got, err)
		}
	}
}
