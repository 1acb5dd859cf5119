//go:build !onnx

package benchmark

// ONNXAvailable reports whether this build runs ONNX models (the build
// tag onnx).
const ONNXAvailable = false

// ONNXBuildHint says how to build aimeter with ONNX Runtime.
const ONNXBuildHint = "this aimeter was built without ONNX Runtime; build it with the tag onnx and cgo (CGO_ENABLED=1 go build -tags onnx ./cmd/aimeter) and fetch the runtime and models with eval \"$(scripts/setup-onnx.sh)\""

// openONNX refuses the onnx SUT in a build without the tag onnx.
func (r *runner) openONNX(*opened) error {
	return usage("SUT.Kind", "SUT.Kind onnx: %s", ONNXBuildHint)
}
