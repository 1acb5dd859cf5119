package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"aimeter/benchmark"
	"aimeter/compliance"
)

func newAuditCommand(st *State) *cobra.Command {
	var f runFlags
	var g gbtFlags
	cmd := &cobra.Command{
		Use:   "audit TEST [run flags]",
		Short: "Run an MLPerf audit test (TEST01, TEST04) against any SUT and verify it as MLPerf's scripts do",
		Long: `Run the runs an MLPerf audit test needs, with the run flags of aimeter run
(the same SUT: in-process, --sut openai, kserve or dispatch), and verify them
as MLPerf's compliance/TESTnn/run_verification.py does, writing the same
verification files. Every run is an ordinary run bundle (aimeter report
regenerates it). Under --output-dir:

  accuracy/                   TEST01: the accuracy run
  performance/run_1/          the reference performance run
  audit/                      the run under the test's audit.config
  audit.config                the audit settings that run used
  TESTnn/verify_*.txt, TESTnn/performance/run_1/ (TEST01: TESTnn/accuracy/)
                              the verification, as run_verification.py writes them

TEST01 checks that the SUT answers in performance mode as it does in
accuracy mode: the audit run logs the responses of about 4,096 samples,
whose first bytes must equal the accuracy run's, and its score must stay
within 10 % of the reference's (20 % for short latencies).
TEST04 detects a SUT that caches results: the audit run issues the same
sample every time, and its score must stay below the reference's plus 10 %
(20 % for short SingleStream and MultiStream latencies).

Exit codes: 0 TEST PASS, 3 TEST FAIL, 2 bad flags (nothing ran), 1 a run
failed to start or to write its bundle, 4 interrupted. See docs/audit.md.`,
		Example: `  aimeter audit TEST01 --scenario Offline --sut reference
  aimeter audit TEST04 --scenario SingleStream --sut reference
  aimeter audit TEST04 --scenario Offline --sut openai --url http://localhost:8000 --output-dir audit-vllm`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			test, err := compliance.ParseTest(args[0])
			if err != nil {
				return usageError("%v", err)
			}
			flags := cmd.Flags()
			for _, name := range []string{"from", "audit-config", "mode", "json", "arrival-mode"} {
				if flags.Changed(name) {
					return usageError("--%s: an audit runs its own runs with its own audit.config, in performance mode, as MLPerf tests; drop it", name)
				}
			}
			p, err := planFromFlags(cmd, st, &f, &g)
			if err != nil {
				return err
			}
			p.Settings.AuditConfig = "" // the audit brings its own
			setGoMemoryLimit(f.goMemLimit)
			return runAudit(cmd, st, test, p, f.quiet)
		},
	}
	addRunFlags(cmd, &f, &g)
	out := cmd.Flags().Lookup("output-dir")
	out.DefValue = "aimeter-audit"
	_ = out.Value.Set(out.DefValue)
	return cmd
}

func runAudit(cmd *cobra.Command, st *State, test compliance.Test, p *benchmark.Plan, quiet bool) error {
	ctx, stop := interruptible(cmd.Context(), st)
	defer stop()
	p.Notify = func(n benchmark.Notice) { printNotice(st, n, quiet) }
	if err := benchmark.PrepareOutputDir(p.OutputDir); err != nil {
		return withCode(ExitUsage, err)
	}
	res, err := compliance.Run(ctx, test, *p)
	if res != nil {
		for _, run := range []struct {
			name string
			out  *benchmark.Outcome
		}{{"accuracy run", res.AccuracyRun}, {"reference run", res.Reference}, {"audit run", res.Audit}} {
			if run.out != nil {
				fmt.Fprintf(st.Stdout, "%s %s: %s (%s)\n", test, run.name, run.out.Verdict.Word(), run.out.Dir)
			}
		}
	}
	if err != nil {
		if benchmark.IsUsage(err) {
			return withCode(ExitUsage, err)
		}
		if ctx.Err() != nil {
			return withCode(ExitInterrupted, err)
		}
		return withCode(ExitFailure, err)
	}
	if res.Accuracy != nil {
		fmt.Fprint(st.Stdout, res.Accuracy.Output)
	}
	fmt.Fprint(st.Stdout, res.Verification.Output)
	fmt.Fprintf(st.Stdout, "%s verification written to %s\n", test, filepath.Join(res.Dir, string(test)))
	if !res.Pass {
		return withCode(ExitInvalid, fmt.Errorf("%s: TEST FAIL", test))
	}
	return nil
}
