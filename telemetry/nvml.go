//go:build linux && (amd64 || arm64)

package telemetry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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
// since the driver loaded in an unsigned 64-bit integer; Volta and later),
// as Zeus does, and the power and utilisation beside it. The counter's
// reading is the joules counted since the first read: a drop is a wrap of
// its 64 bits only when the rise it means is within the GPU's ceiling
// (PowerCeiling), which in practice it never is, so a drop is a driver
// reload or a reset; that step, or a rise above the ceiling, adds nothing
// and is a gap (SeriesGaps). A GPU without the counter is summed by its
// power readings instead.
type NVML struct {
	powerCeiling
	node    string
	devices []nvmlDevice
	mu      sync.Mutex

	getEnergy func(dev uintptr, mj *uint64) int32
	getPower  func(dev uintptr, mw *uint32) int32
	getUtil   func(dev uintptr, u *nvmlUtilization) int32
	getLimit  func(dev uintptr, mw *uint32) int32
	errString func(code int32) string
}

type nvmlDevice struct {
	handle uintptr
	name   string
	energy bool    // the energy counter answered at open
	limitW float64 // the enforced power limit at open, W; 0 when not supported

	seen  bool      // the counter was read before
	last  uint64    // its last raw value, mJ
	sum   uint64    // mJ counted since the first read
	lastT time.Time // when it was read last
}

// nvmlCounterRangeJ is the range of NVML's total energy counter: an
// unsigned 64-bit count of millijoules.
const nvmlCounterRangeJ = (1 << 64) / 1000.0

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
		{"nvmlDeviceGetUtilizationRates", &n.getUtil}, {"nvmlDeviceGetEnforcedPowerLimit", &n.getLimit},
		{"nvmlErrorString", &n.errString}, {"nvmlShutdown", &shutdownF},
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
		d := nvmlDevice{handle: h, name: fmt.Sprintf("gpu%d", i), energy: n.getEnergy(h, &mj) == 0}
		var mw uint32
		if n.getLimit(h, &mw) == 0 && mw > 0 {
			d.limitW = float64(mw) / 1000
		}
		n.devices = append(n.devices, d)
	}
	return n, nil
}

// PowerCeiling is a GPU's ceiling: its enforced power limit
// (nvmlDeviceGetEnforcedPowerLimit) times LimitMargin where the driver
// gives one, else the configured ceiling.
func (n *NVML) PowerCeiling(_, device string) float64 {
	for _, d := range n.devices {
		if d.name == device {
			return n.limitCeiling(d.limitW)
		}
	}
	return n.limitCeiling(0)
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

// Poll reads each GPU's energy counter (J since the first read), power (W)
// and utilisation (%). A function that fails for one GPU fails the read,
// naming it; a counter step it does not count is returned as SeriesGaps
// beside the readings.
func (n *NVML) Poll(context.Context) ([]Reading, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Reading
	var gaps SeriesGaps
	now := time.Now()
	for i := range n.devices {
		d := &n.devices[i]
		if d.energy {
			var mj uint64
			if rc := n.getEnergy(d.handle, &mj); rc != 0 {
				return nil, fmt.Errorf("nvml %s: nvmlDeviceGetTotalEnergyConsumption: %s (code %d)", d.name, n.errString(rc), rc)
			}
			if d.seen {
				if _, why := counterStep(float64(d.last)/1000, float64(mj)/1000, nvmlCounterRangeJ, now.Sub(d.lastT).Nanoseconds(), n.limitCeiling(d.limitW)); why == "" {
					d.sum += mj - d.last // a wrap of the 64 bits wraps here too
				} else {
					gaps = append(gaps, Gap{Node: n.node, Device: d.name, Kind: Energy, Reason: "nvmlDeviceGetTotalEnergyConsumption: " + why})
				}
			}
			d.seen, d.last, d.lastT = true, mj, now
			out = append(out, Reading{Node: n.node, Device: d.name, Kind: Energy, Value: float64(d.sum) / 1000})
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
	if gaps != nil {
		return out, gaps
	}
	return out, nil
}
