package benchmark

import (
	"errors"
	"strings"
	"testing"

	"aimeter/sut"
)

// TestBandwidthValidation: the declarations of the bandwidth check and the
// compression are refused before the run, each naming its field and why.
func TestBandwidthValidation(t *testing.T) {
	kserve := func(model, in, out, comp string, grpc bool) Plan {
		return Plan{OutputDir: "x", Settings: Settings{Model: model}, InputDType: in, OutputDType: out,
			SUT: sut.Config{Kind: sut.KServe, Net: sut.Net{URLs: []string{"http://127.0.0.1:1"}},
				KServe: &sut.KServeConfig{Compression: comp, GRPC: grpc}}}
	}
	for _, c := range []struct {
		why         string
		p           Plan
		field, want string
	}{
		{"a data type no one knows", kserve("resnet50", "fp33", "", "", false), "InputDType", `data type "fp33"`},
		{"an output data type no one knows", kserve("3d-unet", "fp32", "half", "", false), "OutputDType", `data type "half"`},
		{"a model the table does not have", kserve("whisper", "fp32", "", "", false), "InputDType", `benchmark "whisper": not a benchmark of the MLPerf datacenter bandwidth table (known: resnet50, retinanet, 3d-unet`},
		{"no model at all", kserve("", "int8", "", "", false), "InputDType", `benchmark "": not a benchmark`},
		{"GPT-J forbids compression", kserve("gptj", "", "", "lossless", false), "SUT.KServe.Compression", "compression lossless is not allowed for GPT-J"},
		{"SDXL forbids compression", kserve("stable-diffusion-xl", "", "", "lossless", false), "SUT.KServe.Compression", "not allowed for SDXL"},
		{"3D U-Net has no original compression", kserve("3d-unet", "", "", "original", false), "SUT.KServe.Compression", "allow none, lossless"},
		{"a codec that is no option", kserve("", "", "", "zstd", false), "SUT.KServe.Compression", `compression "zstd"`},
		{"gRPC compresses in the timed path", kserve("resnet50", "", "", "lossless", true), "SUT.KServe.Compression", "needs HTTP"},
	} {
		err := c.p.Validate()
		var ue *UsageError
		if !errors.As(err, &ue) || ue.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a usage error of %s with %q", c.why, err, c.field, c.want)
		}
	}
	for _, p := range []Plan{
		kserve("resnet50", "fp32", "", "original", false),
		kserve("dlrm-v2", "fp16,int32", "", "lossless", false),
		kserve("", "", "", "lossless", false), // no benchmark of the rules: nothing forbids it
		kserve("gptj", "int64", "", "none", false),
	} {
		if err := p.Validate(); err != nil {
			t.Errorf("%s %s %s: %v", p.Settings.Model, p.InputDType, p.SUT.KServe.Compression, err)
		}
	}
	d := kserve("", "", "", "lossless", false)
	d.SUT.Kind, d.SUT.Dispatch = sut.Dispatch, &sut.DispatchConfig{Backend: "kserve"}
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "needs SUT.Kind kserve") {
		t.Errorf("a dispatcher with compression: %v", err)
	}
}
