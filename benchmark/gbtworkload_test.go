package benchmark

import (
	"errors"
	"strings"
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

func TestCheckGBTScenario(t *testing.T) {
	ocr := sut.Config{Kind: sut.ONNX, ONNX: &sut.ONNXConfig{Workload: sut.WorkloadOCRDBNet}}
	for _, c := range []struct {
		name, id string
		cfg      sut.Config
		want     string // "" for none, else a part of the error
	}{
		{"no scenario", "", sut.Config{}, ""},
		{"not in the catalogue", "T99-9", ocr, `"T99-9": no such scenario`},
		{"a workload aimeter cannot run", "T11-2", sut.Config{}, "resnet50_v1.5 on imagenet2012, which aimeter cannot run yet; SUT.Kind null is not that workload"},
		{"another SUT", "T13-1", sut.Config{Kind: sut.Reference}, "runs on SUT.Kind onnx, not SUT.Kind reference"},
		{"another ONNX workload", "ocr-dbnet", sut.Config{Kind: sut.ONNX, ONNX: &sut.ONNXConfig{Model: "m.onnx"}}, `SUT.ONNX.Workload ocr-dbnet, not ""`},
	} {
		err := CheckGBTScenario(c.id, c.cfg)
		var ue *UsageError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "":
		case err == nil || !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		case !errors.As(err, &ue) || ue.Field != "GBT.Input.Scenario":
			t.Errorf("%s: error %#v is not a UsageError on GBT.Input.Scenario", c.name, err)
		}
	}
	err := CheckGBTScenario("T13-1", ocr)
	if ONNXAvailable && err != nil {
		t.Errorf("the scenario's own workload: %v", err)
	}
	if !ONNXAvailable && (err == nil || !strings.Contains(err.Error(), ONNXBuildHint)) {
		t.Errorf("a build without ONNX Runtime: error %v, want the build hint", err)
	}
	// Plan.Validate applies it to a GB/T test.
	p := Plan{OutputDir: "out", GBT: &GBT{Input: gbt.PlanInput{Arrival: gbt.Arrival{Mode: gbt.ModePoisson}, Scenario: "T13-1"}}}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "not SUT.Kind null") {
		t.Errorf("Plan.Validate of a null SUT labelled T13-1: %v", err)
	}
}
