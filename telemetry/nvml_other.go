//go:build !(linux && (amd64 || arm64))

package telemetry

import (
	"context"
	"errors"
)

// DefaultNVMLLibrary is the NVIDIA driver's management library.
const DefaultNVMLLibrary = "libnvidia-ml.so.1"

// ErrNoNVML says that this host has no NVML.
var ErrNoNVML = errors.New("no NVML on this host (aimeter reads NVML on Linux amd64 and arm64 only)")

// NVML is the NVML source, which this platform does not have.
type NVML struct{ powerCeiling }

// OpenNVML fails with ErrNoNVML on this platform.
func OpenNVML(library, node string) (*NVML, error) { return nil, ErrNoNVML }

// Name is "nvml".
func (*NVML) Name() string { return "nvml" }

// Spec is "nvml".
func (*NVML) Spec() string { return "nvml" }

// Notes is empty.
func (*NVML) Notes() []string { return nil }

// Devices is empty.
func (*NVML) Devices() []string { return nil }

// Poll fails with ErrNoNVML.
func (*NVML) Poll(context.Context) ([]Reading, error) { return nil, ErrNoNVML }
