package gbt_test

import (
	"io"
	"strings"
	"testing"

	"aimeter/gbt"
	"aimeter/mlperflog"
)

func TestSummaryNote(t *testing.T) {
	poisson := gbt.ModePoisson
	pass := gbt.Loss{Lost: 0, Sent: 473, LossCheck: gbt.LossCheck{Rate: 0, Threshold: 0.01, Valid: true}}
	fail := gbt.Loss{Lost: 21, Sent: 105, LossCheck: gbt.LossCheck{Rate: 0.2, Threshold: 0.01}}
	for _, tc := range []struct {
		name   string
		test   gbt.Test
		m      gbt.Metrics
		fails  []string
		want   string
		reason string
	}{
		{"peak, PASS", gbt.Test{Arrival: gbt.Arrival{Mode: gbt.ModePeak}}, gbt.Metrics{Loss: pass}, nil,
			"This run is a GB/T 45087 inference test (arrival mode 3, peak).\n" +
				"Its verdict, decided by the loss rate in gbt_result.json (GB-7.7.1-c-2, IN-79) and by running its whole duration: PASS, 0 of 473 samples lost (loss rate 0%, permissible 1%).\n" +
				"LoadGen's VALID/INVALID above is not the verdict of a GB/T test, and its recommendations are no advice for one.",
			"a loss rate within the threshold passes (IN-79), whatever LoadGen says"},
		{"Poisson, FAIL", gbt.Test{Arrival: gbt.Arrival{Mode: gbt.ModePoisson}}, gbt.Metrics{Loss: fail}, []string{"the test lost 21 of 105 samples."},
			"This run is a GB/T 45087 inference test (arrival mode 2, poisson).\n" +
				"Its verdict, decided by the loss rate in gbt_result.json (GB-7.7.1-c-2, IN-79) and by running its whole duration: FAIL, 21 of 105 samples lost (loss rate 20%, permissible 1%).\n" +
				"It fails because the test lost 21 of 105 samples.\n" +
				"LoadGen's VALID/INVALID above is not the verdict of a GB/T test, and its recommendations are no advice for one.",
			"a loss rate over the threshold fails (GB-7.7.1-c-2)"},
		{"mixed", gbt.Test{Arrival: gbt.Arrival{Mode: gbt.ModeMixed}, UnderlyingMode: &poisson},
			gbt.Metrics{Loss: pass, Foreign: &gbt.PartMetrics{Loss: fail}}, []string{"the foreign jobs lost 21 of 105 samples."},
			"This run is a GB/T 45087 inference test (arrival mode 5, mixed, over mode 2, poisson).\n" +
				"Its verdict, decided by the loss rate in gbt_result.json (GB-7.7.1-c-2, IN-79) and by running its whole duration: FAIL, 0 of 473 samples of the main jobs lost (loss rate 0%, permissible 1%).\n" +
				"The foreign jobs are reported apart and count in the verdict (IN-50): 21 of 105 samples lost (loss rate 20%).\n" +
				"It fails because the foreign jobs lost 21 of 105 samples.\n" +
				"LoadGen's VALID/INVALID above is not the verdict of a GB/T test, and its recommendations are no advice for one.",
			"a mixed test whose foreign jobs lose over the threshold fails, though its main jobs lost none (IN-50)"},
		{"continuous, ended early", gbt.Test{Arrival: gbt.Arrival{Mode: gbt.ModeContinuous}}, gbt.Metrics{Loss: pass},
			[]string{"The test ended after 150ms of its 3s duration : LoadGen ran out of generated queries."},
			"This run is a GB/T 45087 inference test (arrival mode 0, continuous).\n" +
				"Its verdict, decided by the loss rate in gbt_result.json (GB-7.7.1-c-2, IN-79) and by running its whole duration: FAIL, 0 of 473 samples lost (loss rate 0%, permissible 1%).\n" +
				"It fails because The test ended after 150ms of its 3s duration: LoadGen ran out of generated queries.\n" +
				"LoadGen's VALID/INVALID above is not the verdict of a GB/T test, and its recommendations are no advice for one.",
			"a test that did not run its duration fails though its loss is within the threshold (issue 39), and says why without the key separator"},
	} {
		got := gbt.SummaryNote(&tc.test, tc.m, tc.fails)
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q\n(%s)", tc.name, got, tc.want, tc.reason)
		}
		if strings.Contains(got, " : ") {
			t.Errorf("%s: the note holds the summary's key separator", tc.name)
		}
		if err := mlperflog.WriteSummaryNote(io.Discard, got); err != nil {
			t.Errorf("%s: mlperflog refuses the note: %v", tc.name, err)
		}
	}
}
