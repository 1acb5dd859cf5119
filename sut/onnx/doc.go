// Package onnx is a system under test that runs an ONNX model in process
// through ONNX Runtime (github.com/yalue/onnxruntime_go, cgo over the
// runtime's shared library, loaded at run time). It batches samples of the
// same input shape for Offline and Server, runs one session with a chosen
// number of intra-op threads, and reports the time of every sample's
// stages (pre-processing, inference, post-processing: GB/T 45087 T_IPR,
// T_IN, T_IPO) on the run's clock.
//
// What a sample is, and what its answer is, belongs to a Task: the DBNet
// text detector of the GB/T scenario T13-1 (package sut/onnx/dbnet) or
// seeded random tensors for any model.
//
// The package needs the build tag "onnx" and cgo; scripts/setup-onnx.sh
// fetches the runtime library (ONNX Runtime 1.30.0) and prints the
// AIMETER_ONNXRUNTIME_LIB that points at it.
//
// In a build without the tag the package holds only this documentation;
// package benchmark then refuses --sut onnx with the command that enables it.
package onnx
