package kserve

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"aimeter/loadgen"
	"aimeter/sut/netsut"
)

// CategoryProtocol is the error category of a response that does not
// match the model metadata: an output the metadata does not list, or one
// of another datatype, an incompatible shape, or a data size that is not
// its shape's.
const CategoryProtocol = netsut.CategoryProtocol

// DataMode is how Inputs fills tensors when no input data file is given.
type DataMode string

const (
	// DataRandom fills every sample with seeded pseudo-random values
	// (InputOptions.Seed): floats uniform in [0, 1), integers uniform in
	// 0…127 (valid for every integer type), BOOL true or false, BYTES 16
	// random lowercase letters per element. The same seed gives the same
	// data on every run.
	DataRandom DataMode = "random"
	// DataZero fills every sample with zeros (false, and empty strings for
	// BYTES).
	DataZero DataMode = "zero"
)

// InputOptions say how to build the requests of a model from its
// metadata, after Triton's perf_analyzer (-b, --shape, --input-data). The
// zero value sends batch-1 requests of seeded random data for models with
// no dynamic dimension but the batch dimension.
type InputOptions struct {
	// Shapes gives the shape of inputs with dynamic (-1) dimensions, by
	// input name. A shape of the input's rank is its whole shape; one of
	// one dimension less, for an input whose first dimension is -1, is the
	// shape without the batch dimension (perf_analyzer's --shape), the
	// batch dimension being BatchSize. Fixed dimensions of the metadata
	// must be given as they are. Nil means no input has one: a dynamic
	// dimension other than a leading batch dimension is then an error,
	// before the run, naming the input.
	Shapes map[string][]int64
	// BatchSize is the size of the batch dimension: the first dimension
	// of an input when the metadata gives it as -1 (the KServe v2 metadata
	// has no max_batch_size, so a leading -1 is taken for the batch
	// dimension, as Triton reports batching models). 0 means 1.
	BatchSize int
	// Mode is the data of generated samples; "" means DataRandom. Ignored
	// when File is set.
	Mode DataMode
	// Seed seeds DataRandom; sample i's data depends only on Seed, i and
	// the input's position, so runs repeat. 0 is a seed like any other.
	Seed uint64
	// File is a JSON input data file in perf_analyzer's format:
	// {"data": [{"INPUT0": [...], "INPUT1": {"content": [...], "shape":
	// [...]}}, ...]}; every entry is one sample and must give every input.
	// Values are flat or nested arrays of numbers (true/false for BOOL,
	// strings or {"b64": "..."} for BYTES), or {"b64": "..."} holding the
	// tensor's raw little-endian bytes. An entry's data may be the whole
	// tensor or, for an input with a batch dimension, one batch item,
	// repeated BatchSize times. "" means generated data (Mode).
	File string
	// Samples is the number of samples of the QSL; 0 means the number of
	// entries of File, or 1024 for generated data. Samples beyond a
	// file's entries repeat them in order.
	Samples uint64
	// PerformanceSamples is the number of samples the QSL reports as
	// fitting in memory (loadgen's performance sample count); 0 means all
	// of them, or as many as fit in 256 MiB of tensor data.
	PerformanceSamples uint64
}

// TensorSpec is one tensor of the model metadata.
type TensorSpec struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

// Tensor is one input tensor of a request.
type Tensor struct {
	Name     string
	Datatype string
	Shape    []int64
	// Raw is the tensor data, row-major, in the layout of the protocol's
	// raw and binary tensor data: little-endian numbers, BOOL one byte,
	// BYTES every element as a 4-byte little-endian length and its bytes.
	Raw []byte
}

// Inputs is a sample library of model inputs built from the model
// metadata: a loadgen.QSL whose sample i is one inference request's input
// tensors. Create it with NewInputs; Check of an Endpoint whose
// Options.Data is set makes one (Endpoint.Inputs). It is safe for
// concurrent use.
type Inputs struct {
	specs []TensorSpec // the resolved request shapes; Shape of a BYTES/file input may vary
	opts  InputOptions
	n     uint64
	perf  uint64
	file  [][]Tensor // the samples of File, if any

	mu     sync.RWMutex
	loaded map[uint64][]Tensor
}

var _ loadgen.QSL = (*Inputs)(nil)

// InputsError is an error of the input data, found before the run: a
// dynamic dimension without a shape, or a data file that does not match
// the model.
type InputsError struct{ Err error }

func (e *InputsError) Error() string { return e.Err.Error() }
func (e *InputsError) Unwrap() error { return e.Err }

func inputsErr(format string, a ...any) error {
	return &InputsError{Err: fmt.Errorf(format, a...)}
}

// NewInputs builds the sample library of a model whose inputs the metadata
// lists. Errors are *InputsError.
func NewInputs(inputs []TensorSpec, opts InputOptions) (*Inputs, error) {
	if len(inputs) == 0 {
		return nil, inputsErr("the model metadata lists no inputs")
	}
	if opts.BatchSize < 0 {
		return nil, inputsErr("batch size %d: want at least 1", opts.BatchSize)
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = 1
	}
	switch opts.Mode {
	case "", DataRandom, DataZero:
	default:
		return nil, inputsErr("input data mode %q: want random or zero", opts.Mode)
	}
	known := map[string]bool{}
	for _, in := range inputs {
		known[in.Name] = true
		if elemSize(in.Datatype) == 0 && in.Datatype != "BYTES" {
			return nil, inputsErr("input %q: datatype %q is not supported (want BOOL, INT8…64, UINT8…64, FP16, FP32, FP64 or BYTES)", in.Name, in.Datatype)
		}
		if in.Datatype == "BF16" {
			return nil, inputsErr("input %q: datatype BF16 is not supported", in.Name)
		}
	}
	for name := range opts.Shapes {
		if !known[name] {
			return nil, inputsErr("--shape %s: the model has no input %q (inputs: %s)", name, name, specNames(inputs))
		}
	}
	in := &Inputs{opts: opts, loaded: map[uint64][]Tensor{}}
	if opts.File != "" {
		samples, err := readInputData(opts.File, inputs, opts)
		if err != nil {
			return nil, err
		}
		in.file = samples
		in.n = uint64(len(samples))
		in.specs = inputs
	} else {
		for _, s := range inputs {
			shape, err := resolveShape(s, opts, nil, "")
			if err != nil {
				return nil, err
			}
			in.specs = append(in.specs, TensorSpec{Name: s.Name, Datatype: s.Datatype, Shape: shape})
		}
		in.n = 1024
	}
	if opts.Samples > 0 {
		in.n = opts.Samples
	}
	in.perf = in.n
	if opts.PerformanceSamples > 0 && opts.PerformanceSamples < in.n {
		in.perf = opts.PerformanceSamples
	} else if in.file == nil {
		per := uint64(1)
		for _, s := range in.specs {
			per += uint64(numel(s.Shape)) * uint64(max(elemSize(s.Datatype), 20))
		}
		if fit := uint64(256<<20) / per; fit < in.perf {
			in.perf = max(fit, 1)
		}
	}
	return in, nil
}

func specNames(ts []TensorSpec) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = fmt.Sprintf("%s %s %v", t.Name, t.Datatype, t.Shape)
	}
	return strings.Join(s, "; ")
}

func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// resolveShape gives the request shape of input s: given (a data file
// entry's shape) or the --shape option, the batch dimension, the
// metadata's fixed dimensions. where names the data file entry, if any.
func resolveShape(s TensorSpec, opts InputOptions, given []int64, where string) ([]int64, error) {
	if len(s.Shape) == 0 {
		return []int64{}, nil
	}
	batched := s.Shape[0] == -1
	src := "--shape " + s.Name
	if given == nil {
		given = opts.Shapes[s.Name]
	} else {
		src = where + ": the shape of input " + strconv.Quote(s.Name)
	}
	out := slices.Clone(s.Shape)
	switch {
	case given == nil:
		if batched {
			out[0] = int64(opts.BatchSize)
		}
	case len(given) == len(s.Shape):
		copy(out, given)
	case batched && len(given) == len(s.Shape)-1:
		out[0] = int64(opts.BatchSize)
		copy(out[1:], given)
	default:
		return nil, inputsErr("%s: %v has %d dimensions; input %q has shape %v", src, given, len(given), s.Name, s.Shape)
	}
	for i, d := range out {
		switch {
		case d == -1:
			if where != "" {
				return nil, inputsErr("%s: input %q has the dynamic dimension %d in shape %v: give its shape in the entry (\"shape\") or with --shape %s:d1,d2,…", where, s.Name, i, s.Shape, s.Name)
			}
			return nil, inputsErr("input %q has the dynamic dimension %d in shape %v: give its shape with --shape %s:d1,d2,…", s.Name, i, s.Shape, s.Name)
		case d < 0 || d > 1<<30:
			return nil, inputsErr("%s: bad dimension %d in %v", src, d, out)
		case s.Shape[i] >= 0 && d != s.Shape[i]:
			return nil, inputsErr("%s: %v does not fit input %q's shape %v (dimension %d is %d)", src, out, s.Name, s.Shape, i, s.Shape[i])
		}
	}
	if n := numel(out); n > 1<<28 {
		return nil, inputsErr("input %q: shape %v has %d elements, too many", s.Name, out, n)
	}
	return out, nil
}

// TotalSampleCount is the number of samples.
func (in *Inputs) TotalSampleCount() uint64 { return in.n }

// PerformanceSampleCount is the number of samples that fit in memory.
func (in *Inputs) PerformanceSampleCount() uint64 { return in.perf }

// Name describes the samples.
func (in *Inputs) Name() string {
	if in.opts.File != "" {
		return fmt.Sprintf("%d samples from %s", in.n, in.opts.File)
	}
	mode := in.opts.Mode
	if mode == "" {
		mode = DataRandom
	}
	return fmt.Sprintf("%d samples of %s data (%s)", in.n, mode, specNames(in.specs))
}

// LoadSamples makes the tensors of the samples at idx.
func (in *Inputs) LoadSamples(idx []uint64) error {
	made := make(map[uint64][]Tensor, len(idx))
	for _, i := range idx {
		if i >= in.n {
			return fmt.Errorf("kserve inputs: sample %d of %d", i, in.n)
		}
		if _, ok := made[i]; !ok {
			made[i] = in.make(i)
		}
	}
	in.mu.Lock()
	maps.Copy(in.loaded, made)
	in.mu.Unlock()
	return nil
}

// UnloadSamples drops the tensors of the samples at idx.
func (in *Inputs) UnloadSamples(idx []uint64) error {
	in.mu.Lock()
	for _, i := range idx {
		delete(in.loaded, i)
	}
	in.mu.Unlock()
	return nil
}

// Tensors returns the input tensors of a loaded sample; they must not be
// changed.
func (in *Inputs) Tensors(index uint64) ([]Tensor, bool) {
	in.mu.RLock()
	t, ok := in.loaded[index]
	in.mu.RUnlock()
	return t, ok
}

// Specs returns the request shape of every input (the first sample's,
// for a data file).
func (in *Inputs) Specs() []TensorSpec {
	if in.file != nil {
		out := make([]TensorSpec, len(in.file[0]))
		for i, t := range in.file[0] {
			out[i] = TensorSpec{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape}
		}
		return out
	}
	return slices.Clone(in.specs)
}

func (in *Inputs) make(i uint64) []Tensor {
	if in.file != nil {
		return in.file[i%uint64(len(in.file))]
	}
	out := make([]Tensor, len(in.specs))
	for j, s := range in.specs {
		var rng *rand.Rand
		if in.opts.Mode != DataZero {
			rng = rand.New(rand.NewPCG(in.opts.Seed, i<<8|uint64(j)))
		}
		out[j] = Tensor{Name: s.Name, Datatype: s.Datatype, Shape: s.Shape, Raw: genRaw(s.Datatype, int(numel(s.Shape)), rng)}
	}
	return out
}

// genRaw makes n elements of dt: zeros when rng is nil.
func genRaw(dt string, n int, rng *rand.Rand) []byte {
	if dt == "BYTES" {
		const strLen = 16
		if rng == nil {
			return make([]byte, 4*n)
		}
		b := make([]byte, 0, n*(4+strLen))
		for range n {
			b = binary.LittleEndian.AppendUint32(b, strLen)
			for range strLen {
				b = append(b, byte('a'+rng.IntN(26)))
			}
		}
		return b
	}
	size := elemSize(dt)
	b := make([]byte, n*size)
	if rng == nil {
		return b
	}
	for k := range n {
		var v float64
		switch {
		case dt == "BOOL":
			v = float64(rng.IntN(2))
		case isInt(dt):
			v = float64(rng.IntN(128))
		default:
			v = rng.Float64()
		}
		putValue(dt, b[k*size:], v)
	}
	return b
}

// putValue writes v as one element of numeric dt at b.
func putValue(dt string, b []byte, v float64) {
	switch dt {
	case "BOOL", "UINT8":
		b[0] = byte(v)
	case "INT8":
		b[0] = byte(int8(v))
	case "INT16":
		binary.LittleEndian.PutUint16(b, uint16(int16(v)))
	case "UINT16":
		binary.LittleEndian.PutUint16(b, uint16(v))
	case "INT32":
		binary.LittleEndian.PutUint32(b, uint32(int32(v)))
	case "UINT32":
		binary.LittleEndian.PutUint32(b, uint32(v))
	case "INT64":
		binary.LittleEndian.PutUint64(b, uint64(int64(v)))
	case "UINT64":
		binary.LittleEndian.PutUint64(b, uint64(v))
	case "FP16":
		binary.LittleEndian.PutUint16(b, f32ToF16(float32(v)))
	case "FP32":
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v)))
	case "FP64":
		binary.LittleEndian.PutUint64(b, math.Float64bits(v))
	}
}

// f32ToF16 converts f to IEEE 754 half precision, rounding to nearest even.
func f32ToF16(f float32) uint16 {
	u := math.Float32bits(f)
	sign := uint16(u>>16) & 0x8000
	exp := int(u>>23&0xff) - 127 + 15
	man := u & 0x7fffff
	switch {
	case u&0x7fffffff == 0:
		return sign
	case u>>23&0xff == 0xff: // Inf, NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint(14 - exp)
		h := man >> shift
		rem := man & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, which is right
	}
	return sign | uint16(h)
}

// f16ToF32 converts IEEE 754 half precision to float32.
func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h >> 10 & 0x1f)
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		return float32(math.Copysign(float64(man)/(1<<24), float64(int32(sign)|1)))
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// readInputData reads a perf_analyzer JSON input data file.
func readInputData(path string, inputs []TensorSpec, opts InputOptions) ([][]Tensor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, inputsErr("--input-data: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var f struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if err := d.Decode(&f); err != nil {
		return nil, inputsErr("--input-data %s: not perf_analyzer input data JSON: %w", path, err)
	}
	if len(f.Data) == 0 {
		return nil, inputsErr(`--input-data %s: no entries in "data"`, path)
	}
	known := map[string]bool{}
	for _, s := range inputs {
		known[s.Name] = true
	}
	out := make([][]Tensor, len(f.Data))
	for k, e := range f.Data {
		where := fmt.Sprintf("--input-data %s: entry %d", path, k)
		var extra []string
		for name := range e {
			if !known[name] {
				extra = append(extra, name)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			return nil, inputsErr("%s: the model has no input %s (inputs: %s)", where, strings.Join(extra, ", "), specNames(inputs))
		}
		for _, s := range inputs {
			v, ok := e[s.Name]
			if !ok {
				return nil, inputsErr("%s: no data for input %q", where, s.Name)
			}
			t, err := fileTensor(s, v, opts, where)
			if err != nil {
				return nil, err
			}
			out[k] = append(out[k], t)
		}
	}
	return out, nil
}

// fileTensor converts the data of input s in one entry.
func fileTensor(s TensorSpec, v json.RawMessage, opts InputOptions, where string) (Tensor, error) {
	var given []int64
	content := v
	var b64 string
	if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '{' {
		var obj struct {
			Content json.RawMessage `json:"content"`
			Shape   []int64         `json:"shape"`
			B64     *string         `json:"b64"`
		}
		if err := json.Unmarshal(t, &obj); err != nil {
			return Tensor{}, inputsErr("%s, input %q: %w", where, s.Name, err)
		}
		given = obj.Shape
		switch {
		case obj.B64 != nil:
			b64 = *obj.B64
		case obj.Content != nil:
			content = obj.Content
			if t := bytes.TrimSpace(content); len(t) > 0 && t[0] == '{' {
				var c struct {
					B64 *string `json:"b64"`
				}
				if err := json.Unmarshal(t, &c); err != nil || c.B64 == nil {
					return Tensor{}, inputsErr(`%s, input %q: "content" is neither an array nor {"b64": …}`, where, s.Name)
				}
				b64 = *c.B64
			}
		default:
			return Tensor{}, inputsErr(`%s, input %q: an object needs "content" or "b64"`, where, s.Name)
		}
	}
	full, err := resolveShape(s, opts, given, where)
	if err != nil {
		return Tensor{}, err
	}
	want := int(numel(full))
	item := want
	if len(s.Shape) > 0 && s.Shape[0] == -1 && full[0] > 0 {
		item = want / int(full[0])
	}
	var raw []byte
	var n int
	if b64 != "" || (content != nil && bytes.HasPrefix(bytes.TrimSpace(content), []byte(`"`))) {
		raw, err = base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return Tensor{}, inputsErr("%s, input %q: b64: %w", where, s.Name, err)
		}
		if s.Datatype == "BYTES" {
			n, err = countBytesElems(raw)
			if err != nil {
				return Tensor{}, inputsErr("%s, input %q: b64 BYTES data: %w", where, s.Name, err)
			}
		} else {
			size := elemSize(s.Datatype)
			if len(raw)%size != 0 {
				return Tensor{}, inputsErr("%s, input %q: %d bytes of b64 data is not a whole number of %s elements (%d bytes each)", where, s.Name, len(raw), s.Datatype, size)
			}
			n = len(raw) / size
		}
	} else {
		var vals []any
		if err := flatten(content, &vals); err != nil {
			return Tensor{}, inputsErr("%s, input %q: %w", where, s.Name, err)
		}
		n = len(vals)
		raw, err = encodeValues(s.Datatype, vals)
		if err != nil {
			return Tensor{}, inputsErr("%s, input %q (%s): %w", where, s.Name, s.Datatype, err)
		}
	}
	switch {
	case n == want:
	case n == item && item != want:
		raw = bytes.Repeat(raw, want/item)
	default:
		extra := ""
		if item != want {
			extra = fmt.Sprintf(" (or %d, one batch item)", item)
		}
		return Tensor{}, inputsErr("%s, input %q: %d values; its shape %v takes %d%s", where, s.Name, n, full, want, extra)
	}
	return Tensor{Name: s.Name, Datatype: s.Datatype, Shape: full, Raw: raw}, nil
}

// countBytesElems counts the length-prefixed elements of raw BYTES data.
func countBytesElems(raw []byte) (int, error) {
	n := 0
	for off := 0; off < len(raw); n++ {
		if len(raw)-off < 4 {
			return 0, errors.New("truncated length prefix")
		}
		l := int(binary.LittleEndian.Uint32(raw[off:]))
		off += 4
		if l > len(raw)-off {
			return 0, fmt.Errorf("element %d: length %d goes past the end", n, l)
		}
		off += l
	}
	return n, nil
}

// flatten appends the leaves of a (nested) JSON array to out.
func flatten(v json.RawMessage, out *[]any) error {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return err
	}
	var walk func(x any) error
	walk = func(x any) error {
		switch t := x.(type) {
		case []any:
			for _, e := range t {
				if err := walk(e); err != nil {
					return err
				}
			}
		default:
			*out = append(*out, t)
		}
		return nil
	}
	if _, ok := x.([]any); !ok {
		return errors.New("the data is not an array")
	}
	return walk(x)
}

// encodeValues converts JSON values to raw data of dt, checking each.
func encodeValues(dt string, vals []any) ([]byte, error) {
	if dt == "BYTES" {
		var b []byte
		for i, v := range vals {
			var s []byte
			switch t := v.(type) {
			case string:
				s = []byte(t)
			case map[string]any:
				enc, ok := t["b64"].(string)
				if !ok {
					return nil, fmt.Errorf("value %d: an object that is not {\"b64\": …}", i)
				}
				var err error
				if s, err = base64.StdEncoding.DecodeString(enc); err != nil {
					return nil, fmt.Errorf("value %d: b64: %w", i, err)
				}
			default:
				return nil, fmt.Errorf("value %d is %s, not a string", i, jsonKind(v))
			}
			b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
			b = append(b, s...)
		}
		return b, nil
	}
	size := elemSize(dt)
	b := make([]byte, len(vals)*size)
	for i, v := range vals {
		var x float64
		switch t := v.(type) {
		case bool:
			if dt != "BOOL" {
				return nil, fmt.Errorf("value %d is a boolean, not a number", i)
			}
			if t {
				x = 1
			}
		case json.Number:
			if dt == "BOOL" {
				if t != "0" && t != "1" {
					return nil, fmt.Errorf("value %d is %s, not true, false, 0 or 1", i, t)
				}
			}
			if isInt(dt) || dt == "BOOL" {
				if err := checkInt(dt, string(t)); err != nil {
					return nil, fmt.Errorf("value %d: %w", i, err)
				}
				if dt == "INT64" || dt == "UINT64" {
					// Exact: parse again as a 64-bit integer.
					if dt == "INT64" {
						n, _ := strconv.ParseInt(string(t), 10, 64)
						binary.LittleEndian.PutUint64(b[i*size:], uint64(n))
					} else {
						n, _ := strconv.ParseUint(string(t), 10, 64)
						binary.LittleEndian.PutUint64(b[i*size:], n)
					}
					continue
				}
			}
			f, err := t.Float64()
			if err != nil {
				return nil, fmt.Errorf("value %d: %q is not a number", i, t)
			}
			x = f
		default:
			return nil, fmt.Errorf("value %d is %s, not a number", i, jsonKind(v))
		}
		putValue(dt, b[i*size:], x)
	}
	return b, nil
}

// checkInt checks that s is an integer in the range of dt.
func checkInt(dt, s string) error {
	bits := map[string]int{"BOOL": 8, "INT8": 8, "UINT8": 8, "INT16": 16, "UINT16": 16, "INT32": 32, "UINT32": 32, "INT64": 64, "UINT64": 64}[dt]
	if strings.HasPrefix(dt, "U") || dt == "BOOL" {
		if _, err := strconv.ParseUint(s, 10, bits); err != nil {
			return fmt.Errorf("%s is not a %s (an integer in 0…%d)", s, dt, uint64(1)<<bits-1)
		}
		return nil
	}
	if _, err := strconv.ParseInt(s, 10, bits); err != nil {
		return fmt.Errorf("%s is not an %s (an integer in %d…%d)", s, dt, -int64(1)<<(bits-1), uint64(1)<<(bits-1)-1)
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	}
	return "a number"
}
