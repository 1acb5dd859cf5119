package console

import (
	"strings"
	"testing"

	"aimeter/derived"
)

func TestWriteSteady(t *testing.T) {
	st := &derived.SteadyFigures{
		Whole: derived.WindowMetrics{SpanNs: 2_100_000_000, OutputTokensPerSec: 952.38},
		Windows: []derived.WindowFigures{
			{Label: derived.SuperPassLabel, Reason: "no steady window (the run issued 8 samples)"},
			{Label: derived.InFlightLabel, Found: true, StartNs: 80e6, EndNs: 2020e6,
				Metrics: &derived.WindowMetrics{Completed: 192, OutputTokensPerSec: 1937 / 1.94}, Work: &derived.WindowWork{Requests: 193.7, OutputTokens: 1937}},
		},
	}
	jpt := 776.0 / 1937
	phases := []derived.PhaseEnergy{{Name: derived.PhaseSteadyInFlight, WorkEnergy: derived.WorkEnergy{JPerToken: &jpt}}}
	checkGolden(t, []golden{
		{"a window not found says why; one found gives its extent, rate and energy per token", write(func(w *strings.Builder) { writeSteady(w, st, phases) }),
			"Steady state (docs/steady-state.md): whole pass 952.4 output tokens/s over 2.100 s\n" +
				"  Super-pass window (MLPerf Endpoints): not found: no steady window (the run issued 8 samples)\n" +
				"  In-flight window (SGLang, ≥ 80 % of peak): 0.080 s to 2.020 s (192 requests sent in it): 998.5 output tokens/s (1937.0 tokens in it), 0.4006 J per output token\n"},
		{"without power, no energy", write(func(w *strings.Builder) { writeSteady(w, st, nil) }),
			"Steady state (docs/steady-state.md): whole pass 952.4 output tokens/s over 2.100 s\n" +
				"  Super-pass window (MLPerf Endpoints): not found: no steady window (the run issued 8 samples)\n" +
				"  In-flight window (SGLang, ≥ 80 % of peak): 0.080 s to 2.020 s (192 requests sent in it): 998.5 output tokens/s (1937.0 tokens in it)\n"},
	})
}
