package console

import (
	"fmt"
	"io"

	"aimeter/benchmark"
	"aimeter/derived"
)

// WriteSteady writes the steady-state windows of a streaming LLM run
// (result.json's steady_state): each window found, with its extent, output
// tokens per second and, with power, joules per output token over it; or
// why none was. Nothing for a run without them.
func WriteSteady(w io.Writer, out *benchmark.Outcome) {
	if out.Derived == nil {
		return
	}
	r, err := out.Derived.Result()
	if err != nil || r.Steady == nil {
		return
	}
	var phases []derived.PhaseEnergy
	if r.Power != nil {
		phases = r.Power.Phases
	}
	writeSteady(w, r.Steady, phases)
}

// writeSteady is WriteSteady over result.json's figures: st, and the power
// phases (nil without power) that give a window's energy per token.
func writeSteady(w io.Writer, st *derived.SteadyFigures, phases []derived.PhaseEnergy) {
	fmt.Fprintf(w, "Steady state (docs/steady-state.md): whole pass %.1f output tokens/s over %.3f s\n", st.Whole.OutputTokensPerSec, float64(st.Whole.SpanNs)/1e9)
	for _, win := range st.Windows {
		if !win.Found || win.Metrics == nil || win.Work == nil {
			fmt.Fprintf(w, "  %s: not found: %s\n", win.Label, win.Reason)
			continue
		}
		m := win.Metrics
		fmt.Fprintf(w, "  %s: %.3f s to %.3f s (%d requests sent in it): %.1f output tokens/s (%.1f tokens in it)",
			win.Label, float64(win.StartNs)/1e9, float64(win.EndNs)/1e9, m.Completed, m.OutputTokensPerSec, win.Work.OutputTokens)
		name := derived.PhaseSteadyInFlight
		if win.Label == derived.SuperPassLabel {
			name = derived.PhaseSteadySuperPass
		}
		for _, p := range phases {
			if p.Name == name && p.JPerToken != nil {
				fmt.Fprintf(w, ", %.4g J per output token", *p.JPerToken)
			}
		}
		fmt.Fprintln(w)
	}
}
