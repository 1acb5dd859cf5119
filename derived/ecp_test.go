package derived

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"aimeter/bundle"
	"aimeter/gbt"
	"aimeter/loadgen"
	"aimeter/loadgen/loadgentest"
)

// TestECPHandWorked: α = 100, two scenarios of weight 0.5 with baselines
// 10 and 40 samples/s, measured at 20 and 10: ratios 2 and 0.25, their
// weighted geometric mean √(2 × 0.25) = √0.5, and ECP = 100 × √0.5 ≈
// 70.71 (GB-7.6.4-T18-ecp).
func TestECPHandWorked(t *testing.T) {
	cfg := gbt.ECPConfig{Format: gbt.ECPFormat, Alpha: 100, Scenarios: []gbt.ECPScenario{
		{Name: "poisson", Weight: 0.5, Baseline: 10}, {Name: "fixed", Weight: 0.5, Baseline: 40}}}
	u := gbt.BasisTDIPUnion
	res, err := ECP(cfg, []ECPRun{{"poisson", 20, u, ""}, {"fixed", 10, u, ""}})
	if err != nil {
		t.Fatal(err)
	}
	if want := 100 * math.Sqrt(0.5); math.Abs(res.Value-want) > 1e-9 || res.Alpha != 100 {
		t.Errorf("ECP = %v (α %v), want %v", res.Value, res.Alpha, want)
	}
	if len(res.Ratios) != 2 || res.Ratios[0].Ratio != 2 || res.Ratios[1].Ratio != 0.25 {
		t.Errorf("ratios %+v, want 2 and 0.25", res.Ratios)
	}

	// Runs on two bases are refused, each named under its own: by its
	// label where it has one.
	_, err = ECP(cfg, []ECPRun{{"poisson", 20, u, ""}, {"fixed", 10, gbt.BasisTesterSpan, "fixed=runs/f"}})
	var be *ECPBasisError
	if !errors.As(err, &be) || !slices.Equal(be.Runs[u], []string{"poisson"}) || !slices.Equal(be.Runs[gbt.BasisTesterSpan], []string{"fixed=runs/f"}) ||
		!strings.Contains(err.Error(), "poisson") || !strings.Contains(err.Error(), "fixed=runs/f") {
		t.Errorf("mixed bases: %v, want an ECPBasisError naming both runs", err)
	}

	// A weighted scenario without a run does not fit the configuration.
	if _, err := ECP(cfg, []ECPRun{{"poisson", 20, u, ""}}); !errors.Is(err, gbt.ErrECPConfig) {
		t.Errorf("a missing scenario: %v, want gbt.ErrECPConfig", err)
	}
}

// TestECPThroughputNeedsGBT: an MLPerf run has no Table 18 throughput.
func TestECPThroughputNeedsGBT(t *testing.T) {
	b := runBundle(t, &loadgentest.WireSUT{}, loadgentest.SmallSettings(loadgen.Offline, loadgen.PerformanceOnly))
	if _, _, err := Of(b).ECPThroughput(false); err == nil || !strings.Contains(err.Error(), bundle.GBTTestFile) {
		t.Errorf("ECPThroughput of an MLPerf run: %v, want an error naming %s", err, bundle.GBTTestFile)
	}
}
