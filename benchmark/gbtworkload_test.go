package benchmark

import (
	"testing"

	"aimeter/gbt"
	"aimeter/sut"
)

func TestGBTWorkloads(t *testing.T) {
	for _, w := range GBTWorkloads() {
		if _, ok := gbt.Lookup(w.Scenario); !ok {
			t.Errorf("%s: not in the catalogue", w.Scenario)
		}
		if got, ok := GBTWorkloadOf(w.Scenario); !ok || got != w {
			t.Errorf("GBTWorkloadOf(%s) = %+v, %v", w.Scenario, got, ok)
		}
	}
	if w, ok := GBTWorkloadOf("ocr-dbnet"); !ok || w.Scenario != "T13-1" || w.Kind != sut.ONNX || w.Workload != sut.WorkloadOCRDBNet {
		t.Errorf("the alias ocr-dbnet: %+v, %v; want T13-1's DBNet workload", w, ok)
	}
	for _, id := range []string{"T11-1", "T9-9", ""} {
		if w, ok := GBTWorkloadOf(id); ok {
			t.Errorf("GBTWorkloadOf(%q) = %+v: aimeter does not run it", id, w)
		}
	}
	if w, _ := GBTWorkloadOf("T13-1"); w.Available() != ONNXAvailable {
		t.Errorf("T13-1 available %v in a build with ONNX Runtime %v", w.Available(), ONNXAvailable)
	}
}
