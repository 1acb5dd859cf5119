package sut

import (
	"slices"
	"strings"
	"testing"
)

func TestHeaders(t *testing.T) {
	for name, secret := range map[string]bool{"Authorization": true, "x-api-key": true, "Cookie": true, "X-Auth-Token": true,
		"X-Tenant": false, "User-Agent": false, "OpenAI-Organization": false} {
		if IsSecretHeader(name) != secret {
			t.Errorf("IsSecretHeader(%q) = %v", name, !secret)
		}
	}
	o := &OpenAIConfig{Headers: []string{"X-Tenant: blue", "x-tenant:green", "Authorization: Bearer sk-1"}}
	h, err := o.HTTPHeader()
	if err != nil || strings.Join(h.Values("X-Tenant"), ",") != "blue,green" || h.Get("Authorization") != "Bearer sk-1" {
		t.Fatalf("HTTPHeader: %v %v", h, err)
	}
	c := Config{Kind: OpenAI, Net: Net{URLs: []string{"http://u:p@h"}}, OpenAI: o}
	r := c.Redacted()
	if got := strings.Join(r.OpenAI.Headers, "|"); got != "X-Tenant: blue|x-tenant:green|Authorization: REDACTED" {
		t.Errorf("redacted headers %q", got)
	}
	if o.Headers[2] != "Authorization: Bearer sk-1" {
		t.Error("Redacted changed the original")
	}
	if err := r.Validate(); err == nil || err.Error() != `--header "Authorization": its value looks secret and was not recorded with the run; give --header again` {
		t.Errorf("a redacted header: %v", err)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestValidateOpenAIOptions(t *testing.T) {
	neg := -1.0
	for _, tc := range []struct {
		o    OpenAIConfig
		want string
	}{
		{OpenAIConfig{Headers: []string{"no colon"}}, `--header "no colon": want "Name: value"`},
		{OpenAIConfig{Headers: []string{": v"}}, `--header ": v": want "Name: value"`},
		{OpenAIConfig{ExtraBody: `[1]`}, `--extra-body "[1]": want a JSON object`},
		{OpenAIConfig{ExtraBody: `{"a":`}, `--extra-body`},
		{OpenAIConfig{ExtraBody: `null`}, `--extra-body`},
		{OpenAIConfig{Temperature: &neg}, `--temperature "-1": want a finite number ≥ 0`},
		{OpenAIConfig{HTTPClient: "h2"}, `--http-client "h2": want auto, h1 or net/http`},
		{OpenAIConfig{Prompts: "p.jsonl", InputLengths: "uniform:1:4"}, `--input-lengths "uniform:1:4": applies to synthetic prompts`}, // the file gives the texts
		{OpenAIConfig{Prompts: "p.jsonl", OutputLengths: "hist:o.csv"}, `--output-lengths "hist:o.csv": applies to synthetic prompts`}, // the file gives max_tokens
		{OpenAIConfig{InputLengths: "uniform:9:2"}, `--input-lengths "uniform:9:2"`},                                                   // refused before the run contacts the server
		{OpenAIConfig{OutputLengths: "normal:x:1"}, `--output-lengths "normal:x:1"`},                                                   // not a number
		{OpenAIConfig{InputLengths: "hist:/nonexistent/lengths.csv"}, `--input-lengths "hist:/nonexistent/lengths.csv"`},               // no such file
	} {
		c := Config{Kind: OpenAI, Net: Net{URLs: []string{"http://h"}}, OpenAI: &tc.o}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}

func TestValidateONNX(t *testing.T) {
	for _, tc := range []struct {
		why  string
		c    Config
		want string // in the error; "" = valid
	}{
		{"the OCR workload needs no model", Config{Kind: ONNX, ONNX: &ONNXConfig{Workload: WorkloadOCRDBNet}}, ""},
		{"any model fed random inputs", Config{Kind: ONNX, ONNX: &ONNXConfig{Model: "m.onnx"}, QSLSize: 10}, ""},
		{"no options at all", Config{Kind: ONNX}, "--sut onnx needs --onnx-model"},
		{"neither model nor workload", Config{Kind: ONNX, ONNX: &ONNXConfig{IntraOpThreads: 2}}, "--sut onnx needs --onnx-model"},
		{"an unknown workload", Config{Kind: ONNX, ONNX: &ONNXConfig{Workload: "ocr"}}, `--onnx-workload "ocr": want ocr-dbnet`},
		{"negative threads", Config{Kind: ONNX, ONNX: &ONNXConfig{Model: "m", IntraOpThreads: -1}}, "--onnx-threads"},
		{"negative batch", Config{Kind: ONNX, ONNX: &ONNXConfig{Model: "m", MaxBatch: -2}}, "--onnx-batch"},
		{"negative workers", Config{Kind: ONNX, ONNX: &ONNXConfig{Model: "m", Workers: -1}}, "--onnx-workers"},
		{"negative images", Config{Kind: ONNX, ONNX: &ONNXConfig{Workload: WorkloadOCRDBNet, Images: -1}}, "--ocr-images"},
		{"tiny images", Config{Kind: ONNX, ONNX: &ONNXConfig{Workload: WorkloadOCRDBNet, ImageSize: 10}}, "--ocr-image-size"},
		{"a QSL size beside generated images", Config{Kind: ONNX, ONNX: &ONNXConfig{Workload: WorkloadOCRDBNet}, QSLSize: 5}, "--ocr-images"},
	} {
		err := tc.c.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Validate() = %v, want %q", tc.why, err, tc.want)
		}
	}
	var k Kind = "onnx"
	if !slices.Contains(Kinds(), k) || k.IsNetwork() {
		t.Errorf("Kinds() %v should list onnx, an in-process kind", Kinds())
	}
}

func TestParseShapes(t *testing.T) {
	got, err := ParseShapes([]string{"INPUT0:3,224,224", "ns:name:1"})
	if err != nil || len(got) != 2 || len(got["INPUT0"]) != 3 || got["INPUT0"][2] != 224 || got["ns:name"][0] != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
	if got, err := ParseShapes(nil); got != nil || err != nil {
		t.Errorf("no shapes: got %v, %v; want nil", got, err)
	}
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"INPUT0"}, `"INPUT0": want NAME:d1,d2,…`},
		{[]string{":3"}, `":3": want`},
		{[]string{"x:"}, `"x:": want`},
		{[]string{"x:1", "x:2"}, "x given twice"},
		{[]string{"x:0"}, `"x:0": dimension "0" is not an integer ≥ 1`},
		{[]string{"x:1,a"}, `dimension "a"`},
	} {
		if _, err := ParseShapes(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseShapes(%q): %v; want %q", c.in, err, c.want)
		}
	}
}
