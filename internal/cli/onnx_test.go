//go:build onnx

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// needONNX fails the test without the environment of scripts/setup-onnx.sh:
// a build with the tag onnx is meant to run ONNX models.
func needONNX(t *testing.T) {
	t.Helper()
	for _, v := range []string{"AIMETER_ONNXRUNTIME_LIB", "AIMETER_OCR_MODELS"} {
		if os.Getenv(v) == "" {
			t.Fatalf("%s is not set: run eval \"$(scripts/setup-onnx.sh)\"", v)
		}
	}
}

// The GB/T scenario T13-1 (ocr-dbnet) runs end to end: an accuracy run
// meets the detection quality target (H-mean ≥ 0.85 at IoU 0.5) on a
// small generated set, each LoadGen scenario is VALID, and each GB/T
// arrival mode passes with the stage times of every sample (T_IPR, T_IN,
// T_IPO) in its result.
func TestOCRScenarioRuns(t *testing.T) {
	needONNX(t)
	base := []string{"run", "-q", "--scenario-id", "ocr-dbnet", "--ocr-images", "12", "--ocr-seed", "3"}
	run := func(t *testing.T, name string, args ...string) (cliResult, string) {
		dir := filepath.Join(t.TempDir(), name)
		r := runCLI(t, "", append(append(append([]string(nil), base...), "--output-dir", dir), args...)...)
		return r, dir
	}
	t.Run("accuracy", func(t *testing.T) {
		r, dir := run(t, "acc", "--scenario", "Offline", "--mode", "accuracy")
		if r.code != ExitOK || !strings.Contains(r.stdout, "text detection H-mean at IoU 0.5 (target 85%) PASS") {
			t.Fatalf("want the H-mean target met:\n%v", r)
		}
		var inv struct {
			SUT struct {
				Kind string `json:"kind"`
				ONNX struct {
					Workload    string `json:"workload"`
					ModelSHA256 string `json:"model_sha256"`
				} `json:"onnx"`
			} `json:"sut"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "invocation.json"))
		if err == nil {
			err = json.Unmarshal(b, &inv)
		}
		if err != nil || inv.SUT.Kind != "onnx" || inv.SUT.ONNX.Workload != "ocr-dbnet" || len(inv.SUT.ONNX.ModelSHA256) != 64 {
			t.Errorf("invocation.json does not record the onnx SUT, its workload and the model's digest: %s, %v", b, err)
		}
	})
	for _, sc := range []struct {
		scenario string
		set      []string
	}{
		// Enough queries for early stopping at the 90th percentile (64
		// at 99 % confidence), loads a loaded 2-core machine takes.
		{"SingleStream", []string{"min_duration=500", "min_query_count=64"}},
		{"MultiStream", []string{"min_duration=500", "min_query_count=64", "samples_per_query=2", "target_latency=50", "target_latency_percentile=90"}},
		{"Server", []string{"min_duration=1000", "min_query_count=64", "target_qps=15", "target_latency=3000", "target_latency_percentile=90"}},
		{"Offline", []string{"min_duration=500", "target_qps=100"}},
	} {
		t.Run(sc.scenario, func(t *testing.T) {
			args := []string{"--scenario", sc.scenario}
			for _, s := range sc.set {
				args = append(args, "--set", s)
			}
			r, dir := run(t, sc.scenario, args...)
			if r.code != ExitOK || !strings.Contains(r.stdout, "Result is : VALID") {
				t.Fatalf("want VALID:\n%v", r)
			}
			if _, err := os.Stat(filepath.Join(dir, "stages.parquet")); err != nil {
				t.Errorf("no stage times: %v", err)
			}
		})
	}
	for _, m := range []struct {
		mode string
		args []string
	}{
		{"0", []string{"--duration", "1s"}},
		{"1", []string{"--duration", "1s", "--period", "500ms", "--jobs-per-period", "1"}},
		{"2", []string{"--duration", "1s", "--lambda", "3", "--set", "min_query_count=2"}},
		{"3", []string{"--duration", "1s", "--lambda", "2", "--bursts", "1", "--burst-length", "200ms", "--burst-period", "100ms", "--burst-jobs", "1", "--set", "min_query_count=2"}},
		{"4", []string{"--set", "min_query_count=6"}},
		{"5", []string{"--duration", "1s", "--lambda", "3", "--mixed-lambda", "1", "--mixed-qsl-size", "4", "--set", "min_query_count=2"}},
	} {
		t.Run("arrival-mode-"+m.mode, func(t *testing.T) {
			r, dir := run(t, "gbt"+m.mode, append([]string{"--arrival-mode", m.mode}, m.args...)...)
			if r.code != ExitOK || !strings.Contains(r.stdout, "GB/T verdict: PASS") {
				t.Fatalf("want a passing GB/T test:\n%v", r)
			}
			for _, stage := range []string{"T_IPR", "T_IN ", "T_IPO"} {
				if !strings.Contains(r.stdout, stage) || strings.Contains(r.stdout, stage+"  -") {
					t.Errorf("no %s times:\n%s", stage, r.stdout)
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, "gbt_test.json"))
			if err != nil || !strings.Contains(string(b), `"T13-1"`) {
				t.Errorf("gbt_test.json does not name the scenario T13-1: %v\n%s", err, b)
			}
		})
	}
}

// Bad input names what is wrong and what provides it.
func TestONNXBadInput(t *testing.T) {
	needONNX(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.onnx")
	os.WriteFile(empty, []byte("not a model"), 0o644)
	for _, tc := range []struct {
		why  string
		args []string
		want string
	}{
		{"a model file that is not there", []string{"--sut", "onnx", "--onnx-model", filepath.Join(dir, "none.onnx")}, "none.onnx: no such file"},
		{"a file that is no model", []string{"--sut", "onnx", "--onnx-model", empty}, "empty.onnx"},
		{"an input the model lacks", []string{"--scenario-id", "T13-1", "--onnx-input", "image"}, `no input "image"; its inputs: x`},
		{"an output the model lacks", []string{"--scenario-id", "T13-1", "--onnx-output", "boxes"}, `no output "boxes"`},
		{"a scenario on another SUT", []string{"--scenario-id", "T13-1", "--sut", "reference"}, "--sut onnx, not --sut reference"},
		{"a model with dynamic dimensions fed random inputs", []string{"--sut", "onnx", "--onnx-model", filepath.Join(os.Getenv("AIMETER_OCR_MODELS"), "ch_PP-OCRv4_det_infer.onnx")}, "every dimension after the batch fixed"},
		{"the OCR flags elsewhere", []string{"--ocr-images", "3"}, "--ocr-images applies only to --sut onnx"},
	} {
		r := runCLI(t, dir, append([]string{"run", "-q", "--output-dir", filepath.Join(dir, "out")}, tc.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: want exit 2 naming %q, got %v", tc.why, tc.want, r)
		}
	}
}
