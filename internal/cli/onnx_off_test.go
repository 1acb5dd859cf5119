//go:build !onnx

package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A build without the tag onnx still knows --sut onnx and T13-1, and says
// how to get them: nothing runs, exit 2, the build command named.
func TestONNXNeedsTheBuildTag(t *testing.T) {
	for _, args := range [][]string{
		{"--sut", "onnx", "--onnx-workload", "ocr-dbnet"},
		{"--sut", "onnx", "--onnx-model", "model.onnx"},
		{"--scenario-id", "ocr-dbnet"},
		{"--scenario-id", "T13-1", "--arrival-mode", "2"},
	} {
		dir := t.TempDir()
		r := runCLI(t, dir, append([]string{"run", "-q", "--output-dir", filepath.Join(dir, "out")}, args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "-tags onnx") || !strings.Contains(r.stderr, "setup-onnx.sh") {
			t.Errorf("%q: want exit 2 naming -tags onnx and scripts/setup-onnx.sh, got %v", args, r)
		}
	}
}

// Counts below 1 are refused before anything runs, naming the flag.
func TestONNXCountsRefused(t *testing.T) {
	for _, flag := range []string{"--onnx-threads", "--onnx-batch", "--onnx-workers", "--ocr-images"} {
		r := runCLI(t, "", "run", "-q", "--sut", "onnx", "--onnx-workload", "ocr-dbnet", flag, "0")
		if r.code != ExitUsage || !strings.Contains(r.stderr, flag+" 0: must be ≥ 1") {
			t.Errorf("%s 0: want exit 2 naming the flag, got %v", flag, r)
		}
	}
}
