package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"aimeter/benchmark"
	"aimeter/compliance"
)

func newAuditCommand(st *State) *cobra.Command {
	var f runFlags
	var g gbtFlags
	var o compliance.Options
	cmd := &cobra.Command{
		Use:   "audit TEST [run flags]",
		Short: "Run an MLPerf audit test (TEST01, 04, 06, 07, 09) against any SUT and verify it as MLPerf's scripts do",
		Long:  helpText("audit"),
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
			given := func(field string) bool { f, _ := flagOf("Options." + field); return f != "" && flags.Changed(f) }
			if err := compliance.CheckGiven(test, given); err != nil {
				return usageError("%s", flagText(err.Error()))
			}
			if _, err := compliance.AuditConfig(test, o); err != nil {
				return usageError("%v", err)
			}
			p, err := planFromFlags(cmd, st, &f, &g)
			if err != nil {
				return err
			}
			p.Settings.AuditConfig = "" // the audit brings its own
			p.Done = recordDone(cmd.Context(), st, f.store, f.quiet)
			f.goMemLimit.SetGoMemoryLimit()
			return runAudit(cmd, st, test, p, o, f.quiet)
		},
	}
	addRunFlags(cmd, &f, &g)
	addStoreFlags(cmd, &f.store)
	fl := cmd.Flags()
	fl.StringVar(&o.DType, "dtype", "", "how TEST01 and TEST06 read answers: byte, int16, int32, int64 or float32 (default byte for TEST01, int32 for TEST06)")
	fl.Int64Var(&o.EOSTokenID, "eos-token-id", 2, "TEST06: the end-of-sequence token id")
	fl.Uint64Var(&o.SamplingTarget, "sampling-target", 0, "TEST01, TEST06: accuracy_log_sampling_target (default 4096 for TEST01, 100 for TEST06)")
	fl.Float64Var(&o.AccuracyThreshold, "accuracy-threshold", compliance.DefaultTEST07Threshold, "TEST07: test07_accuracy_threshold, in the scorer's unit (top-1 % for the reference data set)")
	fl.Float64Var(&o.MinOutputTokens, "min-output-tokens", compliance.DefaultTEST09Min, "TEST09: the least mean output length, in tokens")
	fl.Float64Var(&o.MaxOutputTokens, "max-output-tokens", compliance.DefaultTEST09Max, "TEST09: the greatest mean output length, in tokens")
	fl.Float64Var(&o.AccuracyDelta, "accuracy-delta", 0.01, "TEST01: the largest relative score difference when answers differ")
	out := cmd.Flags().Lookup("output-dir")
	out.DefValue = "aimeter-audit"
	_ = out.Value.Set(out.DefValue)
	return cmd
}

func runAudit(cmd *cobra.Command, st *State, test compliance.Test, p *benchmark.Plan, o compliance.Options, quiet bool) error {
	ctx, stop := interruptible(cmd.Context(), st)
	defer stop()
	p.Notify = func(n benchmark.Notice) { printNotice(st, n, quiet) }
	if err := benchmark.PrepareOutputDir(p.OutputDir); err != nil {
		return withCode(ExitUsage, err)
	}
	if test == compliance.TEST01 || test == compliance.TEST04 {
		if err := sizeAudit(ctx, st, test, p); err != nil {
			if benchmark.IsUsage(err) {
				return withCode(ExitUsage, err)
			}
			if ctx.Err() != nil {
				return withCode(ExitInterrupted, err)
			}
			return withCode(ExitFailure, err)
		}
	}
	res, err := compliance.AuditWith(ctx, test, *p, o)
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
	fmt.Fprint(st.Stdout, res.Output())
	fmt.Fprintf(st.Stdout, "%s verification written to %s\n", test, filepath.Join(res.Dir, string(test)))
	if !res.Pass {
		if hint := res.Hint(); hint != "" {
			fmt.Fprintln(st.Stderr, hint)
		}
		return withCode(ExitInvalid, fmt.Errorf("%s: TEST FAIL", test))
	}
	return nil
}

// sizeAudit sizes the performance runs of a TEST01 or TEST04 audit for a
// network SUT (compliance.Size) and prints the sizing.
func sizeAudit(ctx context.Context, st *State, test compliance.Test, p *benchmark.Plan) error {
	sz, err := compliance.Size(ctx, p)
	if sz != nil {
		fmt.Fprintf(st.Stdout, "%s sizing: %s\n", test, flagText(sz.String()))
	}
	return err
}
