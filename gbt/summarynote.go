package gbt

import (
	"fmt"
	"strings"
)

// SummaryNote returns the note that a GB/T 45087 run appends to LoadGen's
// mlperf_log_summary.txt (mlperflog.WriteSummaryNote): the run is a GB/T
// inference test of the named arrival mode, its verdict is the loss-rate
// verdict of gbt_result.json (GB-7.7.1-c-2, IN-79), PASS or FAIL with the
// lost and sent samples, the rate and the threshold, and LoadGen's
// VALID/INVALID above it is not that verdict. For a mixed test (mode 5)
// it gives the foreign jobs' losses apart; they count in the verdict
// (Metrics.Passed, IN-50). failures are the verdict's reasons
// (verdict.Of): none is a PASS; each is a line of its own, for a test can
// also fail by not running its duration. One sentence a line; no line
// holds " : ", the summary's key separator.
func SummaryNote(t *Test, m Metrics, failures []string) string {
	mode := fmt.Sprintf("arrival mode %d, %s", int(t.Arrival.Mode), t.Arrival.Mode)
	if t.UnderlyingMode != nil {
		mode += fmt.Sprintf(", over mode %d, %s", int(*t.UnderlyingMode), *t.UnderlyingMode)
	}
	verdict := "PASS"
	if len(failures) > 0 {
		verdict = "FAIL"
	}
	whose := ""
	if m.Foreign != nil {
		whose = " of the main jobs"
	}
	lines := []string{
		fmt.Sprintf("This run is a GB/T 45087 inference test (%s).", mode),
		fmt.Sprintf("Its verdict, decided by the loss rate in %s (GB-7.7.1-c-2, IN-79) and by running its whole duration: %s, %d of %d samples%s lost (loss rate %.4g%%, permissible %.4g%%).",
			ResultFileName, verdict, m.Loss.Lost, m.Loss.Sent, whose, m.Loss.Rate*100, m.Loss.Threshold*100),
	}
	if f := m.Foreign; f != nil {
		lines = append(lines, fmt.Sprintf("The foreign jobs are reported apart and count in the verdict (IN-50): %d of %d samples lost (loss rate %.4g%%).",
			f.Loss.Lost, f.Loss.Sent, f.Loss.Rate*100))
	}
	for _, f := range failures {
		lines = append(lines, "It fails because "+strings.ReplaceAll(f, " : ", ": "))
	}
	lines = append(lines, "LoadGen's VALID/INVALID above is not the verdict of a GB/T test, and its recommendations are no advice for one.")
	return strings.Join(lines, "\n")
}
