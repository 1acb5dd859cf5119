package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"aimeter/bundle"
	"aimeter/console"
	"aimeter/derived"
	"aimeter/gbt"
)

func newECPCommand(st *State) *cobra.Command {
	var tokens bool
	cmd := &cobra.Command{
		Use:     "ecp CONFIG NAME=DIR...",
		Short:   "Compute the effective computing power of GB/T 45087 Table 18 from several runs",
		Long:    helpText("ecp"),
		Example: `  aimeter ecp examples/ecp-weights.json "poisson=runs/poisson" "fixed-period=runs/fixed-period"`,
		Args:    cobra.MinimumNArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := needFile("CONFIG", args[0]); err != nil {
				return err
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return withCode(ExitFailure, err)
			}
			cfg, err := gbt.ParseECPConfig(data)
			if err != nil {
				return withCode(ExitUsage, fmt.Errorf("%s: %w", args[0], err))
			}
			var runs []derived.ECPRun
			for _, pair := range args[1:] {
				name, dir, ok := strings.Cut(pair, "=")
				if !ok || name == "" || dir == "" {
					return usageError("%q: want NAME=DIR", pair)
				}
				if err := needFile(name+"=DIR", filepath.Join(dir, bundle.GBTTestFile)); err != nil {
					return usageError("%s: %s holds no %s: give the output directory of a GB/T run (aimeter run --arrival-mode …)", pair, dir, bundle.GBTTestFile)
				}
				run, err := derived.ReadECPRun(name, dir, pair, tokens)
				if err != nil {
					return withCode(ExitFailure, err)
				}
				runs = append(runs, run)
			}
			res, err := derived.ECP(cfg, runs)
			var basisErr *derived.ECPBasisError
			if errors.As(err, &basisErr) {
				pairs := func(basis string) string { return strings.Join(basisErr.Runs[basis], ", ") }
				return usageError("the runs' throughputs have different bases, which ECP cannot combine: on the T_DIP union (Table 18): %s; on the tester-side span: %s. Measure every scenario the same way (stage times from the SUT: in-process, or a server with --server-timing)",
					pairs(gbt.BasisTDIPUnion), pairs(gbt.BasisTesterSpan))
			}
			if err != nil {
				return withCode(ExitUsage, err)
			}
			console.WriteECPTable(st.Stdout, res)
			for _, w := range res.Warnings {
				fmt.Fprintln(st.Stderr, "warning:", w)
			}
			console.WriteECPValue(st.Stdout, res)
			return nil
		},
	}
	cmd.Flags().BoolVar(&tokens, "tokens", false, "use tokens/s instead of samples/s")
	return cmd
}
