package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"aimeter/compliance"
)

func newCheckCommand(st *State) *cobra.Command {
	var maxAcc int64
	var requireAudits bool
	cmd := &cobra.Command{
		Use:   "check DIR",
		Short: "Validate a result folder: logs, validity, seeds, errors, accuracy and audit results",
		Long: helpText("check") + compliance.EvidenceTable() + `
One line per finding, "SEVERITY PATH: message (check)"; a last line counts
the runs and findings. Exit codes: 0 no error (warnings allowed), 3 any
error, 2 DIR missing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := compliance.Check(args[0], compliance.CheckOptions{MaxAccuracyLogBytes: maxAcc, RequireAudits: requireAudits})
			if err != nil {
				return usageError("%v", err)
			}
			for _, f := range rep.Findings {
				fmt.Fprintln(st.Stdout, f)
			}
			errs, warns := rep.Counts()
			fmt.Fprintf(st.Stdout, "%d runs checked: %d errors, %d warnings\n", len(rep.Runs), errs, warns)
			if !rep.OK() {
				return withCode(ExitInvalid, fmt.Errorf("%s: %d errors", args[0], errs))
			}
			return nil
		},
	}
	cmd.Flags().Int64Var(&maxAcc, "max-accuracy-log-bytes", 10<<20, "the largest mlperf_log_accuracy.json a performance run may leave")
	cmd.Flags().BoolVar(&requireAudits, "require-audits", false, "make a missing audit test that MLPerf requires of a model an error, not a warning")
	return cmd
}
