package benchmark

import (
	"aimeter/gbt"
	"aimeter/sut"
)

// GBTWorkload is a GB/T 45087 inference scenario of Tables 11–14 whose
// workload (model and data set) aimeter runs: a run may carry the
// scenario's label (GBT.Input.Scenario) only if it ran that workload.
type GBTWorkload struct {
	// Scenario is the scenario's ID in the catalogue (gbt.Catalogue).
	Scenario string
	// Kind is the SUT that runs the workload (SUT.Kind).
	Kind sut.Kind
	// Workload is that SUT's workload (SUT.ONNX.Workload).
	Workload string
}

// GBTWorkloads are the scenarios whose workload aimeter runs, by ID.
// Every other scenario of the catalogue names a workload no SUT of
// aimeter's is yet.
func GBTWorkloads() []GBTWorkload {
	return []GBTWorkload{{Scenario: "T13-1", Kind: sut.ONNX, Workload: sut.WorkloadOCRDBNet}}
}

// GBTWorkloadOf is the workload of the scenario id (an ID or an alias, as
// gbt.Lookup takes), and false for a scenario aimeter cannot run or one
// the catalogue lacks.
func GBTWorkloadOf(id string) (GBTWorkload, bool) {
	spec, ok := gbt.Lookup(id)
	if !ok {
		return GBTWorkload{}, false
	}
	for _, w := range GBTWorkloads() {
		if w.Scenario == spec.ID {
			return w, true
		}
	}
	return GBTWorkload{}, false
}

// Available reports whether this build can run w: an ONNX workload needs
// a build with ONNX Runtime (ONNXAvailable).
func (w GBTWorkload) Available() bool { return w.Kind != sut.ONNX || ONNXAvailable }

// CheckGBTScenario checks that a run of the SUT cfg may carry the label of
// the GB/T scenario id (GBT.Input.Scenario; "" passes): the scenario is in
// Tables 11–14, aimeter runs its workload (GBTWorkloads), cfg is that
// workload's SUT and this build can run it. A scenario names a workload
// (model and data set), so a run of any other SUT may not carry its label.
// The error is a *UsageError on GBT.Input.Scenario. Plan.Validate applies
// it to a plan's GB/T test; a caller that lets the scenario choose the
// workload without a GB/T test calls it itself.
func CheckGBTScenario(id string, cfg sut.Config) error {
	if id == "" {
		return nil
	}
	const field = "GBT.Input.Scenario"
	spec, ok := gbt.Lookup(id)
	if !ok {
		return usage(field, "%s %q: no such scenario in Tables 11–14 (see aimeter scenarios)", field, id)
	}
	kind := cfg.KindOrNull()
	w, ok := GBTWorkloadOf(id)
	if !ok {
		model, data := spec.Model, spec.Dataset
		if model == "" {
			model = "a model of the tested party's choice (open mode)"
		}
		if data == "" {
			data = "the tester's data set"
		}
		return usage(field, "%s %s: that scenario's workload is %s on %s, which aimeter cannot run yet; SUT.Kind %s is not that workload, so its results may not carry the scenario's label. Run without %s (use GBT.Input.TimeoutClass for the Table 10 threshold)",
			field, spec.ID, model, data, kind, field)
	}
	if kind != w.Kind {
		return usage(field, "%s %s: that scenario's workload runs on SUT.Kind %s, not SUT.Kind %s", field, w.Scenario, w.Kind, kind)
	}
	workload := ""
	if cfg.ONNX != nil {
		workload = cfg.ONNX.Workload
	}
	if workload != w.Workload {
		return usage(field, "%s %s: that scenario's workload is SUT.ONNX.Workload %s, not %q", field, w.Scenario, w.Workload, workload)
	}
	if !w.Available() {
		return usage(field, "%s %s: %s", field, w.Scenario, ONNXBuildHint)
	}
	return nil
}
