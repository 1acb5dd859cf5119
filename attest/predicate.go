package attest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"aimeter/bundle"
	"aimeter/derived"
)

// predicateOf reads the predicate of the bundle in dir from its manifest
// and result.json (absent for a training bundle: the predicate then holds
// the generator only).
func predicateOf(dir string, m *bundle.Manifest) (*Predicate, error) {
	p := &Predicate{Generator: m.Generator}
	data, err := os.ReadFile(filepath.Join(dir, bundle.ResultFile))
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	var r derived.ResultJSON
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", bundle.ResultFile, err)
	}
	p.Verdict = r.VerdictWord
	p.Scenario = r.Scenario
	p.Mode = r.Mode
	p.Headline = r.Headline
	p.Metrics = HeadlineMetrics(&r)
	return p, nil
}

// HeadlineMetrics are the figures of a result that the predicate carries,
// keyed by their JSON path in result.json: the sample counts and, with a
// performance pass, the latency percentiles.
func HeadlineMetrics(r *derived.ResultJSON) map[string]float64 {
	m := map[string]float64{
		"samples.issued":     float64(r.Samples.Issued),
		"samples.ok":         float64(r.Samples.OK),
		"samples.failed":     float64(r.Samples.Failed),
		"samples.lost":       float64(r.Samples.Lost),
		"samples.error_rate": r.Samples.ErrorRate,
	}
	if l := r.LatencyNs; l != nil {
		m["latency_ns.min"] = float64(l.Min)
		m["latency_ns.mean"] = float64(l.Mean)
		m["latency_ns.p50"] = float64(l.P50)
		m["latency_ns.p90"] = float64(l.P90)
		m["latency_ns.p99"] = float64(l.P99)
		m["latency_ns.max"] = float64(l.Max)
	}
	return m
}
