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
		Long: `Check every run folder under DIR (a folder holding mlperf_log_summary.txt
or an aimeter bundle's manifest.json) and every audit verification
(TESTnn/verify_*.txt): logs present and parseable, bundle files matching
their manifest digests, the run's verdict, effective seeds equal to the
requested ones and to MLPerf's official ones, the accuracy log parseable,
with every index inside the data set (and small in a performance run),
equal-issue mode where mlperf.conf asks for it (a bundle that names its
--model), audit tests passed, every audit's evidence present, and the audit
tests MLPerf's compliance table requires of each model present (warnings;
errors with --require-audits).

The verdict of an aimeter bundle is the one aimeter run decided and exited
with (an error per reason when it is not VALID or PASS): a GB/T test's, say,
ignores LoadGen's Server latency bound. MLPerf logs without a bundle must be
VALID with minimum duration, query count and early stopping met, and no error
in the detail log.

Every audit folder (audit.config, audit/, as aimeter audit writes it) and
every TESTnn folder must hold the evidence its test's verification needs,
each missing file an error: the verification files, and for aimeter's
audits audit.config, the runs the verification read (bundles) with their
logs, and the copies of the audit run's logs under TESTnn/. An MLPerf
submission's TESTnn folder (LoadGen's logs) needs its verification files.
Per test:

` + compliance.EvidenceTable() + `
One line per finding, "SEVERITY PATH: message (check)"; a last line counts
the runs and findings. Exit codes: 0 no error (warnings allowed), 3 any
error, 2 DIR missing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := compliance.Check(args[0], compliance.CheckOptions{MaxAccuracyLogBytes: maxAcc, RequireAudits: requireAudits})
			if err != nil {
				return usageError("%v", err)
			}
			errs, warns := 0, 0
			for _, f := range rep.Findings {
				fmt.Fprintln(st.Stdout, f)
				if f.Severity == compliance.SeverityError {
					errs++
				} else {
					warns++
				}
			}
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
