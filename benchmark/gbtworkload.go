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
