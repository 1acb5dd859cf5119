package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultPowercap is where Linux exposes RAPL.
const DefaultPowercap = "/sys/class/powercap"

// RAPL is a Poller of Intel and AMD RAPL energy counters through Linux
// powercap: the package domains (intel-rapl:N, named package-N) and their
// DRAM subdomains (intel-rapl:N:M named dram), read from energy_uj. Each
// reading is an Energy counter in joules since the first read. A drop of
// energy_uj is counted as the counter's wrap at max_energy_range_uj only
// when the rise it means is within the domain's ceiling (PowerCeiling)
// over the time between the reads; any other drop (a reset, a backwards
// step) or a rise above the ceiling adds nothing and is a gap (Poll
// returns SeriesGaps). Since Linux 5.10 (the fix for the PLATYPUS attack)
// energy_uj is readable by root only.
type RAPL struct {
	powerCeiling
	node    string
	domains []raplDomain

	mu    sync.Mutex
	last  []uint64 // last raw value per domain, µJ
	sum   []uint64 // µJ counted since the first read
	lastT time.Time
	seen  bool
}

type raplDomain struct {
	device   string  // "package-0" or "package-0/dram"
	energy   string  // path of energy_uj
	maxRange uint64  // max_energy_range_uj
	limitW   float64 // constraint_0_max_power_uw in W, 0 where not given
}

// OpenRAPL finds the package and DRAM domains under root (DefaultPowercap
// when ""), checks that each energy_uj can be read, and returns the
// source; node names the machine in its readings. It fails with a clear
// message when there is no RAPL or the files are root-only.
func OpenRAPL(root, node string) (*RAPL, error) {
	if root == "" {
		root = DefaultPowercap
	}
	zones, _ := filepath.Glob(filepath.Join(root, "intel-rapl:*"))
	slices.Sort(zones)
	r := &RAPL{node: node}
	pkgName := map[string]string{}
	for _, z := range zones {
		base := filepath.Base(z)
		name, err := readTrim(filepath.Join(z, "name"))
		if err != nil {
			return nil, fmt.Errorf("rapl: %w", err)
		}
		parts := strings.Split(strings.TrimPrefix(base, "intel-rapl:"), ":")
		var device string
		switch {
		case len(parts) == 1 && strings.HasPrefix(name, "package-"):
			device = name
			pkgName[parts[0]] = name
		case len(parts) == 2 && name == "dram":
			pkg := pkgName[parts[0]]
			if pkg == "" {
				pkg = "package-" + parts[0]
			}
			device = pkg + "/dram"
		default:
			continue // core, uncore, psys: not counted (inside a package, or the whole platform)
		}
		maxText, err := readTrim(filepath.Join(z, "max_energy_range_uj"))
		if err != nil {
			return nil, fmt.Errorf("rapl %s: %w", device, err)
		}
		maxRange, err := strconv.ParseUint(maxText, 10, 64)
		if err != nil || maxRange == 0 {
			return nil, fmt.Errorf("rapl %s: max_energy_range_uj %q: want a positive integer", device, maxText)
		}
		d := raplDomain{device: device, energy: filepath.Join(z, "energy_uj"), maxRange: maxRange}
		// The largest power the domain's first constraint allows, where
		// the kernel says (not every domain has one, nor every kernel).
		if uw, err := readCounter(filepath.Join(z, "constraint_0_max_power_uw")); err == nil && uw > 0 {
			d.limitW = float64(uw) / 1e6
		}
		if _, err := readCounter(d.energy); err != nil {
			return nil, raplReadError(device, d.energy, err)
		}
		r.domains = append(r.domains, d)
	}
	if len(r.domains) == 0 {
		return nil, fmt.Errorf("rapl: no package domain under %s (no RAPL on this host: a VM, a container without /sys/class/powercap, or a CPU without RAPL)", root)
	}
	r.last = make([]uint64, len(r.domains))
	r.sum = make([]uint64, len(r.domains))
	return r, nil
}

// raplReadError explains a failed first read of energy_uj, with a note on
// what to do when the file is root-only.
func raplReadError(device, path string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("rapl %s: %s is readable by root only (Linux 5.10 and later): run as root, or let this user read it (for example chmod o+r on each energy_uj): %w", device, path, err)
	}
	return fmt.Errorf("rapl %s: %w", device, err)
}

func readTrim(path string) (string, error) {
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

func readCounter(path string) (uint64, error) {
	s, err := readTrim(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a whole number of µJ", path, s)
	}
	return v, nil
}

// CounterDelta is the increase of a counter that wraps to 0 after
// maxRange (RAPL's max_energy_range_uj): cur − prev, or cur + maxRange −
// prev when the counter wrapped (cur < prev). It assumes at most one wrap
// between two reads, which holds at 1 Hz (a wrap takes minutes at the
// largest powers); whether a drop is a wrap at all is the caller's to
// judge (RAPL.Poll counts it only when the rise is within the domain's
// ceiling).
func CounterDelta(prev, cur, maxRange uint64) uint64 {
	if cur >= prev {
		return cur - prev
	}
	return cur + maxRange - prev
}

// Name is "rapl".
func (*RAPL) Name() string { return "rapl" }

// Spec is "rapl".
func (*RAPL) Spec() string { return "rapl" }

// Devices lists the domains read, e.g. package-0 and package-0/dram.
func (r *RAPL) Devices() []string {
	out := make([]string, len(r.domains))
	for i, d := range r.domains {
		out[i] = d.device
	}
	return out
}

// Notes says what RAPL measures.
func (*RAPL) Notes() []string {
	return []string{"RAPL counts the CPU packages and their DRAM only, not the whole machine"}
}

// PowerCeiling is a domain's ceiling: its constraint_0_max_power_uw times
// LimitMargin where the kernel gives one, else the configured ceiling.
func (r *RAPL) PowerCeiling(_, device string) float64 {
	for _, d := range r.domains {
		if d.device == device {
			return r.limitCeiling(d.limitW)
		}
	}
	return r.limitCeiling(0)
}

// Poll reads every domain's counter and returns the joules counted since
// the first Poll. A step it does not count (counterStep) leaves the
// domain's count where it was and is returned as SeriesGaps beside the
// readings.
func (r *RAPL) Poll(context.Context) ([]Reading, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	cur := make([]uint64, len(r.domains))
	for i, d := range r.domains {
		v, err := readCounter(d.energy)
		if err != nil {
			return nil, fmt.Errorf("rapl %s: %w", d.device, err)
		}
		if v > d.maxRange {
			return nil, fmt.Errorf("rapl %s: energy_uj %d exceeds max_energy_range_uj %d", d.device, v, d.maxRange)
		}
		cur[i] = v
	}
	out := make([]Reading, len(r.domains))
	var gaps SeriesGaps
	for i, d := range r.domains {
		if r.seen {
			_, why := counterStep(float64(r.last[i])/1e6, float64(cur[i])/1e6, float64(d.maxRange)/1e6, now.Sub(r.lastT).Nanoseconds(), r.limitCeiling(d.limitW))
			if why == "" {
				r.sum[i] += CounterDelta(r.last[i], cur[i], d.maxRange)
			} else {
				gaps = append(gaps, Gap{Node: r.node, Device: d.device, Kind: Energy, Reason: "energy_uj: " + why})
			}
		}
		r.last[i] = cur[i]
		out[i] = Reading{Node: r.node, Device: d.device, Kind: Energy, Value: float64(r.sum[i]) / 1e6}
	}
	r.seen, r.lastT = true, now
	if gaps != nil {
		return out, gaps
	}
	return out, nil
}
