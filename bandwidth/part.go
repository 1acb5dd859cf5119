package bandwidth

import (
	"encoding/json"
	"fmt"
	"io"

	"aimeter/bundle"
	"aimeter/loadgen"
)

// InputFile is the bundle's raw part of the declaration (Part); File is
// the derived check (bandwidth.json).
const (
	InputFile = "bandwidth_input.json"
	File      = "bandwidth.json"
)

// Declaration is what a run declared for the check and what its QSL did
// to the samples, stored in the bundle (Part) so that bandwidth.json is
// derived from the bundle alone.
type Declaration struct {
	// Benchmark is the model key of the run (--model); "" or a key the
	// table does not have leaves the requirement out, the carried
	// bandwidth is still given.
	Benchmark string `json:"benchmark,omitempty"`
	// DTypes are the declared data types (--input-dtype, --output-dtype,
	// or the model's input datatype a KServe server declared).
	DTypes DTypes `json:"dtypes"`
	// DTypeSource says where DTypes came from: "flag" or "model
	// metadata"; "" when not declared.
	DTypeSource string `json:"dtype_source,omitempty"`
	// Compression is the QSL-side compression of the samples sent.
	Compression Compression `json:"compression"`
	// Codec names the codec of lossless compression ("gzip"); "" for none.
	Codec string `json:"codec,omitempty"`
	// PayloadBytes and WireBytes give, by QSL index, the request body of
	// each sample as built before compression and as sent after it (0
	// for a sample never loaded); nil when the SUT did not report them.
	PayloadBytes []int64 `json:"payload_bytes,omitempty"`
	WireBytes    []int64 `json:"wire_bytes,omitempty"`
}

// Part is the declaration's raw part of a bundle (bandwidth_input.json).
var Part = bundle.PartType[*Declaration]{Name: InputFile, Read: readDeclaration, Write: func(w io.Writer, d *Declaration) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}}

func readDeclaration(r io.Reader) (*Declaration, error) {
	d := new(Declaration)
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(d); err != nil {
		return nil, fmt.Errorf("%s: %w", InputFile, err)
	}
	if _, err := ParseCompression(string(d.Compression)); err != nil {
		return nil, fmt.Errorf("%s: %w", InputFile, err)
	}
	if d.DTypes.Input < 0 || d.DTypes.Input2 < 0 || d.DTypes.Output < 0 {
		return nil, fmt.Errorf("%s: dtypes: a negative size", InputFile)
	}
	return d, nil
}

// Report is bandwidth.json: the check of a run, derived from its bundle.
type Report struct {
	Schema string `json:"schema"`
	// Benchmark is the declared model key; "" when none was.
	Benchmark string `json:"benchmark,omitempty"`
	// Throughput is the achieved throughput of the reported pass,
	// samples/s (LoadGen's metric for Server and Offline; samples over
	// the time to the last completion otherwise).
	Throughput float64 `json:"throughput_samples_per_second"`
	// Compression and Codec are the QSL-side compression of the run.
	Compression Compression `json:"compression"`
	Codec       string      `json:"codec,omitempty"`
	// Carried is what the wire carried over the reported pass.
	Carried Carried `json:"carried"`
	// Check compares the rules' requirement with Carried and the NIC;
	// nil when there is no requirement (Gap says why).
	Check *Result `json:"check,omitempty"`
	// Gap says why there is no check: no benchmark of the table, no
	// declared data type, no performance pass.
	Gap string `json:"gap,omitempty"`
}

// Schema is Report.Schema.
const Schema = "aimeter.bandwidth/v1"

// Of derives the check of b from its declaration (Part), its reported
// pass and nic, the capacity of the interface the traffic used (NIC{} when
// unknown). It returns nil for a bundle without the declaration.
func Of(b *bundle.Bundle, nic NIC) *Report {
	d := Part.Value(b)
	if d == nil || b.Result == nil {
		return nil
	}
	rep := &Report{Schema: Schema, Benchmark: d.Benchmark, Compression: d.Compression, Codec: d.Codec}
	if rep.Compression == "" {
		rep.Compression = None
	}
	res := b.Result
	opts := CarriedOptions{RequestsAtCompletion: res.Effective.Scenario == loadgen.Offline}
	if d.PayloadBytes != nil {
		opts.Uncompressed = func(i uint64) int64 {
			if i < uint64(len(d.PayloadBytes)) {
				return d.PayloadBytes[i]
			}
			return 0
		}
	}
	if p := res.ReportedPass(); p >= 0 {
		rep.Carried = CarriedOf(res.PassRecords(p), opts)
	} else {
		rep.Carried = CarriedOf(res.Records(), opts)
	}
	if res.Summary == nil {
		rep.Gap = errNoThroughput.Error()
		return rep
	}
	rep.Throughput = throughputOf(res.Summary)
	if d.Benchmark == "" {
		rep.Gap = "no benchmark declared (--model names one of the table's)"
		return rep
	}
	req, err := Require(d.Benchmark, rep.Throughput, d.DTypes)
	if err != nil {
		rep.Gap = err.Error()
		return rep
	}
	ck := Check(req, rep.Carried, nic, d.Compression)
	rep.Check = &ck
	return rep
}

// throughputOf is the achieved throughput of a summary, samples/s.
func throughputOf(s *loadgen.Summary) float64 {
	var v float64
	switch s.Effective.Scenario {
	case loadgen.Server:
		v = s.CompletedSamplesPerSecond()
	case loadgen.Offline:
		v = s.SamplesPerSecond()
	default:
		if t := s.Result.FinalQueryAllSamplesDoneTime; t > 0 {
			v = float64(s.SampleCount) / t
		}
	}
	if v != v || v < 0 || v > 1e300 {
		return 0
	}
	return v
}

// Write writes r as indented JSON.
func (r *Report) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Failed lists what failed, one line a direction, for `aimeter check` and
// the verdict's reasons; nil when nothing did (or there is no check).
func (r *Report) Failed() []string {
	if r == nil || r.Check == nil {
		return nil
	}
	var out []string
	for _, d := range []struct {
		name string
		c    DirectionCheck
	}{{"ingress", r.Check.Ingress}, {"egress", r.Check.Egress}} {
		if !d.c.Pass {
			out = append(out, fmt.Sprintf("bandwidth %s of %s: %s", d.name, r.Check.Requirement.Benchmark, d.c.Note))
		}
	}
	return out
}
