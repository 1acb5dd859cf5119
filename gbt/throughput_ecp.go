package gbt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"aimeter/stats"
)

// ECPFormat is the value of the "format" member of an effective computing
// power file.
const ECPFormat = "aimeter-gbt-ecp/1"

// DefaultAlpha is α, the adjustment coefficient of the effective computing
// power when the file gives none (GB-6.6.4-T8-ThBar, GB-7.6.4-T18-ecp).
const DefaultAlpha = 100.0

// ErrECPConfig is wrapped by every error ParseECPConfig and
// EffectiveComputingPower return for bad input.
var ErrECPConfig = errors.New("gbt: invalid effective computing power configuration")

// ECPConfig holds the tester's choices for the effective computing power
// (GB-7.6.4-T18-ecp; "τ, α and the reference system are determined by the
// tester", GB-6.6.4-T8-FNb): the scenario set S with each scenario's weight
// τ_s and the reference system's baseline throughput Th*_s.
//
// The file is JSON, one object:
//
//	{
//	  "format": "aimeter-gbt-ecp/1",
//	  "alpha": 100,
//	  "reference_system": "free text naming the reference computing system",
//	  "scenarios": [
//	    {"name": "T11-1", "weight": 0.6, "baseline": 1250.5, "unit": "images/s"},
//	    {"name": "T11-8", "weight": 0.4, "baseline": 310, "unit": "tokens/s"}
//	  ]
//	}
//
// "format" is required and must be ECPFormat. "alpha" is optional (default
// DefaultAlpha) and must be a finite number > 0. Each scenario needs a
// non-empty, unique "name", a "weight" τ_s in [0, 1] (a weight of 0 is
// allowed and leaves the scenario out, IN-33) and a finite "baseline" > 0 in
// the scenario's throughput unit; "unit" is free text. The weights must not
// all be 0; they should sum to 1 (GB-6.6.4-T8-ThBar) and a warning is
// raised otherwise (IN-33). Unknown members and trailing data are errors.
type ECPConfig struct {
	Format          string        `json:"format"`                     // ECPFormat
	Alpha           float64       `json:"alpha"`                      // α > 0
	ReferenceSystem string        `json:"reference_system,omitempty"` // the reference computing system
	Scenarios       []ECPScenario `json:"scenarios"`                  // the set S
}

// ECPScenario is one scenario s of the set S: its weight τ_s and the
// reference system's throughput Th*_s.
type ECPScenario struct {
	Name     string  `json:"name"`           // unique, non-empty
	Weight   float64 `json:"weight"`         // τ_s in [0, 1]
	Baseline float64 `json:"baseline"`       // Th*_s > 0
	Unit     string  `json:"unit,omitempty"` // e.g. "images/s"
}

// weightSumTolerance is how far Σ τ_s may be from 1 without a warning (IN-33).
const weightSumTolerance = 1e-9

// ParseECPConfig reads an effective computing power file (format documented
// at ECPConfig). Errors wrap ErrECPConfig and name the offending member.
func ParseECPConfig(data []byte) (ECPConfig, error) {
	var raw struct {
		Format          *string  `json:"format"`
		Alpha           *float64 `json:"alpha"`
		ReferenceSystem string   `json:"reference_system"`
		Scenarios       []struct {
			Name     *string  `json:"name"`
			Weight   *float64 `json:"weight"`
			Baseline *float64 `json:"baseline"`
			Unit     string   `json:"unit"`
		} `json:"scenarios"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return ECPConfig{}, fmt.Errorf("%w: %v", ErrECPConfig, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return ECPConfig{}, fmt.Errorf("%w: data after the JSON object", ErrECPConfig)
	}
	bad := func(format string, a ...any) (ECPConfig, error) {
		return ECPConfig{}, fmt.Errorf("%w: "+format, append([]any{ErrECPConfig}, a...)...)
	}
	if raw.Format == nil {
		return bad("missing \"format\": want %q", ECPFormat)
	}
	if *raw.Format != ECPFormat {
		return bad("\"format\" is %q, want %q", *raw.Format, ECPFormat)
	}
	cfg := ECPConfig{Format: ECPFormat, Alpha: DefaultAlpha, ReferenceSystem: raw.ReferenceSystem}
	if raw.Alpha != nil {
		if a := *raw.Alpha; !(a > 0) || math.IsInf(a, 0) {
			return bad("\"alpha\" is %v, want a finite number > 0 (GB-6.6.4-T8-ThBar)", a)
		}
		cfg.Alpha = *raw.Alpha
	}
	if len(raw.Scenarios) == 0 {
		return bad("\"scenarios\" is empty: the scenario set S needs at least one scenario")
	}
	seen := make(map[string]bool, len(raw.Scenarios))
	wsum := 0.0
	for i, s := range raw.Scenarios {
		if s.Name == nil || *s.Name == "" {
			return bad("scenario %d has no \"name\"", i)
		}
		name := *s.Name
		if seen[name] {
			return bad("scenario %q appears twice", name)
		}
		seen[name] = true
		if s.Weight == nil {
			return bad("scenario %q has no \"weight\"", name)
		}
		if w := *s.Weight; !(w >= 0 && w <= 1) {
			return bad("scenario %q has weight %v, want τ in [0, 1] (GB-6.6.4-T8-ThBar)", name, w)
		}
		if s.Baseline == nil {
			return bad("scenario %q has no \"baseline\"", name)
		}
		if b := *s.Baseline; !(b > 0) || math.IsInf(b, 0) {
			return bad("scenario %q has baseline %v, want a finite throughput > 0", name, b)
		}
		wsum += *s.Weight
		cfg.Scenarios = append(cfg.Scenarios, ECPScenario{Name: name, Weight: *s.Weight, Baseline: *s.Baseline, Unit: s.Unit})
	}
	if !(wsum > 0) {
		return bad("the weights sum to 0: at least one scenario needs a weight > 0 (IN-33)")
	}
	return cfg, nil
}

// Warnings returns what is legal but doubtful in cfg: weights that do not
// sum to 1 (IN-33).
func (cfg ECPConfig) Warnings() []string {
	wsum := 0.0
	for _, s := range cfg.Scenarios {
		wsum += s.Weight
	}
	if math.Abs(wsum-1) > weightSumTolerance {
		return []string{fmt.Sprintf("the weights sum to %v, not 1 (GB-6.6.4-T8-ThBar); the mean is normalised by the sum (IN-33)", wsum)}
	}
	return nil
}

// ECPRatio is one scenario's relative throughput r_s = Th_s / Th*_s.
type ECPRatio struct {
	Name       string  `json:"name"`       // the scenario s
	Weight     float64 `json:"weight"`     // τ_s
	Throughput float64 `json:"throughput"` // Th_s, measured
	Baseline   float64 `json:"baseline"`   // Th*_s, the reference system's
	Ratio      float64 `json:"ratio"`      // r_s = Th_s / Th*_s
}

// ECPResult is the effective computing power of an SUT (GB-7.6.4-T18-ecp).
type ECPResult struct {
	// Value is ThBar_inf = α · exp(Σ τ_s ln r_s / Σ τ_s) (IN-33).
	Value    float64    `json:"value"`
	Alpha    float64    `json:"alpha"`              // α used
	Ratios   []ECPRatio `json:"ratios"`             // the scenarios that count
	Warnings []string   `json:"warnings,omitempty"` // weights not summing to 1, extra scenarios
}

// EffectiveComputingPower combines the SUT's measured throughputs (by
// scenario name, each in the unit of that scenario's baseline) into the
// effective computing power: α times the weighted geometric mean of
// Th_s / Th*_s (GB-7.6.4-T18-ecp, the formula of GB-6.6.4-T8-ThBar),
// computed by stats.WeightedGeometricMean as IN-33 prescribes. With every
// ratio 1 the value is α.
//
// Every scenario with a weight > 0 needs a measured throughput > 0; a
// scenario with weight 0 may be missing. Measured scenarios that cfg does not
// name are left out with a warning. Errors wrap ErrECPConfig.
func EffectiveComputingPower(cfg ECPConfig, measured map[string]float64) (ECPResult, error) {
	if !(cfg.Alpha > 0) || math.IsInf(cfg.Alpha, 0) {
		return ECPResult{}, fmt.Errorf("%w: alpha is %v, want a finite number > 0", ErrECPConfig, cfg.Alpha)
	}
	res := ECPResult{Alpha: cfg.Alpha, Warnings: cfg.Warnings()}
	values := make([]float64, 0, len(cfg.Scenarios))
	weights := make([]float64, 0, len(cfg.Scenarios))
	named := make(map[string]bool, len(cfg.Scenarios))
	for _, s := range cfg.Scenarios {
		named[s.Name] = true
		th, ok := measured[s.Name]
		if !ok {
			if s.Weight == 0 {
				continue
			}
			return ECPResult{}, fmt.Errorf("%w: no measured throughput for scenario %q (weight %v)", ErrECPConfig, s.Name, s.Weight)
		}
		if !(th > 0) || math.IsInf(th, 0) {
			return ECPResult{}, fmt.Errorf("%w: scenario %q has measured throughput %v, want a finite number > 0 (IN-33)", ErrECPConfig, s.Name, th)
		}
		if !(s.Baseline > 0) || math.IsInf(s.Baseline, 0) {
			return ECPResult{}, fmt.Errorf("%w: scenario %q has baseline %v, want a finite number > 0", ErrECPConfig, s.Name, s.Baseline)
		}
		r := th / s.Baseline
		res.Ratios = append(res.Ratios, ECPRatio{Name: s.Name, Weight: s.Weight, Throughput: th, Baseline: s.Baseline, Ratio: r})
		values = append(values, r)
		weights = append(weights, s.Weight)
	}
	var extra []string
	for name := range measured {
		if !named[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		res.Warnings = append(res.Warnings, fmt.Sprintf("measured scenario %q is not in the scenario set S and is left out", name))
	}
	g, err := stats.WeightedGeometricMean(values, weights)
	if err != nil {
		return ECPResult{}, fmt.Errorf("%w: %w", ErrECPConfig, err)
	}
	res.Value = cfg.Alpha * g
	return res, nil
}
