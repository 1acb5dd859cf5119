package benchmark

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"aimeter/bundle"
	"aimeter/derived/metrics"
	"aimeter/loadgen"
	"aimeter/report"
	"aimeter/sweep"
)

// RateSearchFile is the summary of a goodput search over request rate, in
// its directory beside the probes' bundles.
const RateSearchFile = "rate-search.json"

// RateSearchSchema names the schema of RateSearchFile.
const RateSearchSchema = "aimeter-rate-search/1"

// RateSearchPageFile is the HTML page of a rate search, a function of
// RateSearchFile alone (WriteRateSearchPage writes it again).
const RateSearchPageFile = "rate-search.html"

// RateSearchPlan is a search for the highest request rate (the Server
// scenario's target_qps, on LoadGen's Poisson schedule) whose goodput
// fraction reaches a target: the rate counterpart of SweepPlan.Search,
// which searches over concurrency. Every probe is a Server run of its own
// bundle in Dir.
type RateSearchPlan struct {
	// Base is the run of every probe: its SUT, settings (the minimum
	// duration above all) and bounds. Its scenario must be Server or
	// unset, it must not be a fixed-concurrency run or a GB/T test; its
	// target_qps, OutputDir, Name and SLO are set for each probe.
	Base Plan
	// Dir is the search directory. Required.
	Dir string
	// SLO is the per-request objective of the goodput fraction; required.
	SLO sweep.SLO
	// Search bounds the search (sweep.FindMaxRate).
	Search sweep.RateSearchOptions
	// Log, if set, gets one line per probe.
	Log io.Writer
}

// RateSearchSummary is RateSearchFile: the search's outcome and what every
// probe measured, in the order run. Its best_qps is null when no rate met
// the target, and its shortfall then names the bounds the first probe
// missed and by how much (sweep.Miss).
type RateSearchSummary struct {
	Schema string    `json:"schema"`
	SLO    sweep.SLO `json:"slo"`
	sweep.RateSearchResult
	// Points are the probes' measures (metrics.Measure), one per probe.
	Points []sweep.Point `json:"points"`
}

// RunRateSearch runs the search of sp, writing a bundle per probe and, at
// the end, RateSearchFile and its page RateSearchPageFile (an interrupted
// or failed search writes them too, with what it found). It returns a *UsageError, having run nothing, for a plan that
// cannot run.
func RunRateSearch(ctx context.Context, sp RateSearchPlan) (*RateSearchSummary, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	switch {
	case sp.Dir == "":
		return nil, usage("RateSearchPlan.Dir", "RateSearchPlan.Dir: empty; name a directory for the search")
	case sp.SLO.IsZero():
		return nil, usage("RateSearchPlan.SLO", "RateSearchPlan.SLO: a goodput search needs an SLO (ttft=…,tpot=…,e2e=…)")
	case sp.Base.GBT != nil:
		return nil, usage("RateSearchPlan.Base.GBT", "RateSearchPlan.Base.GBT: a rate search runs the Server scenario, not a GB/T arrival mode")
	case sp.Base.Settings.Concurrency != 0:
		return nil, usage("RateSearchPlan.Base.Settings.Concurrency", "RateSearchPlan.Base.Settings.Concurrency: a rate search sets each probe's request rate, not a concurrency")
	case sp.Base.Settings.Scenario != "" && sp.Base.Settings.Scenario != loadgen.Server.String():
		return nil, usage("RateSearchPlan.Base.Settings.Scenario", "RateSearchPlan.Base.Settings.Scenario %s: a rate search's probes run the Server scenario", sp.Base.Settings.Scenario)
	case sp.Base.Settings.Mode != "" && sp.Base.Settings.Mode != "performance":
		return nil, usage("RateSearchPlan.Base.Settings.Mode", "RateSearchPlan.Base.Settings.Mode %s: a rate search's probes are performance runs", sp.Base.Settings.Mode)
	}
	if _, err := sweep.FindMaxRate(context.Background(), sp.Search, func(context.Context, float64, string) (float64, error) {
		return 0, errCheckOnly
	}); !errors.Is(err, errCheckOnly) {
		return nil, usage("RateSearchPlan.Search", "RateSearchPlan.Search: %v", err)
	}
	// Every probe is the base on the Server scenario: what does not apply
	// to one is refused now, before any probe runs.
	probe := sp.Base
	probe.Settings.Scenario, probe.OutputDir = loadgen.Server.String(), sp.Dir
	probe.SLO = &bundle.SLO{TTFTNs: int64(sp.SLO.TTFT), TPOTNs: int64(sp.SLO.TPOT), E2ENs: int64(sp.SLO.E2E)}
	if err := probe.Validate(); err != nil {
		return nil, inStudy("RateSearchPlan", err)
	}
	if err := PrepareOutputDir(sp.Dir); err != nil {
		return nil, err
	}
	sum := &RateSearchSummary{Schema: RateSearchSchema, SLO: sp.SLO}
	slo := &bundle.SLO{TTFTNs: int64(sp.SLO.TTFT), TPOTNs: int64(sp.SLO.TPOT), E2ENs: int64(sp.SLO.E2E)}
	var dirs []string
	var first *sweep.Miss // the first probe, measured against each bound
	res, runErr := sweep.FindMaxRate(ctx, sp.Search, func(ctx context.Context, q float64, phase string) (float64, error) {
		p := sp.Base
		p.Settings.Scenario = loadgen.Server.String()
		p.Settings.Set = append(append([]string(nil), sp.Base.Settings.Set...), "target_qps="+strconv.FormatFloat(q, 'g', -1, 64))
		rel := fmt.Sprintf("probe%02d-q%s", len(dirs)+1, strconv.FormatFloat(q, 'f', -1, 64))
		p.OutputDir, p.SLO = filepath.Join(sp.Dir, rel), slo
		p.Name = fmt.Sprintf("%s, %g requests/s (%s)", sp.Base.SUT.KindOrNull(), q, phase)
		out, err := Run(ctx, p)
		if out == nil {
			return 0, err
		}
		pt, merr := metrics.Measure(out.Bundle, sp.SLO)
		if merr != nil {
			return 0, errors.Join(err, merr)
		}
		if first == nil {
			first = &sweep.Miss{TargetQPS: q, Fraction: pt.Goodput.Fraction, Target: sp.Search.Target, Issued: pt.Issued, Failed: pt.Errors + pt.Lost,
				Bounds: sweep.CheckBounds(out.Bundle.Result, sp.SLO, sp.Search.Target)}
		}
		dirs = append(dirs, rel)
		pt.Dir, pt.Verdict = rel, "NONE"
		if out.Verdict.Kind != VerdictNone {
			pt.Verdict = out.Verdict.Word()
		}
		sum.Points = append(sum.Points, pt)
		if sp.Log != nil {
			fmt.Fprintf(sp.Log, "  %-22s %9.4g req/s target: %8.1f req/s done, goodput %.1f %% (%.1f req/s, %.1f tok/s), TTFT p90 %.1f ms, %d errors\n",
				rel, q, pt.RequestRate, 100*pt.Goodput.Fraction, pt.Goodput.RequestsPerS, pt.Goodput.TokensPerS, pt.TTFTP90Ms, pt.Errors)
		}
		if err != nil {
			return 0, err
		}
		return pt.Goodput.Fraction, nil
	})
	for i := range res.Probes {
		if i < len(dirs) {
			res.Probes[i].Dir = dirs[i]
		}
	}
	if res.Best == nil && len(res.Probes) > 0 && first != nil {
		first.Text = first.Describe()
		res.Shortfall = first
	}
	sum.RateSearchResult = res
	if len(dirs) == 0 {
		return nil, runErr
	}
	return sum, errors.Join(runErr, writeRateSearch(sp.Dir, sum))
}

// errCheckOnly stops the options check of RunRateSearch before a probe.
var errCheckOnly = errors.New("options checked")

// writeRateSearch writes RateSearchFile and RateSearchPageFile.
func writeRateSearch(dir string, s *RateSearchSummary) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, RateSearchFile), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return writeRateSearchPage(dir, s)
}

// writeRateSearchPage writes RateSearchPageFile of s.
func writeRateSearchPage(dir string, s *RateSearchSummary) error {
	var page bytes.Buffer
	if err := report.WriteRateSearch(&page, report.RateSearch{SLO: s.SLO, Result: s.RateSearchResult, Points: s.Points}); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, RateSearchPageFile), page.Bytes(), 0o644)
}

// IsRateSearch reports whether dir holds a rate search (RateSearchFile).
func IsRateSearch(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, RateSearchFile))
	return err == nil && fi.Mode().IsRegular()
}

// ReadRateSearch reads the RateSearchFile of dir, refusing another schema.
func ReadRateSearch(dir string) (*RateSearchSummary, error) {
	path := filepath.Join(dir, RateSearchFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s RateSearchSummary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Schema != RateSearchSchema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, s.Schema, RateSearchSchema)
	}
	s.Best = sweep.ReadBestQPS(s.Best)
	return &s, nil
}

// WriteRateSearchPage writes RateSearchPageFile of the search in dir again
// from its RateSearchFile: the same bytes the search wrote, with the same
// aimeter version.
func WriteRateSearchPage(dir string) (*RateSearchSummary, error) {
	s, err := ReadRateSearch(dir)
	if err != nil {
		return nil, err
	}
	return s, writeRateSearchPage(dir, s)
}
