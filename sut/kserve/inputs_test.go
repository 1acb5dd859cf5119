package kserve

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aimeter/loadgen"
)

func writeFile(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "data.json")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestInputsShapes: a leading -1 is the batch dimension (BatchSize); any
// other dynamic dimension needs --shape and is refused, naming the input,
// without one.
func TestInputsShapes(t *testing.T) {
	specs := []TensorSpec{{"IMAGE", "FP32", []int64{-1, 3, -1, -1}}, {"IDS", "INT64", []int64{-1, 8}}, {"TEXT", "BYTES", []int64{2}}}
	_, err := NewInputs(specs, InputOptions{})
	if _, ok := errors.AsType[*InputsError](err); !ok || !strings.Contains(err.Error(), `input "IMAGE" has the dynamic dimension 2`) || !strings.Contains(err.Error(), "--shape IMAGE:") {
		t.Fatalf("no --shape: %v", err)
	}
	in, err := NewInputs(specs, InputOptions{BatchSize: 4, Shapes: map[string][]int64{"IMAGE": {3, 5, 6}}, Samples: 3})
	if err != nil {
		t.Fatal(err)
	}
	got := in.Specs()
	if s := got[0].Shape; len(s) != 4 || s[0] != 4 || s[2] != 5 || s[3] != 6 {
		t.Errorf("IMAGE shape %v, want [4 3 5 6]", s)
	}
	if s := got[1].Shape; s[0] != 4 || s[1] != 8 {
		t.Errorf("IDS shape %v, want [4 8]", s)
	}
	if _, err := NewInputs(specs, InputOptions{Shapes: map[string][]int64{"IMAGE": {4, 5, 6}}}); err == nil || !strings.Contains(err.Error(), "dimension 1 is 3") {
		t.Errorf("a shape against a fixed dimension: %v", err)
	}
	if _, err := NewInputs(specs, InputOptions{Shapes: map[string][]int64{"NOPE": {1}}}); err == nil || !strings.Contains(err.Error(), `no input "NOPE"`) {
		t.Errorf("--shape of an unknown input: %v", err)
	}
	if err := in.LoadSamples([]uint64{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	a, _ := in.Tensors(1)
	if len(a[0].Raw) != 4*3*5*6*4 || len(a[1].Raw) != 4*8*8 {
		t.Errorf("raw sizes %d, %d", len(a[0].Raw), len(a[1].Raw))
	}
	if n, err := countBytesElems(a[2].Raw); err != nil || n != 2 {
		t.Errorf("BYTES: %d elements, %v", n, err)
	}
	for i := range 32 {
		if v := int64(binary.LittleEndian.Uint64(a[1].Raw[8*i:])); v < 0 || v > 127 {
			t.Fatalf("INT64 random value %d out of 0…127", v)
		}
	}
	// The same seed gives the same data; another sample other data.
	again, _ := NewInputs(specs, InputOptions{BatchSize: 4, Shapes: map[string][]int64{"IMAGE": {3, 5, 6}}, Samples: 3})
	_ = again.LoadSamples([]uint64{1, 2})
	b, _ := again.Tensors(1)
	c, _ := again.Tensors(2)
	if string(a[0].Raw) != string(b[0].Raw) || string(b[0].Raw) == string(c[0].Raw) {
		t.Error("random data is not a function of seed and sample")
	}
	var _ loadgen.QSL = in
	if _, ok := in.Tensors(5); ok {
		t.Error("sample 5 is not loaded")
	}
	zero, _ := NewInputs(specs[1:], InputOptions{Mode: DataZero})
	_ = zero.LoadSamples([]uint64{0})
	z, _ := zero.Tensors(0)
	for _, x := range z[0].Raw {
		if x != 0 {
			t.Fatal("zero data is not zero")
		}
	}
}

// TestInputsFile: perf_analyzer's JSON input data, a wrong count or
// datatype refused naming the input and the entry.
func TestInputsFile(t *testing.T) {
	specs := []TensorSpec{{"INPUT0", "FP32", []int64{-1, 4}}, {"MASK", "BOOL", []int64{-1, 2}}, {"TEXT", "BYTES", []int64{1}}, {"IDX", "INT8", []int64{2}}}
	good := `{"data": [
	 {"INPUT0": [1, 2, 3, 4], "MASK": [true, false], "TEXT": ["hi"], "IDX": [1, -2]},
	 {"INPUT0": {"content": [[1, 2, 3, 4], [5, 6, 7, 8]], "shape": [2, 4]}, "MASK": [[0, 1], [1, 0]], "TEXT": [{"b64": "aGk="}], "IDX": {"b64": "AQI="}}]}`
	in, err := NewInputs(specs, InputOptions{File: writeFile(t, good), BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if in.TotalSampleCount() != 2 {
		t.Errorf("%d samples, want the file's 2", in.TotalSampleCount())
	}
	_ = in.LoadSamples([]uint64{0, 1})
	s0, _ := in.Tensors(0)
	if len(s0[0].Raw) != 2*4*4 || s0[0].Shape[0] != 2 || string(s0[1].Raw) != "\x01\x00\x01\x00" {
		t.Errorf("a batch item repeated to --batch-size 2: %v %v %q", s0[0].Shape, len(s0[0].Raw), s0[1].Raw)
	}
	if string(appendDataJSON(nil, "BYTES", s0[2].Raw)) != `["hi"]` || string(appendDataJSON(nil, "INT8", s0[3].Raw)) != `[1,-2]` {
		t.Errorf("JSON data %s %s", appendDataJSON(nil, "BYTES", s0[2].Raw), appendDataJSON(nil, "INT8", s0[3].Raw))
	}
	for _, c := range []struct{ data, want string }{
		{`{"data": [{"INPUT0": [1, 2, 3], "MASK": [true, false], "TEXT": ["a"], "IDX": [1, 2]}]}`, `entry 0, input "INPUT0": 3 values`},
		{`{"data": [{"INPUT0": [1, 2, 3, 4], "MASK": [true, false], "TEXT": ["a"], "IDX": [1, 300]}]}`, `entry 0, input "IDX" (INT8): value 1: 300 is not an INT8`},
		{`{"data": [{"INPUT0": [1, 2, 3, 4], "MASK": [true, false], "TEXT": ["a"], "IDX": [1, 2.5]}]}`, `input "IDX"`},
		{`{"data": [{"INPUT0": [1, 2, 3, "x"], "MASK": [true, false], "TEXT": ["a"], "IDX": [1, 2]}]}`, `input "INPUT0" (FP32): value 3 is a string`},
		{`{"data": [{"INPUT0": [1, 2, 3, 4], "MASK": [true, false], "TEXT": [1], "IDX": [1, 2]}]}`, `input "TEXT" (BYTES): value 0 is a number`},
		{`{"data": [{"INPUT0": [1, 2, 3, 4], "MASK": [true, false], "TEXT": ["a"], "IDX": [1, 2]}, {"INPUT0": [1, 2, 3, 4]}]}`, `entry 1: no data for input "MASK"`},
		{`{"data": [{"INPUT0": [1, 2, 3, 4], "MASK": [true, false], "TEXT": ["a"], "IDX": [1, 2], "EXTRA": [1]}]}`, `entry 0: the model has no input EXTRA`},
		{`{"data": []}`, `no entries`},
		{`[1, 2]`, `not perf_analyzer input data`},
	} {
		_, err := NewInputs(specs, InputOptions{File: writeFile(t, c.data)})
		if _, ok := errors.AsType[*InputsError](err); !ok || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.data, err, c.want)
		}
	}
	// A dynamic dimension the entry's "shape" gives.
	dyn := []TensorSpec{{"X", "FP16", []int64{-1, -1}}}
	if _, err := NewInputs(dyn, InputOptions{File: writeFile(t, `{"data": [{"X": [1, 2, 3]}]}`)}); err == nil || !strings.Contains(err.Error(), `entry 0: input "X" has the dynamic dimension 1`) {
		t.Errorf("dynamic without a shape: %v", err)
	}
	in, err = NewInputs(dyn, InputOptions{File: writeFile(t, `{"data": [{"X": {"content": [1, 2, 0.5], "shape": [3]}}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	_ = in.LoadSamples([]uint64{0})
	x, _ := in.Tensors(0)
	if got := string(appendDataJSON(nil, "FP16", x[0].Raw)); got != "[1,2,0.5]" || x[0].Shape[1] != 3 {
		t.Errorf("FP16 data %s, shape %v", got, x[0].Shape)
	}
}

func TestF16(t *testing.T) {
	for _, v := range []float32{0, 1, -2, 0.5, 65504, 1e-7, 6.1e-5, 0.333} {
		h := f32ToF16(v)
		back := f16ToF32(h)
		if d := float64(back - v); math.Abs(d) > math.Abs(float64(v))/500+1e-7 {
			t.Errorf("%v → %#x → %v", v, h, back)
		}
	}
	if f32ToF16(1e6) != 0x7c00 {
		t.Error("overflow is not +Inf")
	}
}

// TestCheckOutputs: a response is checked against the metadata's outputs.
func TestCheckOutputs(t *testing.T) {
	meta := []tensorMeta{{"OUT", "FP32", []int64{-1, 2}}}
	ok := `{"outputs":[{"name":"OUT","datatype":"FP32","shape":[3,2],"data":[1,2,3,4,5,6]}]}`
	if err := checkHTTPResponse([]byte(ok), -1, meta); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ body, want string }{
		{`{"outputs":[{"name":"OUT","datatype":"INT64","shape":[3,2],"data":[1,2,3,4,5,6]}]}`, "datatype INT64"},
		{`{"outputs":[{"name":"OUT","datatype":"FP32","shape":[3,3],"data":[1,2,3,4,5,6,7,8,9]}]}`, "shape [3 3]"},
		{`{"outputs":[{"name":"OUT","datatype":"FP32","shape":[3,2],"data":[1,2,3]}]}`, "3 elements"},
		{`{"outputs":[{"name":"OTHER","datatype":"FP32","shape":[1],"data":[1]}]}`, `"OTHER" is not in the model metadata`},
		{`{"outputs":[]}`, "missing from the response"},
	} {
		err := checkHTTPResponse([]byte(c.body), -1, meta)
		var ce *loadgen.CategoryError
		if !errors.As(err, &ce) || ce.Kind != CategoryProtocol || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want protocol %q", c.body, err, c.want)
		}
	}
	if err := checkHTTPResponse([]byte(`{"outputs":[{"name":"OUT","datatype":"FP32","shape":[1,2],"data":[1,{}]}]}`), -1, meta); err == nil || !strings.Contains(err.Error(), "object") {
		t.Errorf("malformed data: %v", err)
	}
}
