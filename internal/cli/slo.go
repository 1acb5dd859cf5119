package cli

import (
	"github.com/spf13/cobra"

	"aimeter/derived/metrics"
)

// addSLOFlag adds --slo to a command of one run (run, replay, sessions;
// aimeter sweep has its own, for every point).
func addSLOFlag(cmd *cobra.Command, slo *metrics.SLO) {
	cmd.Flags().Var(slo, "slo", "per-request SLO that result.json and the report measure goodput against: ttft=DURATION,tpot=DURATION,e2e=DURATION, any subset (default: the run's ttft_latency and tpot_latency, if set)")
}
