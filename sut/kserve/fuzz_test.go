package kserve

import (
	"math"
	"strconv"
	"testing"
)

// FuzzDecodeHTTPResponse feeds arbitrary bodies and header lengths to the
// response decoder: it must never panic, and a class it returns must come
// with no error.
func FuzzDecodeHTTPResponse(f *testing.F) {
	for _, s := range []struct {
		body string
		hl   int
	}{
		{`{"outputs":[{"name":"logits","datatype":"FP32","shape":[1,3],"data":[0.1,0.7,0.2]}]}`, -1},
		{`{"outputs":[{"name":"logits","datatype":"FP32","shape":[1,3],"data":[[0.1],[0.7],[0.2]]}]}`, -1},
		{`{"outputs":[{"name":"label","datatype":"INT64","shape":[1],"data":[7]}]}`, -1},
		{`{"outputs":[{"name":"logits","datatype":"FP32","shape":[1,2],"parameters":{"binary_data_size":8}}]}` + "\x00\x00\x80\x3f\x00\x00\x00\x40", 99},
		{`{"error":"bad"}`, -1},
		{`{"outputs":[{"name":"x","datatype":"BYTES","data":["a"]}]}`, -1},
		{`{"outputs":[]}`, 3},
	} {
		f.Add([]byte(s.body), s.hl, "")
	}
	f.Fuzz(func(t *testing.T, body []byte, hl int, name string) {
		if hl < -1 {
			hl = -1
		}
		c, err := decodeHTTPResponse(body, hl, name)
		if err != nil && c != 0 {
			t.Fatalf("class %d with error %v", c, err)
		}
	})
}

// FuzzSplitBinary: the parts of a successful split lie inside the binary
// data and add up to it.
func FuzzSplitBinary(f *testing.F) {
	f.Add(int64(4), int64(-1), int64(4), []byte("abcdefgh"))
	f.Add(int64(0), int64(0), int64(-1), []byte(""))
	f.Add(int64(9), int64(-2), int64(1), []byte("abc"))
	f.Fuzz(func(t *testing.T, a, b, c int64, bin []byte) {
		parts, err := splitBinary([]int64{a, b, c}, bin)
		if err != nil {
			return
		}
		total := 0
		for i, p := range parts {
			if p == nil {
				if []int64{a, b, c}[i] != -1 {
					t.Fatalf("part %d missing", i)
				}
				continue
			}
			total += len(p)
		}
		if total != len(bin) {
			t.Fatalf("parts hold %d bytes of %d", total, len(bin))
		}
	})
}

// FuzzScanNumbers checks the tensor data scanner against encoding/json's
// idea of a number array: it must not panic, and every value it reports
// must be a finite or infinite float, never NaN.
func FuzzScanNumbers(f *testing.F) {
	for _, s := range []string{`[1,2,3]`, `[[1,2],[3,4]]`, `[]`, `[[]]`, `[1e400]`, `[-0.5e-3 , 2]`, `[1,]`, `[`, `]`, `[1 2]`, `[[1],2]`, `[1]x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		err := ScanNumbers(data, func(v float64) {
			if math.IsNaN(v) {
				t.Fatalf("NaN from %q", data)
			}
			n++
		})
		_ = err
	})
}

// TestScanNumbers pins the scanner's answers.
func TestScanNumbers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []float64
		ok   bool
		why  string
	}{
		{`[1,2.5,-3]`, []float64{1, 2.5, -3}, true, "flat"},
		{` [ [1 , 2] , [3] ] `, []float64{1, 2, 3}, true, "nested with spaces, row-major"},
		{`[]`, nil, true, "empty"},
		{`[[],[1]]`, []float64{1}, true, "empty inner array"},
		{`[1,]`, nil, false, "trailing comma"},
		{`[1 2]`, nil, false, "missing comma"},
		{`[1`, nil, false, "unterminated"},
		{`[1]]`, nil, false, "bytes after the array"},
		{`1`, nil, false, "not an array"},
		{`["a"]`, nil, false, "a string"},
		{`[1-]`, nil, false, "bad number"},
	} {
		var got []float64
		err := ScanNumbers([]byte(c.in), func(v float64) { got = append(got, v) })
		if (err == nil) != c.ok {
			t.Errorf("%s: %q: error %v", c.why, c.in, err)
			continue
		}
		if c.ok && len(got) != len(c.want) {
			t.Errorf("%s: %q: got %v, want %v", c.why, c.in, got, c.want)
			continue
		}
		for i := range got {
			if c.ok && got[i] != c.want[i] {
				t.Errorf("%s: %q: got %v, want %v", c.why, c.in, got, c.want)
				break
			}
		}
	}
}

// TestDecodeHTTPResponse pins the top-1 rules.
func TestDecodeHTTPResponse(t *testing.T) {
	bin := `{"outputs":[{"name":"a","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":4}},{"name":"logits","datatype":"FP32","shape":[1,2],"parameters":{"binary_data_size":8}}]}`
	for _, c := range []struct {
		body string
		hl   int
		name string
		want uint8
		ok   bool
		why  string
	}{
		{`{"outputs":[{"name":"logits","datatype":"FP32","data":[0.1,0.7,0.2]}]}`, -1, "logits", 1, true, "argmax of logits"},
		{`{"outputs":[{"name":"logits","datatype":"FP32","data":[0.5,0.5]}]}`, -1, "", 0, true, "ties go to the first"},
		{`{"outputs":[{"name":"label","datatype":"INT64","data":[7]}]}`, -1, "", 7, true, "an integer label is the class"},
		{`{"outputs":[{"name":"label","datatype":"INT64","data":[300]}]}`, -1, "", 0, false, "a label over 255"},
		{bin + "\x00\x00\x00\x00" + "\x00\x00\x80\x3f\x00\x00\x00\x40", len(bin), "logits", 1, true, "binary: the second tensor's data"},
		{bin + "\x00\x00\x00\x00", len(bin), "logits", 0, false, "binary data cut short"},
		{`{"outputs":[{"name":"x","datatype":"BYTES","data":["a"]}]}`, -1, "", 0, false, "BYTES is not a class"},
		{`{"outputs":[{"name":"logits","datatype":"FP32","data":[]}]}`, -1, "", 0, false, "empty output"},
	} {
		got, err := decodeHTTPResponse([]byte(c.body), c.hl, c.name)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("%s: got %d, %v; want %d (ok %v)", c.why, got, err, c.want, c.ok)
		}
	}
}

// TestAppendFloat32 checks that the pixel table and the general path both
// read back exactly.
func TestAppendFloat32(t *testing.T) {
	vals := []float32{0, 1, 0.5, -1.25, 3e-8, 1e30, 1.0 / 3}
	for k := range 256 {
		vals = append(vals, float32(k)/255)
	}
	for _, v := range vals {
		s := string(appendFloat32(nil, v))
		got, err := strconv.ParseFloat(s, 32)
		if err != nil || float32(got) != v {
			t.Errorf("%v written as %q", v, s)
		}
	}
	if s := string(appendFloat32(nil, float32(math.NaN()))); s != "0" {
		t.Errorf("NaN written as %q", s)
	}
}
