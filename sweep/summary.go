package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"aimeter/bundle"
	"aimeter/derived/metrics"
	"aimeter/verdict"
)

// Files of a sweep directory. PlanFile is the raw record of what the sweep
// was asked for and ran, in order; SummaryFile and PageFile are derived
// from it and the point bundles alone (Summarize), so `aimeter report`
// regenerates them.
const (
	PlanFile    = "sweep-plan.json"
	SummaryFile = "sweep.json"
	PageFile    = "sweep.html"
)

// Schemas of the files.
const (
	PlanSchema    = "aimeter-sweep-plan/1"
	SummarySchema = "aimeter-sweep/1"
)

// Kinds of sweep.
const (
	KindSweep  = "sweep"          // a Pareto sweep over listed or automatic points
	KindSearch = "goodput-search" // a search for the highest concurrency meeting a goodput target
)

// OfflineShare is the share of the Cmax point's system_tps an Offline point
// must reach (Endpoints v1.0 section 5.7: 98 %).
const OfflineShare = 0.98

// Journal is the raw record of a sweep (its PlanFile): what was asked, and every run in the
// order it ran. The runner rewrites it after each run, so that an
// interrupted sweep still records the runs it finished.
type Journal struct {
	Schema string `json:"schema"`
	Name   string `json:"name,omitempty"`
	Kind   string `json:"kind"`
	// Regions are the Endpoints regions of an automatic sweep (nil for
	// listed points below 33).
	Regions *Regions `json:"regions,omitempty"`
	// SLO is the goodput objective; zero for none.
	SLO SLO `json:"slo"`
	// Search is the search's bounds and target (KindSearch only).
	Search *SearchOptions `json:"search,omitempty"`
	// Runs are the runs, in order.
	Runs []Step `json:"runs"`
}

// Step is one run of a sweep.
type Step struct {
	Concurrency uint64 `json:"concurrency"`
	Offline     bool   `json:"offline,omitempty"`
	Phase       string `json:"phase,omitempty"`
	// Dir is its bundle, relative to the sweep directory.
	Dir string `json:"dir"`
}

// PointDir is the directory name of a point's bundle.
func PointDir(c uint64, offline bool) string {
	if offline {
		return "offline"
	}
	return fmt.Sprintf("c%05d", c)
}

// WriteJournal writes p into dir as PlanFile, whole or not at all.
func WriteJournal(dir string, p *Journal) error {
	p.Schema = PlanSchema
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, PlanFile), append(data, '\n'))
}

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".sweep-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(f.Name(), 0o644)); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// ReadJournal reads the PlanFile of dir (DecodePlan).
func ReadJournal(dir string) (*Journal, error) {
	data, err := os.ReadFile(filepath.Join(dir, PlanFile))
	if err != nil {
		return nil, err
	}
	p, err := DecodeJournal(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, PlanFile), err)
	}
	return p, nil
}

// DecodeJournal reads a plan file's JSON, refusing unknown fields, another
// schema or kind, a run directory outside the sweep, a search without its
// options or with bad ones, and regions that are not Endpoints' for their
// Cmin and Cmax; the error names the field or run.
func DecodeJournal(data []byte) (*Journal, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Journal
	if err := dec.Decode(&p); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the plan's JSON object")
	}
	if p.Schema != PlanSchema {
		return nil, fmt.Errorf("schema %q, want %q", p.Schema, PlanSchema)
	}
	switch p.Kind {
	case KindSweep:
		if p.Search != nil {
			return nil, errors.New("search: a sweep has no search options")
		}
	case KindSearch:
		if p.Search == nil {
			return nil, errors.New("search: a goodput search needs its options")
		}
		if err := p.Search.check(); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if p.SLO.IsZero() {
			return nil, errors.New("slo: a goodput search needs an SLO")
		}
	default:
		return nil, fmt.Errorf("kind %q, want %q or %q", p.Kind, KindSweep, KindSearch)
	}
	if p.SLO.TTFT < 0 || p.SLO.TPOT < 0 || p.SLO.E2E < 0 {
		return nil, errors.New("slo: a negative bound")
	}
	if r := p.Regions; r != nil {
		want, err := ComputeRegions(r.CMin, r.CMax)
		if err != nil {
			return nil, fmt.Errorf("regions: %w", err)
		}
		if *r != want {
			return nil, fmt.Errorf("regions: not Endpoints' regions for Cmin %d, Cmax %d", r.CMin, r.CMax)
		}
	}
	for i, r := range p.Runs {
		if r.Dir == "" || !filepath.IsLocal(r.Dir) {
			return nil, fmt.Errorf("runs[%d].dir %q: must be a directory inside the sweep", i, r.Dir)
		}
		if r.Concurrency == 0 {
			return nil, fmt.Errorf("runs[%d].concurrency: must be ≥ 1", i)
		}
	}
	return &p, nil
}

// IsSweep reports whether dir holds a sweep (a PlanFile).
func IsSweep(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, PlanFile))
	return err == nil
}

// Summary is sweep.json: every point's metrics, the Offline check and the
// search, computed from the plan and the point bundles.
type Summary struct {
	Schema string `json:"schema"`
	Name   string `json:"name,omitempty"`
	Kind   string `json:"kind"`
	// Regions and Uncovered: the Endpoints regions of an automatic sweep,
	// and the required regions its points leave empty.
	Regions   *Regions `json:"regions,omitempty"`
	Uncovered []string `json:"uncovered_regions,omitempty"`
	// SLO is the goodput objective ("" for none).
	SLO string `json:"slo,omitempty"`
	// Points are the fixed-concurrency points, by ascending concurrency
	// (a concurrency probed twice keeps its last run).
	Points []Point `json:"points"`
	// Offline is the Offline point and its check; nil without one.
	Offline *Offline `json:"offline,omitempty"`
	// Search is a goodput search's outcome; nil for a sweep.
	Search *SearchResult `json:"search,omitempty"`
}

// Offline is the Offline point of a sweep and its check against the Cmax
// point (Endpoints v1.0 section 5.7): it must reach OfflineShare of the
// system_tps of the highest fixed-concurrency point; where it does not,
// that point is elected as the Offline point instead.
type Offline struct {
	Point Point `json:"point"`
	// CMax is the highest fixed concurrency and CMaxSystemTPS its
	// system_tps; Ratio is the Offline point's system_tps over it.
	CMax          uint64  `json:"c_max"`
	CMaxSystemTPS float64 `json:"c_max_system_tps"`
	Ratio         float64 `json:"ratio"`
	// Meets says Ratio ≥ 0.98.
	Meets bool `json:"meets_98_percent"`
	// Elected says the Cmax point stands as the Offline point (the run
	// missed 98 %).
	Elected bool `json:"elected_from_c_max"`
}

// Summarize computes the summary of the sweep in dir from its plan and
// point bundles (read with bundle.Read, digests checked).
func Summarize(dir string) (*Summary, error) {
	p, err := ReadJournal(dir)
	if err != nil {
		return nil, err
	}
	points := map[string]Point{}
	var first []BoundCheck // the bounds over a search's first probe
	for i, r := range p.Runs {
		if _, ok := points[r.Dir]; ok {
			continue
		}
		b, err := bundle.Read(filepath.Join(dir, r.Dir))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("sweep %s: the point bundle %s is missing: %w", dir, r.Dir, err)
			}
			return nil, fmt.Errorf("sweep %s: point %s: %w", dir, r.Dir, err)
		}
		pt, err := metrics.Measure(b, p.SLO)
		switch {
		case errors.Is(err, metrics.ErrNoPass):
			// An interrupted run that issued nothing: listed, unmeasured.
			pt = Point{Concurrency: b.Result.Effective.Concurrency}
			if !p.SLO.IsZero() {
				pt.Goodput = &Goodput{}
			}
		case err != nil:
			return nil, fmt.Errorf("sweep %s: point %s: %w", dir, r.Dir, err)
		}
		if i == 0 && p.Kind == KindSearch && p.Search != nil {
			first = CheckBounds(b.Result, p.SLO, p.Search.Target)
		}
		pt.Dir, pt.Offline = r.Dir, r.Offline
		pt.Verdict = verdictWord(b)
		if p.Regions != nil && !r.Offline {
			pt.Region = p.Regions.Classify(int(pt.Concurrency))
		}
		points[r.Dir] = pt
	}
	return summarize(p, points, first)
}

// verdictWord is the point's verdict (verdict.Of, the run's own), or NONE
// for a run that decided nothing.
func verdictWord(b *bundle.Bundle) string {
	v := verdict.Of(b, nil)
	if v.Kind == verdict.None {
		return "NONE"
	}
	return v.Word()
}

// summarize is Summarize over measured points, keyed by directory, and
// the bounds measured over a search's first probe.
func summarize(p *Journal, points map[string]Point, first []BoundCheck) (*Summary, error) {
	s := &Summary{Schema: SummarySchema, Name: p.Name, Kind: p.Kind, Regions: p.Regions, Points: []Point{}}
	if !p.SLO.IsZero() {
		s.SLO = p.SLO.String()
	}
	seen := map[uint64]int{}
	var offline *Point
	for _, r := range p.Runs {
		pt := points[r.Dir]
		if r.Offline {
			offline = &pt
			continue
		}
		if i, ok := seen[pt.Concurrency]; ok {
			s.Points[i] = pt
			continue
		}
		seen[pt.Concurrency] = len(s.Points)
		s.Points = append(s.Points, pt)
	}
	slices.SortFunc(s.Points, func(a, b Point) int { return int(a.Concurrency) - int(b.Concurrency) })
	if p.Regions != nil {
		var cs []int
		for _, pt := range s.Points {
			cs = append(cs, int(pt.Concurrency))
		}
		s.Uncovered = p.Regions.Coverage(cs)
	}
	if offline != nil && len(s.Points) > 0 {
		top := s.Points[len(s.Points)-1]
		o := &Offline{Point: *offline, CMax: top.Concurrency, CMaxSystemTPS: top.SystemTPS}
		if top.SystemTPS > 0 {
			o.Ratio = offline.SystemTPS / top.SystemTPS
		}
		o.Meets = o.Ratio >= OfflineShare
		o.Elected = !o.Meets
		s.Offline = o
	}
	if p.Kind == KindSearch {
		if p.Search == nil {
			return nil, errors.New("a goodput search's plan has no search options")
		}
		sr, err := replay(p, points)
		if err != nil {
			return nil, err
		}
		if sr.Best == nil && len(sr.Probes) > 0 {
			pr := sr.Probes[0]
			pt := points[p.Runs[0].Dir]
			m := &Miss{Concurrency: pr.Concurrency, Fraction: pr.Fraction, Target: p.Search.Target,
				Issued: pt.Issued, Failed: pt.Errors + pt.Lost, Bounds: first}
			m.Text = m.Describe()
			sr.Shortfall = m
		}
		s.Search = &sr
	}
	return s, nil
}

// replay runs the search again over the recorded probes, so that its
// result is a function of the bundles: each step must ask for the
// concurrency the plan recorded next.
func replay(p *Journal, points map[string]Point) (SearchResult, error) {
	i := 0
	res, err := FindMaxConcurrency(context.Background(), *p.Search, func(_ context.Context, c uint64, phase string) (float64, error) {
		if i >= len(p.Runs) {
			return 0, errReplayEnd
		}
		r := p.Runs[i]
		i++
		if r.Concurrency != c {
			return 0, fmt.Errorf("the plan records concurrency %d as probe %d, the search asks for %d", r.Concurrency, i, c)
		}
		g := points[r.Dir].Goodput
		if g == nil {
			return 0, fmt.Errorf("probe %s has no goodput (the plan has no SLO)", r.Dir)
		}
		return g.Fraction, nil
	})
	for k := range res.Probes {
		if k < len(p.Runs) {
			res.Probes[k].Dir = p.Runs[k].Dir
		}
	}
	if err != nil && !errors.Is(err, errReplayEnd) {
		return res, err
	}
	return res, nil
}

// WriteSummary writes s as indented JSON into dir as SummaryFile.
func WriteSummary(dir string, s *Summary) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, SummaryFile), append(data, '\n'))
}
