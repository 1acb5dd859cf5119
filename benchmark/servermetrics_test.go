package benchmark

import "testing"

func TestDefaultMetricsURL(t *testing.T) {
	for _, tc := range []struct {
		why, base, want string
		ok              bool
	}{
		{"a bare server URL", "http://127.0.0.1:8000", "http://127.0.0.1:8000/metrics", true},
		{"an OpenAI base with /v1: metrics are at the root", "http://gpu1:8000/v1", "http://gpu1:8000/metrics", true},
		{"a query and fragment are dropped", "https://h/v1?x=1#y", "https://h/metrics", true},
		{"a gRPC address has no default", "grpc://h:8001", "", false},
		{"host:port without a scheme has none either", "h:8001", "", false},
		{"an empty URL", "", "", false},
	} {
		got, ok := defaultMetricsURL(tc.base)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: defaultMetricsURL(%q) = %q, %v; want %q, %v", tc.why, tc.base, got, ok, tc.want, tc.ok)
		}
	}
}
