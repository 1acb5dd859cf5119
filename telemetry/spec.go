package telemetry

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// SpecOptions are what Open needs beyond the specs.
type SpecOptions struct {
	// Node names this machine in the readings of local meters (RAPL);
	// "" leaves it empty.
	Node string
	// Period is the sampling period, also a Prometheus source's step; 0
	// means DefaultPeriod.
	Period time.Duration
	// PowercapRoot is where RAPL is looked for; "" means DefaultPowercap.
	PowercapRoot string
	// MaxPowerW is the ceiling of a device's power, in watts, for the
	// devices whose source reports no limit of its own (PowerCeilinger):
	// a reading above it, or an energy counter step that means more, is
	// left out as a gap. 0 means DefaultMaxPowerW.
	MaxPowerW float64
}

// Open opens the sources of a --power value: specs separated by commas
// (commas inside braces, brackets, parentheses or quotes, as in a PromQL
// query, do not separate). The specs are
//
//	replay:FILE               a CSV of power readings (see Replay)
//	rapl                      RAPL package and DRAM counters (see RAPL)
//	nvml                      NVIDIA GPUs through the driver (see NVML)
//	prometheus:URL            the DCGM exporter's metrics through Prometheus
//	prometheus:URL#PRESET     a preset of PromPresets (dcgm, dcgm-power, …)
//	prometheus:URL#KIND=QUERY one query of its own, KIND one of power_w,
//	                          energy_j, energy_mj (a counter in mJ),
//	                          utilization_pct
//	nvidia-smi[:PATH]         NVIDIA GPUs through nvidia-smi (see OpenNvidiaSMI)
//	npu-smi[:PATH]            Huawei Ascend NPUs through npu-smi (see OpenNPUSMI)
//	ipmi[:PATH]               the local BMC through ipmitool DCMI (see OpenIPMI)
//	redfish:URL               a BMC through Redfish (see OpenRedfish)
//
// Each source is checked now (the file read, the counters readable, the
// URL well formed), so that a bad spec fails before the run. Errors name
// the spec.
func Open(specs string, opts SpecOptions) ([]Source, error) {
	var out []Source
	if opts.MaxPowerW < 0 || opts.MaxPowerW != opts.MaxPowerW {
		return nil, fmt.Errorf("MaxPowerW %v: want a ceiling in watts > 0, or 0 for the default of %.0f W", opts.MaxPowerW, DefaultMaxPowerW)
	}
	for _, spec := range SplitSpecs(specs) {
		src, err := openOne(spec, opts)
		if err != nil {
			return nil, fmt.Errorf("--power %q: %w", spec, err)
		}
		if c, ok := src.(interface{ setMaxPowerW(float64) }); ok {
			c.setMaxPowerW(opts.MaxPowerW)
		}
		out = append(out, src)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--power %q: no source (want %s)", specs, sourceNames)
	}
	return out, nil
}

// SplitSpecs splits s at its top-level commas, trimming spaces and
// dropping empty parts.
func SplitSpecs(s string) []string {
	var out []string
	depth, quote, begin := 0, rune(0), 0
	flush := func(end int) {
		if p := strings.TrimSpace(s[begin:end]); p != "" {
			out = append(out, p)
		}
	}
	for i, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '{' || c == '(' || c == '[':
			depth++
		case c == '}' || c == ')' || c == ']':
			depth--
		case c == ',' && depth == 0:
			flush(i)
			begin = i + 1
		}
	}
	flush(len(s))
	return out
}

// sourceNames lists the specs for error messages.
const sourceNames = "replay:FILE, rapl, nvml, nvidia-smi, npu-smi, ipmi, redfish:URL or prometheus:URL[#PRESET]"

func openOne(spec string, opts SpecOptions) (Source, error) {
	name, arg, _ := strings.Cut(spec, ":")
	switch name {
	case "replay":
		if arg == "" {
			return nil, fmt.Errorf("want replay:FILE")
		}
		f, err := os.Open(arg)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return ReadReplay(f, spec)
	case "rapl":
		root := opts.PowercapRoot
		if arg != "" {
			root = arg
		}
		return OpenRAPL(root, opts.Node)
	case "prometheus":
		return openPrometheus(spec, arg, opts)
	case "nvml":
		return OpenNVML(arg, opts.Node)
	case "nvidia-smi":
		return OpenNvidiaSMI(arg, opts.Node)
	case "npu-smi":
		return OpenNPUSMI(arg, opts.Node)
	case "ipmi":
		return OpenIPMI(arg, opts.Node)
	case "redfish":
		return OpenRedfish(arg, opts.Node)
	}
	return nil, fmt.Errorf("unknown source %q (want %s)", name, sourceNames)
}

func openPrometheus(spec, arg string, opts SpecOptions) (*Prometheus, error) {
	base, frag, _ := strings.Cut(arg, "#")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("URL %q: want http://HOST:PORT of a Prometheus server", base)
	}
	p := &Prometheus{URL: base, Step: opts.Period, spec: spec}
	if frag == "" {
		frag = "dcgm"
	}
	if qs, ok := PromPresets[frag]; ok {
		p.Queries = qs
		return p, nil
	}
	kind, query, ok := strings.Cut(frag, "=")
	if !ok || strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("#%s: want a preset (dcgm, dcgm-power, dcgm-energy, dcgm-util) or KIND=QUERY", frag)
	}
	q := PromQuery{Query: query, Scale: 1}
	switch kind {
	case "power_w":
		q.Kind = Power
	case "energy_j":
		q.Kind = Energy
	case "energy_mj":
		q.Kind, q.Scale = Energy, 0.001
	case "utilization_pct":
		q.Kind = Utilization
	default:
		return nil, fmt.Errorf("#%s: kind %q: want power_w, energy_j, energy_mj or utilization_pct", frag, kind)
	}
	p.Queries = []PromQuery{q}
	return p, nil
}
