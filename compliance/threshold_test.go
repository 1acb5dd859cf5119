package compliance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestThresholdOnInvalidRun: a performance verification that fails on an
// INVALID run, before comparing, still says the tolerance the comparison
// has (10 %, 20 % for a short SingleStream latency), for a caller that
// explains the failure (aimeter audit's hint); both TEST04's summary
// comparison and TEST01's detail-log one.
func TestThresholdOnInvalidRun(t *testing.T) {
	for _, tc := range []struct {
		ref, test string
		want      float64
	}{
		{summary("Offline", "INVALID", "1000", "", 0), summary("Offline", "VALID", "1000", "", 0), 0.10},
		{summary("Offline", "VALID", "1000", "", 0), summary("Offline", "INVALID", "5000", "", 0), 0.10},
		{summary("SingleStream", "INVALID", "10000", "", 0), summary("SingleStream", "VALID", "10000", "", 0), 0.20},
	} {
		v, err := VerifyPerformance(strings.NewReader(tc.ref), strings.NewReader(tc.test))
		if err != nil || v.Pass || v.Threshold != tc.want {
			t.Errorf("pass %v, threshold %v, %v; want a failure with threshold %v:\n%s", v.Pass, v.Threshold, err, tc.want, v.Output)
		}
	}
	dir := t.TempDir()
	detail := func(name, validity string) string {
		p := filepath.Join(dir, name)
		text := `:::MLLOG {"key": "effective_scenario", "value": "Offline", "metadata": {"is_error": false}}
:::MLLOG {"key": "result_samples_per_second", "value": 1000.5, "metadata": {"is_error": false}}
:::MLLOG {"key": "result_validity", "value": "` + validity + `", "metadata": {"is_error": false}}
`
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range [][2]string{{"INVALID", "VALID"}, {"VALID", "INVALID"}} {
		v, err := VerifyDetailPerformanceFiles(detail("ref-"+tc[0], tc[0]), detail("test-"+tc[1], tc[1]))
		if err != nil || v.Pass || v.Threshold != 0.10 || v.Scenario != "Offline" {
			t.Errorf("reference %s, test %s: pass %v, threshold %v, scenario %q, %v:\n%s", tc[0], tc[1], v.Pass, v.Threshold, v.Scenario, err, v.Output)
		}
	}
}
