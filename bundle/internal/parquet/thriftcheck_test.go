package parquet

import (
	"bytes"
	"errors"
	"testing"
)

func TestCheckThrift(t *testing.T) {
	for _, c := range []struct {
		why  string
		b    []byte
		fail bool
	}{
		{"an empty struct", []byte{0}, false},
		{"an i32 field", []byte{0x15, 0x04, 0}, false},
		{"a binary field of 3 bytes", []byte{0x18, 3, 'a', 'b', 'c', 0}, false},
		{"a binary field longer than what is left", []byte{0x18, 0x80, 0x80, 0x80, 0x80, 0x08, 0}, true},
		{"a list of 2 i32", []byte{0x19, 0x25, 2, 4, 0}, false},
		{"a list declaring 2^31 elements in 4 bytes", []byte{0x19, 0xf5, 0x80, 0x80, 0x80, 0x80, 0x08, 0}, true},
		{"a map declaring more entries than bytes", []byte{0x1b, 0x7f, 0x55, 0}, true},
		{"an unknown type", []byte{0x1d, 0}, true},
		{"no stop byte", []byte{0x15, 0x04}, true},
		{"a bad varint", []byte{0x15, 0x80}, true},
		{"nested deeper than the limit", append(bytes.Repeat([]byte{0x1c}, thriftMaxDepth+2), 0), true},
	} {
		ch := thriftChecker{b: c.b}
		err := ch.structure(0)
		if (err != nil) != c.fail {
			t.Errorf("%s: err %v, want failure %v", c.why, err, c.fail)
		}
		if err != nil && !errors.Is(err, errThrift) {
			t.Errorf("%s: %v does not wrap errThrift", c.why, err)
		}
	}
}

func FuzzCheckThrift(f *testing.F) {
	f.Add([]byte{0x15, 0x04, 0x19, 0x25, 2, 4, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		ch := thriftChecker{b: b}
		if ch.structure(0) == nil && ch.pos > len(b) {
			t.Fatalf("walked past the end: %d of %d", ch.pos, len(b))
		}
		pageHeader(b)
	})
}
