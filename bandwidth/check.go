package bandwidth

import (
	"errors"
	"fmt"
	"math"
)

// Requirement is the minimum bandwidth the rules ask of a run.
type Requirement struct {
	// Benchmark is the row's name ("ResNet50-v1.5").
	Benchmark string `json:"benchmark"`
	// Throughput is the achieved throughput the formulas take, samples/s.
	Throughput float64 `json:"throughput_samples_per_second"`
	// DTypes are the data type sizes the formulas took.
	DTypes DTypes `json:"dtypes"`
	// IngressBytesPerSample and EgressBytesPerSample are the formulas'
	// sizes of one sample (the numeric size formula), bytes; egress 0
	// where the output is negligible.
	IngressBytesPerSample int64 `json:"ingress_bytes_per_sample"`
	EgressBytesPerSample  int64 `json:"egress_bytes_per_sample"`
	// Ingress and Egress are the minimum bandwidths, bytes/s. Egress is 0
	// where the rules ask only for more than 0 (EgressPositive).
	Ingress float64 `json:"ingress_bytes_per_second"`
	Egress  float64 `json:"egress_bytes_per_second"`
	// EgressPositive says the egress requirement is "> 0": the output is
	// negligible.
	EgressPositive bool `json:"egress_above_zero_only,omitempty"`
	// IngressFormula and EgressFormula are the rules' formulas.
	IngressFormula string `json:"ingress_formula"`
	EgressFormula  string `json:"egress_formula"`
}

// Require is the requirement of benchmark (a key Lookup knows) at
// throughput samples/s with the data types d. An unknown benchmark is an
// error naming it with the list; an input data type not declared
// (d.Input 0) is an error, as is a throughput that is negative or not a
// number.
func Require(benchmark string, throughput float64, d DTypes) (Requirement, error) {
	b, err := Lookup(benchmark)
	if err != nil {
		return Requirement{}, err
	}
	if d.Input <= 0 {
		return Requirement{}, fmt.Errorf("%s: the input data type is not declared (--input-dtype)", b.Name)
	}
	if throughput < 0 || math.IsNaN(throughput) || math.IsInf(throughput, 0) {
		return Requirement{}, fmt.Errorf("%s: throughput %v samples/s: want a finite number ≥ 0", b.Name, throughput)
	}
	r := Requirement{Benchmark: b.Name, Throughput: throughput, DTypes: d,
		IngressFormula: b.InputFormula, EgressFormula: b.OutputFormula}
	if b.InputElements > 0 {
		r.IngressBytesPerSample = b.InputElements * int64(d.Input)
	} else {
		r.IngressBytesPerSample = b.NumericalElements*int64(d.Input) + b.CategoricalElements*int64(d.input2())
	}
	r.EgressBytesPerSample = b.OutputElements * int64(d.output())
	r.EgressPositive = b.OutputElements == 0
	r.Ingress = throughput * float64(r.IngressBytesPerSample)
	r.Egress = throughput * float64(r.EgressBytesPerSample)
	return r, nil
}

// NIC is the capacity of the network interface the run's traffic used.
type NIC struct {
	// Name is the interface ("eth0"); "" when not known.
	Name string `json:"name,omitempty"`
	// BitsPerSecond is its link speed, bits/s, full duplex (each
	// direction); 0 means unknown, never guessed.
	BitsPerSecond int64 `json:"bits_per_second,omitempty"`
}

// Known reports whether the capacity is known.
func (n NIC) Known() bool { return n.BitsPerSecond > 0 }

// BytesPerSecond is the capacity in bytes/s; 0 when unknown.
func (n NIC) BytesPerSecond() float64 { return float64(n.BitsPerSecond) / 8 }

// Verdict is the outcome of one comparison.
type Verdict string

// Verdicts.
const (
	Pass Verdict = "pass"
	Fail Verdict = "fail"
	// Unknown: what to compare with is not known (the NIC's speed, the
	// wire sizes of a SUT that reports none).
	Unknown Verdict = "unknown"
	// Compressed: the wire carried less than the formula because the
	// samples were compressed, which the rules allow.
	Compressed Verdict = "compressed"
)

// DirectionCheck is the check of one direction.
type DirectionCheck struct {
	// Required is the rules' minimum, bytes/s; with AboveZero only more
	// than 0 is asked.
	Required  float64 `json:"required_bytes_per_second"`
	AboveZero bool    `json:"above_zero_only,omitempty"`
	// RequiredPerSample is the formula's size of one sample, bytes (0
	// with AboveZero).
	RequiredPerSample int64 `json:"required_bytes_per_sample"`
	// NICBytesPerSecond is the capacity of the NIC on the traffic's path,
	// bytes/s; 0 unknown.
	NICBytesPerSecond float64 `json:"nic_bytes_per_second"`
	// Carried is what the wire carried that way.
	Carried Direction `json:"carried"`
	// NIC compares the NIC's capacity with Required: pass, fail or
	// unknown.
	NIC Verdict `json:"nic"`
	// Wire compares the bytes a sample put on the wire with
	// RequiredPerSample: pass, fail, compressed (fewer, because the
	// samples were compressed) or unknown (no wire sizes). Per sample, so
	// that it does not hang on how a duration is measured.
	Wire Verdict `json:"wire"`
	// Pass is the direction's verdict: no comparison failed.
	Pass bool `json:"pass"`
	// Note says in words why a comparison did not pass, or what
	// compression did.
	Note string `json:"note,omitempty"`
}

// Result is the check of a run in both directions.
type Result struct {
	Requirement Requirement    `json:"requirement"`
	NIC         NIC            `json:"nic"`
	Compression Compression    `json:"compression"`
	Ingress     DirectionCheck `json:"ingress"`
	Egress      DirectionCheck `json:"egress"`
	// Pass: both directions pass.
	Pass bool `json:"pass"`
}

// Check compares the requirement req with what the wire carried and with
// the capacity of the NIC on the traffic's path (unknown capacity is
// NIC{}: that comparison is then unknown, not failed). compression is what
// the run's QSL did to the samples: with it, a wire that carried fewer
// bytes than the formula is Compressed, not failed.
func Check(req Requirement, carried Carried, nic NIC, compression Compression) Result {
	if compression == "" {
		compression = None
	}
	r := Result{Requirement: req, NIC: nic, Compression: compression}
	r.Ingress = direction(req.Ingress, false, req.IngressBytesPerSample, carried.Ingress, carried.Measured, nic, compression)
	r.Egress = direction(req.Egress, req.EgressPositive, req.EgressBytesPerSample, carried.Egress, carried.Measured, nic, None)
	r.Pass = r.Ingress.Pass && r.Egress.Pass
	return r
}

func direction(required float64, aboveZero bool, perSample int64, c Direction, measured bool, nic NIC, comp Compression) DirectionCheck {
	d := DirectionCheck{Required: required, AboveZero: aboveZero, RequiredPerSample: perSample,
		NICBytesPerSecond: nic.BytesPerSecond(), Carried: c}
	var notes []string
	switch {
	case !nic.Known():
		d.NIC = Unknown
		notes = append(notes, "the NIC's link speed is unknown")
	case aboveZero || nic.BytesPerSecond() >= required:
		d.NIC = Pass
	default:
		d.NIC = Fail
		notes = append(notes, fmt.Sprintf("the NIC carries %s, under the %s required", Rate(nic.BytesPerSecond()), Rate(required)))
	}
	switch {
	case !measured:
		d.Wire = Unknown
		notes = append(notes, "the SUT reported no wire sizes")
	case aboveZero:
		d.Wire = Pass
		if c.TotalBytes <= 0 {
			d.Wire = Fail
			notes = append(notes, "nothing came back on the wire (the rules ask for more than 0)")
		}
	case c.BytesPerSample() >= float64(perSample):
		d.Wire = Pass
	case comp != None && comp != "" && c.UncompressedBytes > 0 && c.UncompressedPerSample() < float64(perSample):
		d.Wire = Fail
		notes = append(notes, fmt.Sprintf("the samples held %.0f bytes each before compression, under the formula's %d: the inputs sent are smaller than the benchmark's",
			c.UncompressedPerSample(), perSample))
	case comp != None && comp != "":
		d.Wire = Compressed
		before := "payload sizes before compression not recorded"
		if c.UncompressedBytes > 0 {
			before = fmt.Sprintf("%.0f bytes each before", c.UncompressedPerSample())
		}
		notes = append(notes, fmt.Sprintf("the wire carried %.0f bytes a sample, %.1f%% of the formula's %d, because the samples were compressed (%s; %s)",
			c.BytesPerSample(), 100*c.BytesPerSample()/float64(perSample), perSample, comp, before))
	default:
		d.Wire = Fail
		notes = append(notes, fmt.Sprintf("the wire carried %.0f bytes a sample, under the formula's %d, without compression: the inputs sent are smaller than the benchmark's",
			c.BytesPerSample(), perSample))
	}
	d.Pass = d.NIC != Fail && d.Wire != Fail
	d.Note = join(notes)
	return d
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += "; "
		}
		out += x
	}
	return out
}

// Rate formats bytes/s with a decimal prefix and the bit rate beside it
// ("75.3 MB/s (602 Mbit/s)").
func Rate(bytesPerSecond float64) string {
	return fmt.Sprintf("%s/s (%s)", scaled(bytesPerSecond, "B"), scaled(8*bytesPerSecond, "bit")+"/s")
}

func scaled(v float64, unit string) string {
	prefixes := []string{"", "k", "M", "G", "T", "P"}
	i := 0
	for math.Abs(v) >= 1000 && i < len(prefixes)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", v, unit)
	}
	return fmt.Sprintf("%.3g %s%s", v, prefixes[i], unit)
}

// errNoThroughput is returned by Of for a run without a performance
// summary.
var errNoThroughput = errors.New("the run has no performance pass: no achieved throughput to take")
