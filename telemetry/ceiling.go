package telemetry

import (
	"fmt"
	"time"
)

// DefaultMaxPowerW is the ceiling of a device's power, in watts, where its
// source reports no limit of its own and SpecOptions.MaxPowerW is 0: a
// reading above it, or an energy counter step that means more, is left out
// as a gap. 100 kW is above any one server or GPU and below the absurd
// (a meter's wrong unit, a counter reset counted as a wrap).
const DefaultMaxPowerW = 100e3

// LimitMargin multiplies a limit a source reports (NVML's enforced power
// limit, RAPL's constraint max power, a Redfish PowerControl's
// PowerCapacityWatts) into the ceiling of its readings:
// instantaneous readings overshoot a power cap for short whiles, so the
// ceiling is half as much again.
const LimitMargin = 1.5

// PowerCeilinger is a source that knows the largest plausible power of
// its devices. The Sampler leaves out each power reading above it and
// records a gap instead; a source whose readings have no ceiling of their
// own gets DefaultMaxPowerW.
type PowerCeilinger interface {
	// PowerCeiling is the largest plausible power of device on node, in
	// watts: its reported limit times LimitMargin where the source reports
	// one, else the configured ceiling (SpecOptions.MaxPowerW), else
	// DefaultMaxPowerW.
	PowerCeiling(node, device string) float64
}

// powerCeiling is the configured ceiling a source embeds; its zero value
// means DefaultMaxPowerW.
type powerCeiling struct {
	maxW float64
}

// PowerCeiling is the configured ceiling, DefaultMaxPowerW when none.
func (c *powerCeiling) PowerCeiling(string, string) float64 {
	if c.maxW > 0 {
		return c.maxW
	}
	return DefaultMaxPowerW
}

func (c *powerCeiling) setMaxPowerW(w float64) { c.maxW = w }

// ceilingOf is src's ceiling for device on node.
func ceilingOf(src Source, node, device string) float64 {
	if c, ok := src.(PowerCeilinger); ok {
		if w := c.PowerCeiling(node, device); w > 0 {
			return w
		}
	}
	return DefaultMaxPowerW
}

// limitCeiling is the ceiling of a device whose source reports limitW
// (0 for none): limitW × LimitMargin, else c's configured ceiling.
func (c *powerCeiling) limitCeiling(limitW float64) float64 {
	if limitW > 0 {
		return limitW * LimitMargin
	}
	return c.PowerCeiling("", "")
}

// counterStep judges one step of an energy counter, from prevJ to curJ
// joules read dtNs apart. A rise is counted unless it means a mean power
// above ceilingW (a jump). A drop is a wrap, counted as rangeJ − prevJ +
// curJ, when the counter wraps (rangeJ > 0: RAPL's max_energy_range_uj,
// NVML's 64 bits of mJ) and that rise is within ceilingW; any other drop is
// a reset or a backwards step. A step left out has riseJ 0 and a reason
// that says what it was.
func counterStep(prevJ, curJ, rangeJ float64, dtNs int64, ceilingW float64) (riseJ float64, reason string) {
	dt := time.Duration(dtNs)
	plausible := func(rise float64) bool { return dtNs <= 0 || rise/dt.Seconds() <= ceilingW }
	if curJ >= prevJ {
		rise := curJ - prevJ
		if plausible(rise) {
			return rise, ""
		}
		return 0, fmt.Sprintf("the counter jumped by %.1f J in %v (%.0f W, above the ceiling of %.0f W): not counted", rise, dt.Round(time.Millisecond), rise/dt.Seconds(), ceilingW)
	}
	if rangeJ <= 0 {
		return 0, fmt.Sprintf("the counter went down from %.1f to %.1f J (a reset: it does not wrap): not counted", prevJ, curJ)
	}
	wrap := rangeJ - prevJ + curJ
	if dtNs <= 0 {
		return 0, fmt.Sprintf("the counter went down from %.1f to %.1f J with no time between the reads: not counted", prevJ, curJ)
	}
	if plausible(wrap) {
		return wrap, ""
	}
	return 0, fmt.Sprintf("the counter went down from %.1f to %.1f J in %v: not a wrap of its %.1f J range (that would be %.1f J, %.0f W, above the ceiling of %.0f W), so a reset or a backwards step: not counted",
		prevJ, curJ, dt.Round(time.Millisecond), rangeJ, wrap, wrap/dt.Seconds(), ceilingW)
}
