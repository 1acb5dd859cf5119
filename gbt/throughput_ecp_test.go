package gbt

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readECP(t *testing.T, name string) ECPConfig {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "metrics", name))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseECPConfig(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return cfg
}

// TestEffectiveComputingPowerHandWorked: GB-7.6.4-T18-ecp with the formula
// of GB-6.6.4-T8-ThBar, computed as IN-33 says.
func TestEffectiveComputingPowerHandWorked(t *testing.T) {
	example := readECP(t, "ecp-example.json")
	notOne := readECP(t, "ecp-weights-not-one.json")
	rows := []struct {
		why      string
		cfg      ECPConfig
		measured map[string]float64
		want     float64
		warnings int
	}{
		{"ecp-example.json: r = 16000/1000 = 16 (τ 0.25), 200/200 = 1 (τ 0.75); the τ = 0 scenario is not measured (IN-33): 100 × 16^0.25 = 200",
			example, map[string]float64{"T11-1 ResNet-50 v1.5": 16000, "T11-6 BERT-large": 200}, 200, 0},
		{"a τ = 0 scenario that is measured does not count (IN-33)",
			example, map[string]float64{"T11-1 ResNet-50 v1.5": 16000, "T11-6 BERT-large": 200, "T11-8 chatGLM V2 6B": 1}, 200, 0},
		{"SUT equal to the reference: the score is α = 100 (IN-33)",
			example, map[string]float64{"T11-1 ResNet-50 v1.5": 1000, "T11-6 BERT-large": 200}, 100, 0},
		{"SUT at half the reference everywhere: 50",
			example, map[string]float64{"T11-1 ResNet-50 v1.5": 500, "T11-6 BERT-large": 100}, 50, 0},
		{"weights 0.2 + 0.2 ≠ 1: normalised by Σ τ (IN-33): r = 4, 1 → 100 × 4^(0.2/0.4) = 200, with a warning",
			notOne, map[string]float64{"a": 40, "b": 10}, 200, 1},
		{"a measured scenario outside S is left out with a warning",
			notOne, map[string]float64{"a": 40, "b": 10, "zzz": 3}, 200, 2},
		{"α = 2.5 scales the mean",
			ECPConfig{Alpha: 2.5, Scenarios: []ECPScenario{{Name: "x", Weight: 1, Baseline: 3}}}, map[string]float64{"x": 12}, 10, 0},
	}
	for _, row := range rows {
		res, err := EffectiveComputingPower(row.cfg, row.measured)
		if err != nil {
			t.Errorf("%s: %v", row.why, err)
			continue
		}
		if math.Abs(res.Value-row.want) > 1e-9*row.want || len(res.Warnings) != row.warnings {
			t.Errorf("%s: value %v warnings %q; want %v and %d warnings", row.why, res.Value, res.Warnings, row.want, row.warnings)
		}
	}
}

func TestEffectiveComputingPowerErrors(t *testing.T) {
	example := readECP(t, "ecp-example.json")
	rows := []struct {
		why      string
		cfg      ECPConfig
		measured map[string]float64
		want     string
	}{
		{"a weighted scenario has no measurement", example, map[string]float64{"T11-1 ResNet-50 v1.5": 1}, `no measured throughput for scenario "T11-6 BERT-large"`},
		{"zero throughput: r ≤ 0 is rejected (IN-33)", example, map[string]float64{"T11-1 ResNet-50 v1.5": 0, "T11-6 BERT-large": 1}, "want a finite number > 0"},
		{"negative throughput", example, map[string]float64{"T11-1 ResNet-50 v1.5": -5, "T11-6 BERT-large": 1}, "want a finite number > 0"},
		{"α = 0 (a hand-built config)", ECPConfig{Scenarios: example.Scenarios}, nil, "alpha is 0"},
		{"all weights zero (a hand-built config): Σ τ = 0 (IN-33)",
			ECPConfig{Alpha: 1, Scenarios: []ECPScenario{{Name: "x", Weight: 0, Baseline: 1}}}, map[string]float64{"x": 1}, "weights sum to 0"},
		{"zero baseline (a hand-built config)",
			ECPConfig{Alpha: 1, Scenarios: []ECPScenario{{Name: "x", Weight: 1, Baseline: 0}}}, map[string]float64{"x": 1}, "baseline 0"},
	}
	for _, row := range rows {
		_, err := EffectiveComputingPower(row.cfg, row.measured)
		if !errors.Is(err, ErrECPConfig) || !strings.Contains(err.Error(), row.want) {
			t.Errorf("%s: error %v, want ErrECPConfig containing %q", row.why, err, row.want)
		}
	}
}

// TestParseECPConfig: the file format of ECPConfig, one reason per row.
func TestParseECPConfig(t *testing.T) {
	const ok1 = `{"format":"aimeter-gbt-ecp/1","scenarios":[{"name":"a","weight":1,"baseline":5}]}`
	rows := []struct {
		why  string
		in   string
		want string // error substring; "" for success
	}{
		{"minimal file: α defaults to 100", ok1, ""},
		{"zero weights allowed next to a positive one (IN-33)", `{"format":"aimeter-gbt-ecp/1","scenarios":[{"name":"a","weight":0,"baseline":5},{"name":"b","weight":1,"baseline":5}]}`, ""},
		{"not JSON", `format: x`, "invalid character"},
		{"empty input", ``, "EOF"},
		{"a JSON array, not an object", `[]`, "cannot unmarshal array"},
		{"missing format", `{"scenarios":[{"name":"a","weight":1,"baseline":5}]}`, `missing "format"`},
		{"unknown format version", `{"format":"aimeter-gbt-ecp/2","scenarios":[]}`, `"format" is "aimeter-gbt-ecp/2"`},
		{"unknown member (typo)", `{"format":"aimeter-gbt-ecp/1","alfa":1,"scenarios":[]}`, `unknown field "alfa"`},
		{"unknown scenario member", `{"format":"aimeter-gbt-ecp/1","scenarios":[{"name":"a","weight":1,"baseline":5,"tau":1}]}`, `unknown field "tau"`},
		{"trailing data", ok1 + ` {}`, "data after the JSON object"},
		{"α = 0: α > 0 (GB-6.6.4-T8-ThBar)", `{"format":"aimeter-gbt-ecp/1","alpha":0,"scenarios":[{"name":"a","weight":1,"baseline":5}]}`, `"alpha" is 0`},
		{"negative α", `{"format":"aimeter-gbt-ecp/1","alpha":-1,"scenarios":[{"name":"a","weight":1,"baseline":5}]}`, `"alpha" is -1`},
		{"α too large for float64", `{"format":"aimeter-gbt-ecp/1","alpha":1e999,"scenarios":[{"name":"a","weight":1,"baseline":5}]}`, "cannot unmarshal"},
		{"no scenarios", `{"format":"aimeter-gbt-ecp/1","scenarios":[]}`, `"scenarios" is empty`},
		{"scenarios missing", `{"format":"aimeter-gbt-ecp/1"}`, `"scenarios" is empty`},
		{"scenario without name", `{"format":"aimeter-gbt-ecp/1","scenarios":[{"weight":1,"baseline":5}]}`, `scenario 0 has no "name"`},
		{"empty name", `{"format":"aimeter-gbt-ecp/1","scenarios":[{"name":"","weight":1,"baseline":5}]}`, `scenario 0 has no "name"`},
		{"duplicate name", `{"format":"aimeter-gbt-ecp/1","scenarios":[{"name":"a","weight":0.5,"baseline":5},{"name":"a","weight":0.5,"baseline":5}]}`, `"a" appears twice`},
		{"missing weight (no silent 0)", `{"format":"aimeter-gbt-ecp/1","scenarios":[{"name":"a","baseline":5}]}`, `has no "weight"`},
		{"weight above 1 (τ in [0, 1])", `{"format":"aimeter-gbt-ecp/1","scenarios":[{"name":"a","weight":1.5,"baseline":5}]}`, "weight 1.5"},
		{"negative weight (IN-33)", `{"format":"aimeter-gbt-ecp/1","scenarios":[{"name":"a","weight":-0.1,"baseline":5}]}`, "weight -0.1"},
		{"all weights zero (IN-33)", `{"format":"aimeter-gbt-ecp/1","scenarios":[{"name":"a","weight":0,"baseline":5}]}`, "weights sum to 0"},
		{"missing baseline", `{"format":"aimeter-gbt-ecp/1","scenarios":[{"name":"a","weight":1}]}`, `has no "baseline"`},
		{"zero baseline", `{"format":"aimeter-gbt-ecp/1","scenarios":[{"name":"a","weight":1,"baseline":0}]}`, "baseline 0"},
		{"weight as a string", `{"format":"aimeter-gbt-ecp/1","scenarios":[{"name":"a","weight":"1","baseline":5}]}`, "cannot unmarshal string"},
	}
	for _, row := range rows {
		cfg, err := ParseECPConfig([]byte(row.in))
		switch {
		case row.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", row.why, err)
		case row.want != "" && (err == nil || !strings.Contains(err.Error(), row.want)):
			t.Errorf("%s: error %v, want one containing %q", row.why, err, row.want)
		case row.want != "" && !errors.Is(err, ErrECPConfig):
			t.Errorf("%s: error %v does not wrap ErrECPConfig", row.why, err)
		case row.want == "" && cfg.Alpha != DefaultAlpha:
			t.Errorf("%s: alpha %v, want the default %v", row.why, cfg.Alpha, DefaultAlpha)
		}
	}
}

// FuzzParseECPConfig: the parser never panics; what it accepts satisfies the
// documented constraints, computes a finite value, and survives a JSON round
// trip unchanged.
func FuzzParseECPConfig(f *testing.F) {
	for _, name := range []string{"ecp-example.json", "ecp-weights-not-one.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "metrics", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"format":"aimeter-gbt-ecp/1","alpha":1e-300,"scenarios":[{"name":"a","weight":1e-300,"baseline":1e300}]}`))
	f.Add([]byte(`{"format":"aimeter-gbt-ecp/1","scenarios":[{"name":"\u0000","weight":0,"baseline":1},{"name":"b","weight":1,"baseline":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseECPConfig(data)
		if err != nil {
			if !errors.Is(err, ErrECPConfig) {
				t.Fatalf("error %v does not wrap ErrECPConfig", err)
			}
			return
		}
		if !(cfg.Alpha > 0) || math.IsInf(cfg.Alpha, 0) || len(cfg.Scenarios) == 0 || cfg.Format != ECPFormat {
			t.Fatalf("accepted an invalid config %+v", cfg)
		}
		wsum := 0.0
		measured := map[string]float64{}
		for _, s := range cfg.Scenarios {
			if s.Name == "" || !(s.Weight >= 0 && s.Weight <= 1) || !(s.Baseline > 0) || math.IsInf(s.Baseline, 0) {
				t.Fatalf("accepted an invalid scenario %+v", s)
			}
			wsum += s.Weight
			measured[s.Name] = s.Baseline
		}
		if !(wsum > 0) {
			t.Fatalf("accepted weights summing to %v", wsum)
		}
		// Measured = baseline everywhere: every ratio is 1, the value α.
		res, err := EffectiveComputingPower(cfg, measured)
		if err != nil {
			t.Fatalf("EffectiveComputingPower on an accepted config: %v", err)
		}
		if math.Abs(res.Value-cfg.Alpha) > 1e-9*cfg.Alpha {
			t.Fatalf("all ratios 1 gave %v, want α = %v", res.Value, cfg.Alpha)
		}
		out, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseECPConfig(out)
		if err != nil {
			t.Fatalf("re-parsing %s: %v", out, err)
		}
		if !reflect.DeepEqual(back, cfg) {
			t.Fatalf("round trip changed the config:\n%+v\n%+v", cfg, back)
		}
	})
}
