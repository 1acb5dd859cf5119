package benchmark

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"aimeter/derived/metrics"
	"aimeter/loadgen"
	"aimeter/report"
	"aimeter/sweep"
)

// SweepPlan is a study of one system at several fixed concurrencies, one
// bundle per run in a sweep directory: a Pareto sweep over points listed
// or chosen by MLPerf Endpoints v1.0's rule, or a search for the highest
// concurrency whose goodput meets a target. Its summary (sweep.json) and
// page (sweep.html) are functions of the point bundles and the sweep's
// plan file (WriteSweepFiles regenerates them).
type SweepPlan struct {
	// Base is the run of every point: its SUT, settings (the minimum
	// duration above all), warm-up and bounds. Its Settings.Concurrency,
	// OutputDir and Name are set for each point; it must not be a GB/T
	// test, and its scenario must be SingleStream or unset.
	Base Plan
	// Dir is the sweep directory. Required.
	Dir string
	// Name labels the sweep in its page; "" means the SUT's kind.
	Name string
	// Points are the concurrencies of a sweep, as listed. Nil chooses them
	// automatically from CMin, CMax and Count (sweep.AutoPoints).
	Points []uint64
	// CMin, CMax and Count are the automatic choice's inputs: 1 ≤ CMin ≤
	// 32 < CMax, 7 ≤ Count ≤ 31 (0 means 7).
	CMin, CMax, Count int
	// Offline adds the Offline point after the others: the whole data set
	// in flight, checked against 98 % of the Cmax point's system_tps.
	Offline bool
	// SLO, if not zero, gives every point its goodput.
	SLO sweep.SLO
	// Search, if set, makes the study a goodput search over concurrency
	// instead of a sweep (Points, CMin, CMax, Count and Offline unused);
	// it needs an SLO.
	Search *sweep.SearchOptions
	// Log, if set, gets one line per run.
	Log io.Writer
}

// RunSweep runs the sweep or search of sp, writing a bundle per run and,
// at the end (or when interrupted, over the runs that finished), the
// summary and the page. It returns a *UsageError, having run nothing, for
// a plan that cannot run.
func RunSweep(ctx context.Context, sp SweepPlan) (*sweep.Summary, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	plan, err := sp.check()
	if err != nil {
		return nil, err
	}
	// Every point is the base at a fixed concurrency: what does not apply
	// to one is refused now, before any point runs.
	point := sp.Base
	point.Settings.Concurrency, point.OutputDir = 1, sp.Dir
	if !sp.SLO.IsZero() {
		point.SLO = sp.SLO.Bundle()
	}
	if err := point.Validate(); err != nil {
		return nil, inStudy("SweepPlan", err)
	}
	if err := PrepareOutputDir(sp.Dir); err != nil {
		return nil, err
	}
	if err := sweep.WriteJournal(sp.Dir, plan.Journal); err != nil {
		return nil, err
	}
	var qslSize uint64
	runPoint := func(ctx context.Context, c uint64, offline bool, phase string) (*Outcome, error) {
		if err := ctx.Err(); err != nil {
			// Interrupted between points: the next one does not start.
			return nil, fmt.Errorf("sweep stopped before concurrency %d: %w (%w)", c, loadgen.ErrInterrupted, err)
		}
		p := sp.Base
		p.Settings.Concurrency = c
		if !sp.SLO.IsZero() {
			p.SLO = sp.SLO.Bundle()
		}
		rel := sweep.PointDir(c, offline)
		if sp.Search != nil {
			rel = fmt.Sprintf("probe%02d-c%05d", len(plan.Runs)+1, c)
		}
		p.OutputDir = filepath.Join(sp.Dir, rel)
		p.Name = fmt.Sprintf("%s, concurrency %d", plan.Name, c)
		if offline {
			p.Name = fmt.Sprintf("%s, Offline (%d in flight)", plan.Name, c)
		}
		out, err := Run(ctx, p)
		if out == nil {
			return nil, fmt.Errorf("concurrency %d: %w", c, err)
		}
		qslSize = out.Result.QSLTotalCount
		plan.Runs = append(plan.Runs, sweep.Step{Concurrency: c, Offline: offline, Phase: phase, Dir: rel})
		if werr := sweep.WriteJournal(sp.Dir, plan.Journal); werr != nil {
			return out, errors.Join(err, werr)
		}
		if sp.Log != nil {
			pt, merr := metrics.Measure(out.Bundle, sp.SLO)
			if merr == nil {
				fmt.Fprintf(sp.Log, "%s\n", pointLine(rel, pt))
			}
		}
		if err != nil {
			return out, fmt.Errorf("concurrency %d: %w", c, err)
		}
		return out, nil
	}
	var runErr error
	if sp.Search != nil {
		_, runErr = sweep.FindMaxConcurrency(ctx, *sp.Search, func(ctx context.Context, c uint64, phase string) (float64, error) {
			out, err := runPoint(ctx, c, false, phase)
			if err != nil {
				return 0, err
			}
			pt, err := metrics.Measure(out.Bundle, sp.SLO)
			if err != nil {
				return 0, err
			}
			return pt.Goodput.Fraction, nil
		})
	} else {
		points := sp.Points
		if points == nil {
			for _, c := range plan.autoPoints {
				points = append(points, uint64(c))
			}
		}
		for _, c := range points {
			if _, runErr = runPoint(ctx, c, false, ""); runErr != nil {
				break
			}
		}
		if runErr == nil && sp.Offline && qslSize > 0 {
			_, runErr = runPoint(ctx, min(qslSize, loadgen.MaxConcurrency), true, "")
		}
	}
	if len(plan.Runs) == 0 {
		return nil, runErr
	}
	sum, err := WriteSweepFiles(sp.Dir)
	return sum, errors.Join(runErr, err)
}

// pointLine is a run's line in the log.
func pointLine(dir string, p sweep.Point) string {
	s := fmt.Sprintf("  %-16s concurrency %5d: system_tps %9.1f, tps_per_user %7.1f, TTFT p90 %8.1f ms, %7.1f req/s, %d errors",
		dir, p.Concurrency, p.SystemTPS, p.TPSPerUser, p.TTFTP90Ms, p.RequestRate, p.Errors)
	if g := p.Goodput; g != nil {
		s += fmt.Sprintf(", goodput %.1f %% (%.1f req/s, %.1f tok/s)", 100*g.Fraction, g.RequestsPerS, g.TokensPerS)
	}
	return s
}

// sweepSetup is the plan file of a sweep about to run, with the
// automatically chosen points.
type sweepSetup struct {
	*sweep.Journal
	autoPoints []int
}

// check refuses a sweep plan that cannot run and makes its plan file.
func (sp *SweepPlan) check() (*sweepSetup, error) {
	if sp.Dir == "" {
		return nil, usage("SweepPlan.Dir", "SweepPlan.Dir: empty; name a directory for the sweep")
	}
	if sp.Base.GBT != nil {
		return nil, usage("SweepPlan.Base.GBT", "SweepPlan.Base.GBT: a sweep runs fixed-concurrency points, not a GB/T arrival mode")
	}
	if sp.Base.Settings.Concurrency != 0 {
		return nil, usage("SweepPlan.Base.Settings.Concurrency", "SweepPlan.Base.Settings.Concurrency: a sweep sets each point's concurrency itself; give SweepPlan.Points or SweepPlan.CMax")
	}
	if sc := sp.Base.Settings.Scenario; sc != "" && sc != loadgen.SingleStream.String() {
		return nil, usage("SweepPlan.Base.Settings.Scenario", "SweepPlan.Base.Settings.Scenario %s: a sweep's points run at fixed concurrency on SingleStream's issuing", sc)
	}
	if m := sp.Base.Settings.Mode; m != "" && m != "performance" {
		return nil, usage("SweepPlan.Base.Settings.Mode", "SweepPlan.Base.Settings.Mode %s: a sweep's points are performance runs", m)
	}
	name := sp.Name
	if name == "" {
		name = string(sp.Base.SUT.KindOrNull())
	}
	out := &sweepSetup{Journal: &sweep.Journal{Name: name, Kind: sweep.KindSweep, SLO: sp.SLO}}
	if sp.Search != nil {
		if sp.SLO.IsZero() {
			return nil, usage("SweepPlan.SLO", "SweepPlan.SLO: a goodput search needs an SLO (ttft=…,tpot=…,e2e=…)")
		}
		o := *sp.Search
		if o.Start == 0 {
			o.Start = 1
		}
		if !(o.Target > 0 && o.Target <= 1) {
			return nil, usage("SweepPlan.Search.Target", "SweepPlan.Search.Target %v: want a fraction in (0, 1]", o.Target)
		}
		if o.Max < o.Start || o.Max > loadgen.MaxConcurrency {
			return nil, usage("SweepPlan.Search.Max", "SweepPlan.Search.Max %d: the search needs a maximum from %d to %d", o.Max, o.Start, loadgen.MaxConcurrency)
		}
		sp.Search = &o
		out.Kind, out.Search = sweep.KindSearch, &o
		return out, nil
	}
	if sp.Points != nil {
		if len(sp.Points) == 0 {
			return nil, usage("SweepPlan.Points", "SweepPlan.Points: empty")
		}
		if n := len(sp.Points) + boolInt(sp.Offline); n > sweep.MaxPoints {
			return nil, usage("SweepPlan.Points", "SweepPlan.Points: %d points, more than the %d one curve may have (Endpoints v1.0 section 5.6)", n, sweep.MaxPoints)
		}
		seen := map[uint64]bool{}
		for _, c := range sp.Points {
			if c == 0 || c > loadgen.MaxConcurrency {
				return nil, usage("SweepPlan.Points", "SweepPlan.Points: concurrency %d: want 1 to %d", c, loadgen.MaxConcurrency)
			}
			if seen[c] {
				return nil, usage("SweepPlan.Points", "SweepPlan.Points: concurrency %d listed twice", c)
			}
			seen[c] = true
		}
		// Listed points get the Endpoints regions when they can have them.
		lo, hi := sp.Points[0], sp.Points[0]
		for _, c := range sp.Points {
			lo, hi = min(lo, c), max(hi, c)
		}
		if r, err := sweep.ComputeRegions(int(lo), int(hi)); err == nil {
			out.Regions = &r
		}
		return out, nil
	}
	count := sp.Count
	if count == 0 {
		count = sweep.MinPoints
	}
	pts, r, err := sweep.AutoPoints(sp.CMin, sp.CMax, count)
	if err != nil {
		return nil, &UsageError{Field: "SweepPlan.CMax", Err: err}
	}
	out.Regions, out.autoPoints = &r, pts
	return out, nil
}

// inStudy names the field of a base plan's usage error err by its path
// in the study plan study ("SweepPlan.Base.SpinWindow"; SLO is the
// study's own).
func inStudy(study string, err error) error {
	var ue *UsageError
	if !errors.As(err, &ue) || ue.Field == "" {
		return err
	}
	field := study + ".Base." + ue.Field
	if strings.HasPrefix(ue.Field, "SLO.") {
		field = study + ".SLO"
	}
	return &UsageError{Field: field, Err: ue.Err}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WriteSweepFiles computes the summary of the sweep in dir from its plan
// and point bundles and writes sweep.json and sweep.html: what RunSweep
// writes at its end and `aimeter report` regenerates.
func WriteSweepFiles(dir string) (*sweep.Summary, error) {
	sum, err := sweep.Summarize(dir)
	if err != nil {
		return nil, err
	}
	if err := sweep.WriteSummary(dir, sum); err != nil {
		return sum, err
	}
	var page bytes.Buffer
	if err := report.WriteSweeps(&page, []*sweep.Summary{sum}); err != nil {
		return sum, err
	}
	return sum, os.WriteFile(filepath.Join(dir, sweep.PageFile), page.Bytes(), 0o644)
}

// WriteSweepsPage writes the page of several sweeps side by side
// (report.WriteSweeps) to sweep.PageFile in dir, creating dir, and returns
// its path.
func WriteSweepsPage(dir string, sums []*sweep.Summary) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var page bytes.Buffer
	if err := report.WriteSweeps(&page, sums); err != nil {
		return "", err
	}
	path := filepath.Join(dir, sweep.PageFile)
	return path, os.WriteFile(path, page.Bytes(), 0o644)
}
