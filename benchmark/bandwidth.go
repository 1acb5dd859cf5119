package benchmark

import (
	"aimeter/bandwidth"
	"aimeter/bundle"
	"aimeter/sut"
	"aimeter/sut/kserve"
)

// validateBandwidth checks the plan's declarations for the MLPerf
// datacenter bandwidth check and the QSL-side compression before the run:
// data types that parse, a benchmark of the rules' table to apply them to
// (named with the list when it is not one), and a compression the
// benchmark's rules allow (refused by name where they forbid it).
func (p *Plan) validateBandwidth() error {
	if p.InputDType != "" || p.OutputDType != "" {
		if _, err := bandwidth.ParseDTypes(p.InputDType, p.OutputDType); err != nil {
			field := "InputDType"
			if _, e := bandwidth.ParseDTypes(p.InputDType, ""); e == nil {
				field = "OutputDType"
			}
			return usage(field, "%s: %v", field, err)
		}
		if _, err := bandwidth.Lookup(p.Settings.Model); err != nil {
			return usage("InputDType", "InputDType declares the data types of a benchmark of the MLPerf bandwidth table, and Settings.Model: %v", err)
		}
	}
	if k := p.SUT.KServe; k != nil && k.Compression != "" {
		c, err := bandwidth.ParseCompression(k.Compression)
		if err != nil {
			return usage("SUT.KServe.Compression", "SUT.KServe.Compression: %v", err)
		}
		if c != bandwidth.None && k.GRPC {
			return usage("SUT.KServe.Compression", "SUT.KServe.Compression %s needs HTTP: gRPC compresses each message as it is sent, in the timed path, and the rules make compression the QSL's, untimed", c)
		}
		if c != bandwidth.None && p.SUT.KindOrNull() != sut.KServe {
			return usage("SUT.KServe.Compression", "SUT.KServe.Compression %s needs SUT.Kind kserve (a dispatcher's nodes send the samples as they are)", c)
		}
		if err := bandwidth.CheckCompression(p.Settings.Model, c); err != nil {
			return usage("SUT.KServe.Compression", "SUT.KServe.Compression: %v (Settings.Model %s)", err, p.Settings.Model)
		}
	}
	return nil
}

// setBandwidth stores the run's declaration for bandwidth.json in b: the
// benchmark (Settings.Model), the data types (InputDType and OutputDType,
// else the input datatype a KServe server's metadata declared), the
// compression and the payload sizes before and after it. A run of an
// in-process SUT without declared data types has none: nothing went over
// a wire.
func (r *runner) setBandwidth(b *bundle.Bundle, o *opened) {
	p := r.plan
	ep := endpointOf(o.sut)
	if ep == nil && p.InputDType == "" {
		return
	}
	d := &bandwidth.Declaration{Benchmark: p.Settings.Model, Compression: bandwidth.None}
	if p.InputDType != "" || p.OutputDType != "" {
		d.DTypes, _ = bandwidth.ParseDTypes(p.InputDType, p.OutputDType) // Validate parsed them
		d.DTypeSource = "flag"
	}
	if ke, ok := ep.(*kserve.Endpoint); ok {
		if d.DTypes.Input == 0 {
			if dt := ke.InputDatatype(); dt != "" {
				if n, err := bandwidth.DTypeSize(dt); err == nil {
					d.DTypes = bandwidth.DTypes{Input: n, Names: dt}
					d.DTypeSource = "model metadata"
				}
			}
		}
		if c := ke.Compression(); c != kserve.CompressionNone {
			d.Compression = bandwidth.Compression(c)
			d.Codec = kserve.Codec
		}
		d.PayloadBytes, d.WireBytes = ke.PayloadSizes()
	}
	bandwidth.Part.Set(b, d)
}
