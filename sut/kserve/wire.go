package kserve

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unsafe"
)

// The HTTP header of the binary tensor data extension: the length of the
// JSON part of a body whose binary tensor data follows it.
const headerContentLength = "Inference-Header-Content-Length"

// maxBody bounds the response body the client reads, so that a server that
// sends without end cannot exhaust memory.
const maxBody = 64 << 20

// appendJSONRequest appends the JSON of an inference request for one FP32
// input tensor. With binary, the tensor data is not in the JSON: the caller
// appends it after, little-endian, and the JSON says its size; the output
// is then asked for as binary data too.
func appendJSONRequest(b []byte, id string, l *layout, x []float32, binary bool) []byte {
	b = appendID(b, id)
	b = append(b, `"inputs":[{"name":`...)
	b = strconv.AppendQuote(b, l.inName)
	b = append(b, `,"datatype":"FP32","shape":[`...)
	for i, d := range l.shape {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, d, 10)
	}
	b = append(b, ']')
	if binary {
		b = append(b, `,"parameters":{"binary_data_size":`...)
		b = strconv.AppendInt(b, int64(4*len(x)), 10)
		b = append(b, `}}],"outputs":[{"name":`...)
		b = strconv.AppendQuote(b, l.outName)
		return append(b, `,"parameters":{"binary_data":true}}]}`...)
	}
	b = append(b, `,"data":[`...)
	for i, v := range x {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat32(b, v)
	}
	b = append(b, `]}],"outputs":[{"name":`...)
	b = strconv.AppendQuote(b, l.outName)
	return append(b, `}]}`...)
}

// appendID appends the opening of a request's JSON and its "id" member;
// an empty id is left out (the member is optional in the protocol).
func appendID(b []byte, id string) []byte {
	b = append(b, '{')
	if id == "" {
		return b
	}
	b = append(b, `"id":`...)
	b = strconv.AppendQuote(b, id)
	return append(b, ',')
}

// appendFloat32 appends v in the shortest form that reads back exactly;
// NaN and infinities, which JSON cannot hold, are written as 0. Values
// p/255 (8-bit pixels scaled to [0, 1], as package dataset gives them) come
// from a table: formatting them anew costs more than the rest of a request.
func appendFloat32(b []byte, v float32) []byte {
	if v >= 0 && v <= 1 {
		k := int(v*255 + 0.5)
		if float32(k)/255 == v {
			return append(b, pixelText[k]...)
		}
	}
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		return append(b, '0')
	}
	return strconv.AppendFloat(b, float64(v), 'g', -1, 32)
}

// pixelText holds the shortest text of float32(k)/255 for k = 0…255; it is
// computed once and only read.
var pixelText = func() (t [256]string) {
	for k := range t {
		t[k] = strconv.FormatFloat(float64(float32(k)/255), 'g', -1, 32)
	}
	return
}()

// appendRaw appends x as little-endian FP32 bytes, the layout of raw and
// binary tensor data.
func appendRaw(b []byte, x []float32) []byte {
	for _, v := range x {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// v2Response is the JSON of an inference response (or of an error).
type v2Response struct {
	ModelName string     `json:"model_name"`
	ID        string     `json:"id"`
	Outputs   []v2Output `json:"outputs"`
	Error     string     `json:"error"`
}

type v2Output struct {
	Name       string          `json:"name"`
	Datatype   string          `json:"datatype"`
	Shape      []int64         `json:"shape"`
	Parameters v2Params        `json:"parameters"`
	Data       json.RawMessage `json:"data"`
}

type v2Params struct {
	// BinaryDataSize is the size of the tensor's binary data after the
	// JSON; nil when the data is in the JSON.
	BinaryDataSize *int64 `json:"binary_data_size"`
}

// errDecode marks response decoding failures.
var errDecode = errors.New("malformed inference response")

// errServer marks a response that is the server's error object.
var errServer = errors.New("server error")

// decodeHTTPResponse reads the top-1 class of output name (the first output
// if name is empty) from an HTTP inference response body; jsonLen is the
// value of Inference-Header-Content-Length (-1 when absent: the whole body
// is JSON).
func decodeHTTPResponse(body []byte, jsonLen int, name string) (uint8, error) {
	js, bin := body, []byte(nil)
	if jsonLen >= 0 {
		if jsonLen > len(body) {
			return 0, fmt.Errorf("%w: %s %d is longer than the body (%d bytes)", errDecode, headerContentLength, jsonLen, len(body))
		}
		js, bin = body[:jsonLen], body[jsonLen:]
	}
	var r v2Response
	if err := json.Unmarshal(js, &r); err != nil {
		return 0, fmt.Errorf("%w: %w", errDecode, err)
	}
	if r.Error != "" {
		return 0, fmt.Errorf("%w: %w: %s", errDecode, errServer, prefix(r.Error))
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
		return 0, err
	}
	for i, o := range r.Outputs {
		if name != "" && o.Name != name {
			continue
		}
		if parts[i] != nil {
			return top1Raw(o.Datatype, parts[i])
		}
		return top1JSON(o.Datatype, o.Data)
	}
	if name == "" {
		return 0, fmt.Errorf("%w: no outputs", errDecode)
	}
	return 0, fmt.Errorf("%w: no output %q", errDecode, name)
}

// splitBinary cuts the binary part of a body into the data of each tensor:
// sizes[i] ≥ 0 is the binary_data_size of tensor i, -1 a tensor whose data
// is in the JSON (nil part). The sizes must add up to len(bin) exactly.
func splitBinary(sizes []int64, bin []byte) ([][]byte, error) {
	parts := make([][]byte, len(sizes))
	off := int64(0)
	for i, n := range sizes {
		if n < 0 {
			if n != -1 {
				return nil, fmt.Errorf("%w: tensor %d: negative binary_data_size %d", errDecode, i, n)
			}
			continue
		}
		if n > int64(len(bin))-off {
			return nil, fmt.Errorf("%w: tensor %d: binary_data_size %d goes past the end of the body (%d bytes of binary data, %d used)", errDecode, i, n, len(bin), off)
		}
		parts[i] = bin[off : off+n : off+n]
		off += n
	}
	if off != int64(len(bin)) {
		return nil, fmt.Errorf("%w: %d bytes of binary data after the last tensor", errDecode, int64(len(bin))-off)
	}
	return parts, nil
}

// elemSize is the byte size of one element of a numeric datatype, 0 for
// others (BYTES, unknown).
func elemSize(dt string) int {
	switch dt {
	case "BOOL", "INT8", "UINT8":
		return 1
	case "INT16", "UINT16", "FP16", "BF16":
		return 2
	case "INT32", "UINT32", "FP32":
		return 4
	case "INT64", "UINT64", "FP64":
		return 8
	}
	return 0
}

// isInt tells whether dt is an integer datatype.
func isInt(dt string) bool {
	switch dt {
	case "INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64":
		return true
	}
	return false
}

// rawValue reads element i of raw little-endian data of datatype dt.
func rawValue(dt string, b []byte, i int) float64 {
	switch dt {
	case "BOOL", "UINT8":
		return float64(b[i])
	case "INT8":
		return float64(int8(b[i]))
	case "INT16":
		return float64(int16(binary.LittleEndian.Uint16(b[2*i:])))
	case "UINT16":
		return float64(binary.LittleEndian.Uint16(b[2*i:]))
	case "INT32":
		return float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case "UINT32":
		return float64(binary.LittleEndian.Uint32(b[4*i:]))
	case "FP32":
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	case "INT64":
		return float64(int64(binary.LittleEndian.Uint64(b[8*i:])))
	case "UINT64":
		return float64(binary.LittleEndian.Uint64(b[8*i:]))
	case "FP64":
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return 0
}

// top1Raw returns the class an output in raw bytes stands for (see
// classOf).
func top1Raw(dt string, b []byte) (uint8, error) {
	size := elemSize(dt)
	if size == 0 || dt == "FP16" || dt == "BF16" {
		return 0, fmt.Errorf("%w: output datatype %q is not supported (want FP32, FP64 or an integer type)", errDecode, dt)
	}
	if len(b)%size != 0 {
		return 0, fmt.Errorf("%w: %d bytes of %s data is not a whole number of elements", errDecode, len(b), dt)
	}
	var a argmax
	for i := range len(b) / size {
		a.add(rawValue(dt, b, i))
	}
	return a.class(dt)
}

// argmax keeps the first position of the largest value seen.
type argmax struct {
	n, best int
	max     float64
	first   float64
}

func (a *argmax) add(v float64) {
	if a.n == 0 {
		a.first = v
	}
	if a.n == 0 || v > a.max {
		a.max, a.best = v, a.n
	}
	a.n++
}

// class is the predicted class: for an integer output of one element, its
// value (a classifier that returns the label); otherwise the position of the
// largest value (logits or probabilities of one sample).
func (a *argmax) class(dt string) (uint8, error) {
	switch {
	case a.n == 0:
		return 0, fmt.Errorf("%w: empty output tensor", errDecode)
	case a.n == 1 && isInt(dt):
		if a.first < 0 || a.first > 255 || a.first != math.Trunc(a.first) {
			return 0, fmt.Errorf("%w: class %v is not in 0..255", errDecode, a.first)
		}
		return uint8(a.first), nil
	case a.best > 255:
		return 0, fmt.Errorf("%w: top-1 position %d is not a class in 0..255", errDecode, a.best)
	}
	return uint8(a.best), nil
}

// top1JSON is top1Raw for data in the JSON: a flat or nested array of
// numbers.
func top1JSON(dt string, data []byte) (uint8, error) {
	if elemSize(dt) == 0 || dt == "BOOL" {
		return 0, fmt.Errorf("%w: output datatype %q is not supported (want FP32, FP64 or an integer type)", errDecode, dt)
	}
	var a argmax
	if err := ScanNumbers(data, a.add); err != nil {
		return 0, err
	}
	return a.class(dt)
}

// ScanNumbers calls fn with every number of data, the JSON "data" of a v2
// tensor: an array of numbers, nested arrays flattened in row-major order.
// It does not allocate. The error of malformed data says where it failed.
func ScanNumbers(data []byte, fn func(float64)) error {
	i, depth := 0, 0
	skip := func() {
		for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
			i++
		}
	}
	unexpected := func() error {
		if i == len(data) {
			return fmt.Errorf("%w: tensor data ends inside an array", errDecode)
		}
		return fmt.Errorf("%w: tensor data: unexpected %q at byte %d", errDecode, data[i], i)
	}
	// closeOrComma reads what follows a value: ',' (another value comes)
	// or one or more ']'. It reports whether the outermost array ended.
	closeOrComma := func() (bool, error) {
		for {
			skip()
			switch {
			case i == len(data):
				return false, unexpected()
			case data[i] == ',':
				i++
				return false, nil
			case data[i] != ']':
				return false, unexpected()
			}
			i++
			depth--
			if depth == 0 {
				skip()
				if i != len(data) {
					return false, fmt.Errorf("%w: tensor data: bytes after the array", errDecode)
				}
				return true, nil
			}
		}
	}
	skip()
	if i == len(data) || data[i] != '[' {
		return fmt.Errorf("%w: tensor data is not a JSON array", errDecode)
	}
	for {
		skip()
		if i == len(data) {
			return unexpected()
		}
		switch c := data[i]; {
		case c == '[':
			depth++
			i++
			skip()
			if i == len(data) || data[i] != ']' {
				continue
			}
			// An empty array: a value like any other.
			i++
			depth--
			if depth == 0 {
				skip()
				if i != len(data) {
					return fmt.Errorf("%w: tensor data: bytes after the array", errDecode)
				}
				return nil
			}
		case c == '-' || (c >= '0' && c <= '9'):
			j := i
			for j < len(data) && (data[j] == '-' || data[j] == '+' || data[j] == '.' || data[j] == 'e' || data[j] == 'E' || (data[j] >= '0' && data[j] <= '9')) {
				j++
			}
			v, err := strconv.ParseFloat(unsafe.String(&data[i], j-i), 64)
			if err != nil {
				return fmt.Errorf("%w: tensor data: bad number %q", errDecode, prefix(string(data[i:j])))
			}
			fn(v)
			i = j
		default:
			return unexpected()
		}
		done, err := closeOrComma()
		if err != nil || done {
			return err
		}
	}
}

// prefix shortens s for an error message.
func prefix(s string) string {
	const n = 200
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
