package kserve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"aimeter/loadgen"
	"aimeter/sut/kserve/inferencepb"
)

// This file sends samples built from the model metadata (Inputs) and
// checks their responses against the metadata.

// appendGenRequest appends the JSON of an inference request of the input
// tensors ts asking for the outputs outs. With binary, the tensors' data
// is not in the JSON: the caller appends their Raw after it, in order.
func appendGenRequest(b []byte, id string, ts []Tensor, outs []tensorMeta, binary bool) []byte {
	b = appendID(b, id)
	b = append(b, `"inputs":[`...)
	for i, t := range ts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = strconv.AppendQuote(b, t.Name)
		b = append(b, `,"datatype":`...)
		b = strconv.AppendQuote(b, t.Datatype)
		b = append(b, `,"shape":[`...)
		for j, d := range t.Shape {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, d, 10)
		}
		b = append(b, ']')
		if binary {
			b = append(b, `,"parameters":{"binary_data_size":`...)
			b = strconv.AppendInt(b, int64(len(t.Raw)), 10)
			b = append(b, `}}`...)
			continue
		}
		b = append(b, `,"data":`...)
		b = appendDataJSON(b, t.Datatype, t.Raw)
		b = append(b, '}')
	}
	b = append(b, `],"outputs":[`...)
	for i, o := range outs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = strconv.AppendQuote(b, o.Name)
		if binary {
			b = append(b, `,"parameters":{"binary_data":true}`...)
		}
		b = append(b, '}')
	}
	return append(b, `]}`...)
}

// appendDataJSON appends raw tensor data of dt as a flat JSON array.
func appendDataJSON(b []byte, dt string, raw []byte) []byte {
	b = append(b, '[')
	if dt == "BYTES" {
		for i, off := 0, 0; off+4 <= len(raw); i++ {
			n := int(binary.LittleEndian.Uint32(raw[off:]))
			off += 4
			if i > 0 {
				b = append(b, ',')
			}
			s, _ := json.Marshal(string(raw[off : off+n]))
			b = append(b, s...)
			off += n
		}
		return append(b, ']')
	}
	size := elemSize(dt)
	for i := range len(raw) / size {
		if i > 0 {
			b = append(b, ',')
		}
		switch dt {
		case "BOOL":
			b = strconv.AppendBool(b, raw[i] != 0)
		case "FP16":
			b = appendFloat32(b, f16ToF32(binary.LittleEndian.Uint16(raw[2*i:])))
		case "FP32":
			b = appendFloat32(b, math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		case "FP64":
			v := math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = 0
			}
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		case "INT64":
			b = strconv.AppendInt(b, int64(binary.LittleEndian.Uint64(raw[8*i:])), 10)
		case "UINT64":
			b = strconv.AppendUint(b, binary.LittleEndian.Uint64(raw[8*i:]), 10)
		default:
			b = strconv.AppendInt(b, int64(rawValue(dt, raw, i)), 10)
		}
	}
	return append(b, ']')
}

// gotOutput is what a response says of one output: n is its number of
// elements.
type gotOutput struct {
	name, dt string
	shape    []int64
	n        int
}

// checkOutputs checks the outputs of a response against the metadata's:
// every one listed (they were all asked for), of its datatype, of a shape
// the metadata's fits (-1 matches any size), with as many elements as the
// shape says. The error has category protocol.
func checkOutputs(meta []tensorMeta, got []gotOutput) error {
	seen := make([]bool, len(meta))
	for _, g := range got {
		k := -1
		for i := range meta {
			if meta[i].Name == g.name {
				k = i
			}
		}
		if k < 0 {
			return protoErr("output %q is not in the model metadata (outputs: %s)", g.name, names(meta))
		}
		m := meta[k]
		seen[k] = true
		if g.dt != m.Datatype {
			return protoErr("output %q has datatype %s; the model metadata says %s", g.name, g.dt, m.Datatype)
		}
		fits := len(g.shape) == len(m.Shape)
		for i := 0; fits && i < len(g.shape); i++ {
			fits = g.shape[i] >= 0 && (m.Shape[i] == -1 || m.Shape[i] == g.shape[i])
		}
		if !fits {
			return protoErr("output %q has shape %v; the model metadata says %v", g.name, g.shape, m.Shape)
		}
		if n := numel(g.shape); int64(g.n) != n {
			return protoErr("output %q has %d elements; its shape %v takes %d", g.name, g.n, g.shape, n)
		}
	}
	for i, ok := range seen {
		if !ok {
			return protoErr("output %q of the model metadata is missing from the response", meta[i].Name)
		}
	}
	return nil
}

func protoErr(format string, a ...any) error {
	return loadgen.WithCategory(CategoryProtocol, fmt.Errorf(format, a...))
}

func decodeErr(err error) error { return decodeError(err) }

// rawCount is the number of elements of raw data of dt.
func rawCount(dt string, raw []byte) (int, error) {
	if dt == "BYTES" {
		n, err := countBytesElems(raw)
		if err != nil {
			return 0, fmt.Errorf("%w: BYTES output: %w", errDecode, err)
		}
		return n, nil
	}
	size := elemSize(dt)
	if size == 0 {
		return -1, nil // an unknown datatype: checkOutputs names it
	}
	if len(raw)%size != 0 {
		return 0, fmt.Errorf("%w: %d bytes of %s data is not a whole number of elements", errDecode, len(raw), dt)
	}
	return len(raw) / size, nil
}

// countJSON counts the values of a (nested) JSON array.
func countJSON(data []byte) (int, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	n, depth := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("%w: tensor data: %w", errDecode, err)
		}
		switch tok {
		case json.Delim('['):
			depth++
		case json.Delim(']'):
			depth--
		case json.Delim('{'), json.Delim('}'):
			return 0, fmt.Errorf("%w: tensor data holds an object", errDecode)
		default:
			if depth == 0 {
				return 0, fmt.Errorf("%w: tensor data is not a JSON array", errDecode)
			}
			n++
		}
	}
	if depth != 0 {
		return 0, fmt.Errorf("%w: tensor data ends inside an array", errDecode)
	}
	return n, nil
}

// checkHTTPResponse checks an HTTP inference response body (see
// decodeHTTPResponse) against the metadata's outputs.
func checkHTTPResponse(body []byte, jsonLen int, meta []tensorMeta) error {
	js, bin := body, []byte(nil)
	if jsonLen >= 0 {
		if jsonLen > len(body) {
			return decodeErr(fmt.Errorf("%w: %s %d is longer than the body (%d bytes)", errDecode, headerContentLength, jsonLen, len(body)))
		}
		js, bin = body[:jsonLen], body[jsonLen:]
	}
	var r v2Response
	if err := json.Unmarshal(js, &r); err != nil {
		return decodeErr(fmt.Errorf("%w: %w", errDecode, err))
	}
	if r.Error != "" {
		return decodeErr(fmt.Errorf("%w: server error: %s", errDecode, prefix(r.Error)))
	}
	sizes := make([]int64, len(r.Outputs))
	for i, o := range r.Outputs {
		sizes[i] = -1
		if o.Parameters.BinaryDataSize != nil {
			sizes[i] = *o.Parameters.BinaryDataSize
		}
	}
	parts, err := splitBinary(sizes, bin)
	if err != nil {
		return decodeErr(err)
	}
	got := make([]gotOutput, len(r.Outputs))
	for i, o := range r.Outputs {
		g := gotOutput{name: o.Name, dt: o.Datatype, shape: o.Shape}
		if parts[i] != nil {
			g.n, err = rawCount(o.Datatype, parts[i])
		} else {
			g.n, err = countJSON(o.Data)
		}
		if err != nil {
			return decodeErr(err)
		}
		got[i] = g
	}
	return checkOutputs(meta, got)
}

// checkProtoResponse checks a gRPC inference response against the
// metadata's outputs.
func checkProtoResponse(m *inferencepb.ModelInferResponse, meta []tensorMeta) error {
	outs := m.GetOutputs()
	raw := m.GetRawOutputContents()
	if len(raw) > 0 && len(raw) != len(outs) {
		return decodeErr(fmt.Errorf("%w: %d raw output contents for %d outputs", errDecode, len(raw), len(outs)))
	}
	got := make([]gotOutput, len(outs))
	for i, o := range outs {
		g := gotOutput{name: o.GetName(), dt: o.GetDatatype(), shape: o.GetShape()}
		if len(raw) > 0 {
			n, err := rawCount(g.dt, raw[i])
			if err != nil {
				return decodeErr(err)
			}
			g.n = n
		} else {
			c := o.GetContents()
			if c == nil {
				return decodeErr(fmt.Errorf("%w: output %q has no contents", errDecode, g.name))
			}
			switch g.dt {
			case "BOOL":
				g.n = len(c.GetBoolContents())
			case "INT8", "INT16", "INT32":
				g.n = len(c.GetIntContents())
			case "INT64":
				g.n = len(c.GetInt64Contents())
			case "UINT8", "UINT16", "UINT32":
				g.n = len(c.GetUintContents())
			case "UINT64":
				g.n = len(c.GetUint64Contents())
			case "FP32":
				g.n = len(c.GetFp32Contents())
			case "FP64":
				g.n = len(c.GetFp64Contents())
			case "BYTES":
				g.n = len(c.GetBytesContents())
			default:
				g.n = -1
			}
		}
		got[i] = g
	}
	return checkOutputs(meta, got)
}

// fillGen sets a gRPC request for the input tensors ts, asking for every
// output of the metadata.
func fillGen(req *inferencepb.ModelInferRequest, ts []Tensor, outs []tensorMeta) {
	ins := make([]*inferencepb.ModelInferRequest_InferInputTensor, len(ts))
	raws := make([][]byte, len(ts))
	for i, t := range ts {
		ins[i] = &inferencepb.ModelInferRequest_InferInputTensor{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape}
		raws[i] = t.Raw
	}
	ro := make([]*inferencepb.ModelInferRequest_InferRequestedOutputTensor, len(outs))
	for i, o := range outs {
		ro[i] = &inferencepb.ModelInferRequest_InferRequestedOutputTensor{Name: o.Name}
	}
	req.Inputs, req.RawInputContents, req.Outputs = ins, raws, ro
}
