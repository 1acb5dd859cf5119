package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"aimeter/benchmark"
	"aimeter/console"
	"aimeter/loadgen"
	"aimeter/sweep"
)

// rateSearchPlanFromFlags turns the flags of `aimeter sweep --max-rate`
// into a goodput search over request rate: every probe a Server run of the
// run flags at its target_qps.
func rateSearchPlanFromFlags(cmd *cobra.Command, st *State, f *runFlags, g *gbtFlags, s *sweepFlags) (*benchmark.RateSearchPlan, error) {
	changed := cmd.Flags().Changed
	for _, name := range []string{"concurrency", "arrival-mode", "mode", "from", "json", "points", "min-concurrency", "max-concurrency", "point-count", "offline"} {
		if changed(name) {
			return nil, usageError("--%s does not apply to a search over request rate (--max-rate): each probe is a Server run at its own target_qps", name)
		}
	}
	if changed("scenario") && f.scenario != loadgen.Server.String() {
		return nil, usageError("--scenario %s: a rate search's probes run the Server scenario; drop --scenario", f.scenario)
	}
	if s.slo.IsZero() || !changed("goodput-target") {
		return nil, usageError("--max-rate searches the highest rate meeting a goodput target: it needs --slo and --goodput-target")
	}
	if !changed("output-dir") {
		f.plan.OutputDir = "aimeter-rate-search"
	}
	p, err := planFromFlags(cmd, st, f, g)
	if err != nil {
		return nil, err
	}
	p.Settings.Scenario = loadgen.Server.String()
	return &benchmark.RateSearchPlan{Base: *p, Dir: f.plan.OutputDir, SLO: s.slo,
		Search: sweep.RateSearchOptions{Start: s.minRate, Max: s.maxRate, Target: s.target, Decimals: s.rateDec, Resolution: f.plan.FindPeakResolution}}, nil
}

// runRateSearch runs the search and prints its probes and outcome.
func runRateSearch(parent context.Context, st *State, rp *benchmark.RateSearchPlan, quiet bool) error {
	ctx, stop := interruptible(parent, st)
	defer stop()
	watchStudy(st, &rp.Base, quiet)
	rp.Log = st.Stderr
	sum, err := benchmark.RunRateSearch(ctx, *rp)
	if sum == nil {
		return notRunCode(ctx, err)
	}
	console.WriteRateSearch(st.Stdout, sum, rp.Dir)
	if err := studyEnded(ctx, err); err != nil {
		return err
	}
	return rateSearchCode(sum)
}

// rateSearchCode is the exit status of a finished rate search: ExitInvalid
// when even the starting rate missed the goodput target.
func rateSearchCode(sum *benchmark.RateSearchSummary) error {
	if err := sum.Shortfall(); err != nil {
		return withCode(ExitInvalid, err)
	}
	return nil
}

// regenerateRateSearch is `aimeter report` over a rate search directory:
// its page is written again from rate-search.json, and the probes printed.
func regenerateRateSearch(st *State, dir, outDir string, ignoreDigests bool) error {
	switch {
	case ignoreDigests:
		return usageError("--ignore-digests does not apply to a rate search: its page is written from %s, not from a bundle", benchmark.RateSearchFile)
	case outDir != "":
		return usageError("--output-dir with a rate search: its page is regenerated in the search directory itself")
	}
	sum, err := benchmark.WriteRateSearchPage(dir)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	fmt.Fprintf(st.Stderr, "regenerated %s in %s\n", benchmark.RateSearchPageFile, dir)
	console.WriteRateSearch(st.Stdout, sum, dir)
	return rateSearchCode(sum)
}
