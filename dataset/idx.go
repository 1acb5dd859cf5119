// Package dataset provides aimeter's built-in image data sets as sample
// libraries (loadgen.QSL): Fashion-MNIST read from IDX files, and a seeded
// synthetic image set generated in the manner of GB/T 45087 clause 7.4.3.
package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// IDX is a decoded IDX file (the format of MNIST and Fashion-MNIST): an
// n-dimensional array of unsigned bytes.
type IDX struct {
	Dims []int
	Data []byte // row-major, len = product of Dims
}

// idxUnsignedByte is the only IDX element type aimeter reads.
const idxUnsignedByte = 0x08

// maxIDXBytes bounds the array a header may announce, so that a corrupt
// header cannot make the reader allocate without limit.
const maxIDXBytes = 1 << 31

// ErrNotIDX reports input that is not an IDX file of unsigned bytes.
var ErrNotIDX = errors.New("not an IDX file of unsigned bytes")

// ReadIDX decodes an IDX file, gzip-compressed or not.
func ReadIDX(r io.Reader) (*IDX, error) {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	var magic [4]byte
	if _, err := io.ReadFull(br, magic[:]); err != nil {
		return nil, fmt.Errorf("%w: reading the header: %v", ErrNotIDX, err)
	}
	if magic[0] != 0 || magic[1] != 0 {
		return nil, fmt.Errorf("%w: magic %x does not start with two zero bytes", ErrNotIDX, magic)
	}
	if magic[2] != idxUnsignedByte {
		return nil, fmt.Errorf("%w: element type 0x%02x is not unsigned byte (0x08)", ErrNotIDX, magic[2])
	}
	nd := int(magic[3])
	if nd < 1 || nd > 4 {
		return nil, fmt.Errorf("%w: %d dimensions (want 1 to 4)", ErrNotIDX, nd)
	}
	idx := &IDX{Dims: make([]int, nd)}
	size := 1
	for i := range idx.Dims {
		var d uint32
		if err := binary.Read(br, binary.BigEndian, &d); err != nil {
			return nil, fmt.Errorf("%w: reading dimension %d: %v", ErrNotIDX, i, err)
		}
		if d == 0 || uint64(size)*uint64(d) > maxIDXBytes {
			return nil, fmt.Errorf("%w: implausible dimension %d = %d", ErrNotIDX, i, d)
		}
		idx.Dims[i] = int(d)
		size *= int(d)
	}
	// Grow the buffer as data arrives instead of trusting the header.
	var buf bytes.Buffer
	n, err := io.CopyN(&buf, br, int64(size))
	if err != nil {
		return nil, fmt.Errorf("truncated IDX data: %d of %d bytes (%v)", n, size, err)
	}
	if extra, _ := br.Peek(1); len(extra) > 0 {
		return nil, fmt.Errorf("%w: trailing bytes after %d bytes of data", ErrNotIDX, size)
	}
	idx.Data = buf.Bytes()
	return idx, nil
}

// ReadIDXFile reads an IDX file; errors name the file.
func ReadIDXFile(path string) (*IDX, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx, err := ReadIDX(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return idx, nil
}
