package cli

import (
	"github.com/spf13/cobra"

	"aimeter/bundle"
	"aimeter/derived/metrics"
)

// addSLOFlag adds --slo to a command of one run (run, replay, sessions;
// aimeter sweep has its own, for every point).
func addSLOFlag(cmd *cobra.Command, slo *string) {
	cmd.Flags().StringVar(slo, "slo", "", "per-request SLO that result.json and the report measure goodput against: ttft=DURATION,tpot=DURATION,e2e=DURATION, any subset (default: the run's ttft_latency and tpot_latency, if set)")
}

// parseRunSLO reads --slo; "" is none (nil).
func parseRunSLO(text string) (*bundle.SLO, error) {
	if text == "" {
		return nil, nil
	}
	s, err := metrics.ParseSLO(text)
	if err != nil {
		return nil, usageError("--slo: %v", err)
	}
	return &bundle.SLO{TTFTNs: int64(s.TTFT), TPOTNs: int64(s.TPOT), E2ENs: int64(s.E2E)}, nil
}
