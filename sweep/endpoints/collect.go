package endpoints

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"aimeter/benchmark/invocation"
	"aimeter/bundle"
	"aimeter/derived"
	"aimeter/derived/metrics"
	"aimeter/loadgen"
	"aimeter/sweep"
	"aimeter/sysinfo"
)

// Point is what the tree needs of one point of a sweep, all of it read
// from the point's bundle.
type Point struct {
	// Point is the sweep's measurement of the bundle (metrics.Measure).
	sweep.Point
	// OfflineMode is point.yaml's offline: "dedicated" for the Offline
	// run, "elected" for the Cmax point standing in for an Offline run
	// that missed 98 %, "none" otherwise.
	OfflineMode string
	// Samples are the requests of the reported pass (metrics.SampleOf).
	Samples []metrics.Sample
	// MinDurationMs and MinQueryCount are the run's requested settings.
	MinDurationMs uint64
	MinQueryCount uint64
	// SchedulerSeed and SampleIndexSeed are LoadGen's schedule_rng_seed
	// and sample_index_rng_seed of the run.
	SchedulerSeed   uint64
	SampleIndexSeed uint64
	// QSLName names the sample library (the warm-up's data source).
	QSLName string
	// Warmup is the warm-up before the run; nil for none.
	Warmup *bundle.Warmup
	// System is the host the run recorded.
	System sysinfo.System
	// SaltSeed is the seed of the run's per-query anti-caching salt
	// (--salt-seed); nil for a run without --salt.
	SaltSeed *uint64
	// Steady is the run's super-pass steady-state analysis (the one its
	// result.json reports); nil for a run it does not cover (no token
	// times).
	Steady *metrics.SuperPassAnalysis
	// Config is the client's configuration (config.yaml): the invocation
	// and the requested settings, as stored in the bundle.
	Config map[string]any
}

// Sweep is what the tree needs of a sweep.
type Sweep struct {
	// CMax is the sweep's Cmax: its regions' when it has them, else its
	// highest fixed-concurrency point.
	CMax   int
	Points []Point
}

// Collect reads the sweep in dir (its plan and every point bundle, digests
// checked) into a Sweep. A dedicated Offline point is kept only when it
// reached 98 % of the Cmax point's system_tps; otherwise the Cmax point is
// marked elected, as Endpoints section 5.7 says.
func Collect(dir string) (*Sweep, error) {
	if !sweep.IsSweep(dir) {
		return nil, fmt.Errorf("%s is not a sweep directory (no %s)", dir, sweep.PlanFile)
	}
	sum, err := sweep.Summarize(dir)
	if err != nil {
		return nil, err
	}
	if sum.Kind != sweep.KindSweep {
		return nil, fmt.Errorf("%s is a %s, not a Pareto sweep", dir, sum.Kind)
	}
	if len(sum.Points) == 0 {
		return nil, fmt.Errorf("sweep %s has no fixed-concurrency point", dir)
	}
	s := &Sweep{CMax: int(sum.Points[len(sum.Points)-1].Concurrency)}
	if sum.Regions != nil {
		s.CMax = sum.Regions.CMax
	}
	pts := sum.Points
	mode := make([]string, len(pts))
	for i := range mode {
		mode[i] = "none"
	}
	if o := sum.Offline; o != nil {
		if o.Meets {
			pts = append(pts, o.Point)
			mode = append(mode, "dedicated")
		} else {
			mode[len(sum.Points)-1] = "elected"
		}
	}
	seen := map[uint64]string{}
	for i, sp := range pts {
		if other, dup := seen[sp.Concurrency]; dup {
			return nil, fmt.Errorf("sweep %s: points %s and %s both have concurrency %d, and Endpoints names a point directory r<concurrency>", dir, other, sp.Dir, sp.Concurrency)
		}
		seen[sp.Concurrency] = sp.Dir
		p, err := collectPoint(filepath.Join(dir, sp.Dir), sp)
		if err != nil {
			return nil, fmt.Errorf("sweep %s: point %s: %w", dir, sp.Dir, err)
		}
		p.OfflineMode = mode[i]
		s.Points = append(s.Points, p)
	}
	return s, nil
}

func collectPoint(dir string, sp sweep.Point) (Point, error) {
	b, err := derived.Read(dir)
	if err != nil {
		return Point{}, err
	}
	if b.Result == nil {
		return Point{}, errors.New("a training bundle has no records")
	}
	res := b.Result
	pass := -1
	for i, p := range res.Passes {
		if p.Reported && p.Kind != loadgen.PassAccuracy {
			pass = i
		}
	}
	if pass < 0 {
		return Point{}, metrics.ErrNoPass
	}
	p := Point{
		Point:           sp,
		MinDurationMs:   res.Requested.MinDurationMs,
		MinQueryCount:   res.Requested.MinQueryCount,
		SchedulerSeed:   res.Requested.ScheduleRNGSeed,
		SampleIndexSeed: res.Requested.SampleIndexRNGSeed,
		QSLName:         res.QSLName,
		System:          b.System,
	}
	if sp, ok := metrics.SuperPassOf(res); ok {
		p.Steady = sp
	}
	cfg := map[string]any{"settings": res.Requested}
	for r := range res.PassRecords(pass) {
		p.Samples = append(p.Samples, metrics.SampleOf(r))
	}
	if inv := invocation.Of(b); inv != nil {
		p.Warmup = inv.Warmup
		if oc := inv.SUT.OpenAI; oc != nil {
			p.SaltSeed = oc.SaltSeed
		}
		cfg["invocation"] = inv
	}
	// config.yaml is the stored JSON's keys, so a round trip through
	// JSON gives the mapping.
	data, err := json.Marshal(cfg)
	if err != nil {
		return Point{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return Point{}, err
	}
	p.Config = exactNumbers(m).(map[string]any)
	return p, nil
}

// exactNumbers replaces the json.Numbers in v by int64, uint64 or float64,
// whichever holds the number exactly (seeds are 64-bit unsigned).
func exactNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = exactNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = exactNumbers(e)
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return u
		}
		f, _ := x.Float64()
		return f
	}
	return v
}
