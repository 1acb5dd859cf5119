package cli

import (
	"os"
	"time"

	"github.com/spf13/pflag"

	"aimeter/benchmark"
	"aimeter/telemetry"
)

// powerFlags are --power, --power-period and --power-max-w.
type powerFlags struct {
	sources string
	period  time.Duration
	maxW    float64
}

var powerFlagNames = []string{"power", "power-period", "power-max-w"}

func addPowerFlags(fl *pflag.FlagSet, pf *powerFlags) {
	fl.StringVar(&pf.sources, "power", "", "sample power and energy while the run goes (docs/power.md): SOURCE[,SOURCE…], each replay:FILE (a CSV t_ns,node,device,watts, or time,node,watts), rapl (CPU package and DRAM counters), nvml (NVIDIA GPUs: energy counter, power, utilisation), nvidia-smi[:PATH] (NVIDIA GPUs without NVML: power, utilisation), npu-smi[:PATH] (Ascend NPUs: power, AI Core utilisation), ipmi[:PATH] (the local BMC through ipmitool DCMI; low rate), redfish:URL (a BMC's Chassis, https://USER:PASSWORD@BMC/redfish/v1/Chassis/ID[#insecure]; low rate) or prometheus:URL[#PRESET|#KIND=QUERY] (default preset dcgm: the DCGM exporter's energy counter, power and GPU utilisation)")
	fl.DurationVar(&pf.period, "power-period", telemetry.DefaultPeriod, "--power: time between two reads of a polled source, and the Prometheus query step")
	fl.Float64Var(&pf.maxW, "power-max-w", 0, "--power: the largest plausible power of one device, W, where its source reports no limit of its own (NVML's and RAPL's limits × 1.5 apply otherwise); a reading above it, or an energy counter step that means more, is left out as a gap (0: 100000 W)")
}

// apply opens the sources of --power into p; every source is checked now,
// so that a bad one stops the run before it starts (exit 2).
func (pf *powerFlags) apply(p *benchmark.Plan) error {
	host, _ := os.Hostname()
	srcs, err := pf.open(host)
	if err != nil || srcs == nil {
		return err
	}
	p.Power, p.PowerOptions = srcs, pf.options()
	return nil
}

// open opens the sources of --power, their local meters named node; nil
// without --power. Errors are usage errors.
func (pf *powerFlags) open(node string) ([]telemetry.Source, error) {
	if pf.sources == "" {
		if pf.maxW != 0 {
			return nil, usageError("--power-max-w applies only with --power: drop it, or name the power sources")
		}
		return nil, nil
	}
	if pf.period <= 0 {
		return nil, usageError("--power-period %v: want a positive duration", pf.period)
	}
	if !(pf.maxW >= 0) {
		return nil, usageError("--power-max-w %v: want watts > 0, or 0 for %.0f W", pf.maxW, telemetry.DefaultMaxPowerW)
	}
	srcs, err := telemetry.Open(pf.sources, telemetry.SpecOptions{Node: node, Period: pf.period, MaxPowerW: pf.maxW})
	if err != nil {
		return nil, usageError("%v", err)
	}
	return srcs, nil
}

// options are the Sampler's options of --power-period.
func (pf *powerFlags) options() telemetry.Options { return telemetry.Options{Period: pf.period} }
