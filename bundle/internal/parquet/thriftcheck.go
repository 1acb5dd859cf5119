package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The Parquet library decodes a file's thrift structures (the footer's
// FileMetaData, each page's PageHeader) by allocating every list and
// binary field at the length the input declares, so a few damaged bytes
// can make it allocate gigabytes before it fails. checkThrift walks a
// thrift compact-protocol struct first, without allocating, and refuses
// one whose declared lengths exceed the bytes that remain; what passes
// can allocate no more than a small multiple of its own size.

// errThrift is wrapped by the errors of checkThrift.
var errThrift = errors.New("damaged thrift structure")

// thriftMaxDepth bounds the nesting of structs, lists and maps.
const thriftMaxDepth = 32

// checkFooter checks the thrift FileMetaData at the end of a Parquet
// file: data ends with it, its length (4 bytes, little endian) and "PAR1".
func checkFooter(data []byte) error {
	if len(data) < 12 || string(data[len(data)-4:]) != "PAR1" {
		return fmt.Errorf("%w: no Parquet footer", errThrift)
	}
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	if n > len(data)-12 {
		return fmt.Errorf("%w: footer of %d bytes in a file of %d", errThrift, n, len(data))
	}
	footer := data[len(data)-8-n : len(data)-8]
	c := thriftChecker{b: footer}
	if err := c.structure(0); err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	return nil
}

// thriftChecker walks compact-protocol bytes.
type thriftChecker struct {
	b   []byte
	pos int
}

func (c *thriftChecker) fail(format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", errThrift, c.pos, fmt.Sprintf(format, args...))
}

func (c *thriftChecker) byte() (byte, error) {
	if c.pos >= len(c.b) {
		return 0, c.fail("unexpected end")
	}
	v := c.b[c.pos]
	c.pos++
	return v, nil
}

func (c *thriftChecker) varint() (uint64, error) {
	v, n := binary.Uvarint(c.b[c.pos:])
	if n <= 0 {
		return 0, c.fail("bad varint")
	}
	c.pos += n
	return v, nil
}

func (c *thriftChecker) skip(n uint64) error {
	if n > uint64(len(c.b)-c.pos) {
		return c.fail("%d bytes declared, %d left", n, len(c.b)-c.pos)
	}
	c.pos += int(n)
	return nil
}

// structure walks fields up to the stop byte.
func (c *thriftChecker) structure(depth int) error {
	if depth > thriftMaxDepth {
		return c.fail("nested deeper than %d", thriftMaxDepth)
	}
	for {
		h, err := c.byte()
		if err != nil {
			return err
		}
		if h == 0 {
			return nil
		}
		if h>>4 == 0 { // the field id follows as a zigzag varint
			if _, err := c.varint(); err != nil {
				return err
			}
		}
		if err := c.value(h&0x0f, depth); err != nil {
			return err
		}
	}
}

// element walks one element of a list, set or map: as value, except that
// a boolean element takes a byte of its own.
func (c *thriftChecker) element(t byte, depth int) error {
	if t == 1 || t == 2 {
		return c.skip(1)
	}
	return c.value(t, depth)
}

// value walks one value of compact type t. Booleans in a field carry their
// value in the type.
func (c *thriftChecker) value(t byte, depth int) error {
	switch t {
	case 1, 2: // boolean true, false
		return nil
	case 3: // byte
		return c.skip(1)
	case 4, 5, 6: // i16, i32, i64
		_, err := c.varint()
		return err
	case 7: // double
		return c.skip(8)
	case 8: // binary
		n, err := c.varint()
		if err != nil {
			return err
		}
		return c.skip(n)
	case 9, 10: // list, set
		h, err := c.byte()
		if err != nil {
			return err
		}
		size := uint64(h >> 4)
		if size == 15 {
			if size, err = c.varint(); err != nil {
				return err
			}
		}
		// Every element takes a byte at least.
		if size > uint64(len(c.b)-c.pos) {
			return c.fail("a list of %d elements with %d bytes left", size, len(c.b)-c.pos)
		}
		for range size {
			if err := c.element(h&0x0f, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		size, err := c.varint()
		if err != nil {
			return err
		}
		if size == 0 {
			return nil
		}
		kv, err := c.byte()
		if err != nil {
			return err
		}
		if size > uint64(len(c.b)-c.pos)/2 {
			return c.fail("a map of %d entries with %d bytes left", size, len(c.b)-c.pos)
		}
		for range size {
			if err := c.element(kv>>4, depth+1); err != nil {
				return err
			}
			if err := c.element(kv&0x0f, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 12: // struct
		return c.structure(depth + 1)
	}
	return c.fail("unknown type %d", t)
}

// pageHeader walks the thrift PageHeader at the start of b and returns its
// length in bytes and the page's uncompressed and compressed sizes (fields
// 2 and 3).
func pageHeader(b []byte) (n int, uncompressed, compressed int64, err error) {
	c := thriftChecker{b: b}
	id := int64(0)
	for {
		h, err := c.byte()
		if err != nil {
			return 0, 0, 0, err
		}
		if h == 0 {
			return c.pos, uncompressed, compressed, nil
		}
		if d := h >> 4; d != 0 {
			id += int64(d)
		} else {
			v, err := c.varint()
			if err != nil {
				return 0, 0, 0, err
			}
			id = int64(v>>1) ^ -int64(v&1)
		}
		t := h & 0x0f
		if t == 5 && (id == 2 || id == 3) {
			v, err := c.varint()
			if err != nil {
				return 0, 0, 0, err
			}
			size := int64(v>>1) ^ -int64(v&1)
			if id == 2 {
				uncompressed = size
			} else {
				compressed = size
			}
			continue
		}
		if err := c.value(t, 0); err != nil {
			return 0, 0, 0, err
		}
	}
}

// checkPages walks the pages of a column chunk, data[start:end], and
// refuses a damaged header, a page that overruns the chunk, or more
// uncompressed bytes in all than limit.
func checkPages(data []byte, start, end, limit int64) error {
	if start < 0 || end < start || end > int64(len(data)) {
		return fmt.Errorf("%w: column chunk at [%d, %d) of a %d-byte file", errThrift, start, end, len(data))
	}
	var total int64
	for at := start; at < end; {
		n, u, c, err := pageHeader(data[at:end])
		if err != nil {
			return fmt.Errorf("page at byte %d: %w", at, err)
		}
		if u < 0 || c < 0 || c > end-at-int64(n) {
			return fmt.Errorf("%w: page at byte %d: %d bytes compressed, %d uncompressed, %d left", errThrift, at, c, u, end-at-int64(n))
		}
		if total += u; total > limit {
			return fmt.Errorf("%w: page at byte %d: more than %d bytes uncompressed", errThrift, at, limit)
		}
		at += int64(n) + c
	}
	return nil
}
