//go:build linux && (amd64 || arm64)

package telemetry

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ebitengine/purego"
)

// DefaultNVMLLibrary is the NVIDIA driver's management library, loaded at
// run time so that one binary runs on hosts with and without a GPU.
const DefaultNVMLLibrary = "libnvidia-ml.so.1"

// ErrNoNVML says that this host has no NVML: no NVIDIA driver, or no GPU.
var ErrNoNVML = errors.New("no NVML on this host (libnvidia-ml.so.1 not found: no NVIDIA driver)")

// NVML is a Poller of NVIDIA GPUs through the driver's NVML library,
// loaded at run time without cgo (purego). Per GPU (device gpuN) it reads
// the total energy counter first (nvmlDeviceGetTotalEnergyConsumption, mJ
// since the driver loaded; Volta and later), as Zeus does, and the power
// and utilisation beside it. A GPU without the counter is summed by its
// power readings instead.
type NVML struct {
	node    string
	devices []nvmlDevice
	mu      sync.Mutex

	getEnergy func(dev uintptr, mj *uint64) int32
	getPower  func(dev uintptr, mw *uint32) int32
	getUtil   func(dev uintptr, u *nvmlUtilization) int32
	errString func(code int32) string
}

type nvmlDevice struct {
	handle uintptr
	name   string
	energy bool // the energy counter answered at open
}

// nvmlUtilization is nvmlUtilization_t.
type nvmlUtilization struct {
	GPU    uint32
	Memory uint32
}

// nvmlNotSupported is NVML_ERROR_NOT_SUPPORTED.
const nvmlNotSupported = 3

// OpenNVML loads library (DefaultNVMLLibrary when ""), checks that every
// function it needs is there, initialises NVML and finds the GPUs; node
// names this machine in the readings. Without the library it returns an
// error wrapping ErrNoNVML.
func OpenNVML(library, node string) (*NVML, error) {
	if library == "" {
		library = DefaultNVMLLibrary
	}
	lib, err := purego.Dlopen(library, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("nvml: %w: %v", ErrNoNVML, err)
	}
	var (
		initFn    func() int32
		countFn   func(n *uint32) int32
		handleFn  func(i uint32, dev *uintptr) int32
		shutdownF func() int32
	)
	n := &NVML{node: node}
	for _, f := range []struct {
		name string
		fn   any
	}{
		{"nvmlInit_v2", &initFn}, {"nvmlDeviceGetCount_v2", &countFn}, {"nvmlDeviceGetHandleByIndex_v2", &handleFn},
		{"nvmlDeviceGetTotalEnergyConsumption", &n.getEnergy}, {"nvmlDeviceGetPowerUsage", &n.getPower},
		{"nvmlDeviceGetUtilizationRates", &n.getUtil}, {"nvmlErrorString", &n.errString}, {"nvmlShutdown", &shutdownF},
	} {
		sym, err := purego.Dlsym(lib, f.name)
		if err != nil {
			return nil, fmt.Errorf("nvml: %s has no %s (a driver too old for aimeter): %v", library, f.name, err)
		}
		purego.RegisterFunc(f.fn, sym)
	}
	if rc := initFn(); rc != 0 {
		return nil, fmt.Errorf("nvml: nvmlInit_v2: %s (code %d)", n.errString(rc), rc)
	}
	var count uint32
	if rc := countFn(&count); rc != 0 {
		return nil, fmt.Errorf("nvml: nvmlDeviceGetCount_v2: %s (code %d)", n.errString(rc), rc)
	}
	if count == 0 {
		shutdownF()
		return nil, fmt.Errorf("nvml: %w: the driver sees no GPU", ErrNoNVML)
	}
	for i := range count {
		var h uintptr
		if rc := handleFn(i, &h); rc != 0 {
			return nil, fmt.Errorf("nvml: GPU %d: nvmlDeviceGetHandleByIndex_v2: %s (code %d)", i, n.errString(rc), rc)
		}
		var mj uint64
		n.devices = append(n.devices, nvmlDevice{handle: h, name: fmt.Sprintf("gpu%d", i), energy: n.getEnergy(h, &mj) == 0})
	}
	return n, nil
}

// Name is "nvml".
func (*NVML) Name() string { return "nvml" }

// Spec is "nvml".
func (*NVML) Spec() string { return "nvml" }

// Notes says which GPUs lack the energy counter.
func (n *NVML) Notes() []string {
	var out []string
	for _, d := range n.devices {
		if !d.energy {
			out = append(out, d.name+" has no total energy counter (before Volta): its energy is integrated power")
		}
	}
	return out
}

// Devices lists the GPUs read, gpu0 first.
func (n *NVML) Devices() []string {
	out := make([]string, len(n.devices))
	for i, d := range n.devices {
		out[i] = d.name
	}
	return out
}

// Poll reads each GPU's energy counter (J), power (W) and utilisation (%).
// A function that fails for one GPU fails the read, naming it.
func (n *NVML) Poll(context.Context) ([]Reading, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Reading
	for _, d := range n.devices {
		if d.energy {
			var mj uint64
			if rc := n.getEnergy(d.handle, &mj); rc != 0 {
				return nil, fmt.Errorf("nvml %s: nvmlDeviceGetTotalEnergyConsumption: %s (code %d)", d.name, n.errString(rc), rc)
			}
			out = append(out, Reading{Node: n.node, Device: d.name, Kind: Energy, Value: float64(mj) / 1000})
		}
		var mw uint32
		if rc := n.getPower(d.handle, &mw); rc == 0 {
			out = append(out, Reading{Node: n.node, Device: d.name, Kind: Power, Value: float64(mw) / 1000})
		} else if rc != nvmlNotSupported {
			return nil, fmt.Errorf("nvml %s: nvmlDeviceGetPowerUsage: %s (code %d)", d.name, n.errString(rc), rc)
		}
		var u nvmlUtilization
		if rc := n.getUtil(d.handle, &u); rc == 0 {
			out = append(out, Reading{Node: n.node, Device: d.name, Kind: Utilization, Value: float64(u.GPU)})
		} else if rc != nvmlNotSupported {
			return nil, fmt.Errorf("nvml %s: nvmlDeviceGetUtilizationRates: %s (code %d)", d.name, n.errString(rc), rc)
		}
	}
	return out, nil
}
