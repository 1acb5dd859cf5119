package derived

import (
	"fmt"
	"slices"
	"strings"

	"aimeter/bundle"
	"aimeter/gbt"
)

// ECPThroughput is the Table 18 throughput of a GB/T bundle
// (GB-7.6.4-T18-samples, GB-7.6.4-T18-tokens) as the effective computing power uses it: from the
// bundle's raw records (GBTMetrics), not from a gbt_result.json beside
// them, in samples/s, or output tokens/s with tokens, with its basis
// (gbt.Throughput.Basis: the T_DIP union or the tester-side span).
func (s *Set) ECPThroughput(tokens bool) (float64, string, error) {
	if gbt.TestOf(s.b) == nil {
		return 0, "", fmt.Errorf("not a GB/T run (no %s); run it with aimeter run --arrival-mode", bundle.GBTTestFile)
	}
	m, err := s.GBTMetrics()
	if err != nil {
		return 0, "", err
	}
	if tokens {
		return m.Throughput.TokensPerSecond, m.Throughput.Basis, nil
	}
	return m.Throughput.SamplesPerSecond, m.Throughput.Basis, nil
}

// ECPRun is one measured scenario of an effective computing power: the
// name of its scenario in the configuration, and its throughput with the
// basis it was measured on (Set.ECPThroughput).
type ECPRun struct {
	Name       string
	Throughput float64
	Basis      string
	// Label names the run in an ECPBasisError ("poisson=runs/poisson",
	// say); "" names it by Name.
	Label string
}

// ECPBasisError is the error of ECP given runs measured on different
// bases, which it cannot combine: Runs are the runs' labels by basis.
type ECPBasisError struct {
	Runs map[string][]string
}

// Error names the runs under each basis, the bases in order.
func (e *ECPBasisError) Error() string {
	bases := make([]string, 0, len(e.Runs))
	for b := range e.Runs {
		bases = append(bases, b)
	}
	slices.Sort(bases)
	parts := make([]string, len(bases))
	for i, b := range bases {
		parts[i] = b + ": " + strings.Join(e.Runs[b], ", ")
	}
	return "the runs' throughputs have different bases, which ECP cannot combine: " + strings.Join(parts, "; ")
}

// ECP is the effective computing power of GB/T 45087 Table 18
// (GB-7.6.4-T18-ecp): α times the weighted geometric mean of each
// scenario's throughput relative to its baseline in cfg
// (gbt.EffectiveComputingPower). Every run must have the same basis (a
// *ECPBasisError otherwise: Table 18's T_DIP union and the tester-side
// span are different figures); a configuration that does not fit the
// runs gives an error wrapping gbt.ErrECPConfig.
func ECP(cfg gbt.ECPConfig, runs []ECPRun) (gbt.ECPResult, error) {
	measured := make(map[string]float64, len(runs))
	byBasis := map[string][]string{}
	for _, r := range runs {
		measured[r.Name] = r.Throughput
		label := r.Label
		if label == "" {
			label = r.Name
		}
		byBasis[r.Basis] = append(byBasis[r.Basis], label)
	}
	if len(byBasis) > 1 {
		return gbt.ECPResult{}, &ECPBasisError{Runs: byBasis}
	}
	return gbt.EffectiveComputingPower(cfg, measured)
}
