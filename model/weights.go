package model

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
)

// Weights file constants; the format is described in the package
// documentation.
const (
	// FileMagic is the four bytes every weights file starts with.
	FileMagic = "AIMW"
	// FileVersion is the format version Save writes and Load accepts.
	FileVersion = 1
)

// Errors Load reports, wrapped with the details of the problem; test for
// them with errors.Is.
var (
	// ErrBadMagic means the input does not start with FileMagic.
	ErrBadMagic = errors.New("wrong magic (not an AIMW weights file)")
	// ErrVersion means the file's format version is not FileVersion.
	ErrVersion = errors.New("unsupported version")
	// ErrTruncated means the input ended before the end of the format.
	ErrTruncated = errors.New("truncated file")
	// ErrChecksum means the stored CRC-32C does not match the contents.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrLayerSizes means the header's layer count or sizes are outside
	// the limits (MaxLayers, MaxWidth, MaxParams).
	ErrLayerSizes = errors.New("implausible layer sizes")
	// ErrNonFinite means a weight or bias is NaN or infinite.
	ErrNonFinite = errors.New("non-finite parameter")
	// ErrTrailingData means LoadFile found bytes after the checksum.
	ErrTrailingData = errors.New("trailing data after checksum")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// loadErr formats a Load error around one of the sentinel errors.
func loadErr(kind error, format string, args ...any) error {
	return fmt.Errorf("model: load weights: %w: %s", kind, fmt.Sprintf(format, args...))
}

// Save writes the network to w in the AIMW format (see the package
// documentation). Any write error is returned.
func (m *MLP) Save(w io.Writer) error {
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	var u [4]byte
	put := func(v uint32) {
		binary.LittleEndian.PutUint32(u[:], v)
		bw.Write(u[:])
	}
	bw.WriteString(FileMagic)
	put(FileVersion)
	put(uint32(len(m.sizes)))
	for _, s := range m.sizes {
		put(uint32(s))
	}
	for l := range m.w {
		in, out := m.sizes[l], m.sizes[l+1]
		for i := 0; i < in; i++ {
			for j := 0; j < out; j++ {
				put(math.Float32bits(m.w[l][wIndex(in, i, j)]))
			}
		}
		for _, v := range m.b[l] {
			put(math.Float32bits(v))
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("model: save weights: %w", err)
	}
	binary.LittleEndian.PutUint32(u[:], crc.Sum32())
	if _, err := w.Write(u[:]); err != nil {
		return fmt.Errorf("model: save weights: %w", err)
	}
	return nil
}

// crcReader reads from r, hashing everything it returns.
type crcReader struct {
	r   io.Reader
	crc hash.Hash32
}

// readFull reads exactly len(p) bytes, reporting a truncation as
// ErrTruncated naming what was being read.
func (c *crcReader) readFull(p []byte, what string) error {
	n, err := io.ReadFull(c.r, p)
	c.crc.Write(p[:n])
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return loadErr(ErrTruncated, "file ends in the %s (got %d of %d bytes)", what, n, len(p))
	case err != nil:
		return fmt.Errorf("model: load weights: reading the %s: %w", what, err)
	}
	return nil
}

// readFloats reads count little-endian float32 values. Memory grows with
// the data actually present, so a forged header claiming a huge layer
// cannot make a short input allocate much.
func (c *crcReader) readFloats(count int, what string) ([]float32, error) {
	const chunk = 1 << 14
	var buf [4 * chunk]byte
	vals := make([]float32, 0, min(count, chunk))
	for len(vals) < count {
		k := min(chunk, count-len(vals))
		n, err := io.ReadFull(c.r, buf[:4*k])
		c.crc.Write(buf[:n])
		for i := 0; i+4 <= n; i += 4 {
			vals = append(vals, math.Float32frombits(binary.LittleEndian.Uint32(buf[i:])))
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, loadErr(ErrTruncated, "file ends in the %s (got %d of %d bytes)", what, 4*len(vals)+n%4, 4*count)
		}
		if err != nil {
			return nil, fmt.Errorf("model: load weights: reading the %s: %w", what, err)
		}
	}
	return vals, nil
}

// Load reads a network in the AIMW format from r, consuming exactly the
// bytes of one file. It never panics on malformed input: errors wrap
// ErrBadMagic, ErrVersion, ErrLayerSizes, ErrTruncated, ErrChecksum or
// ErrNonFinite and say what was wrong and where.
func Load(r io.Reader) (*MLP, error) {
	c := &crcReader{r: r, crc: crc32.New(castagnoli)}
	var hdr [12]byte
	if err := c.readFull(hdr[:4], "magic"); err != nil {
		return nil, err
	}
	if string(hdr[:4]) != FileMagic {
		return nil, loadErr(ErrBadMagic, "file starts with %q, want %q", hdr[:4], FileMagic)
	}
	if err := c.readFull(hdr[4:12], "header"); err != nil {
		return nil, err
	}
	if v := binary.LittleEndian.Uint32(hdr[4:]); v != FileVersion {
		return nil, loadErr(ErrVersion, "file is version %d, this build reads version %d", v, FileVersion)
	}
	count := binary.LittleEndian.Uint32(hdr[8:])
	if count < 2 || count > MaxLayers {
		return nil, loadErr(ErrLayerSizes, "%d layer sizes, want 2..%d", count, MaxLayers)
	}
	raw := make([]byte, 4*count)
	if err := c.readFull(raw, "layer sizes"); err != nil {
		return nil, err
	}
	sizes := make([]int, count)
	for i := range sizes {
		s := binary.LittleEndian.Uint32(raw[4*i:])
		if s < 1 || s > MaxWidth {
			return nil, loadErr(ErrLayerSizes, "layer %d has size %d, want 1..%d", i, s, MaxWidth)
		}
		sizes[i] = int(s)
	}
	if err := checkSizes(sizes); err != nil {
		return nil, loadErr(ErrLayerSizes, "%v", err)
	}
	type layer struct{ w, b []float32 }
	layers := make([]layer, count-1)
	for l := range layers {
		in, out := sizes[l], sizes[l+1]
		var err error
		if layers[l].w, err = c.readFloats(in*out, fmt.Sprintf("weights of layer %d (%d×%d)", l, in, out)); err != nil {
			return nil, err
		}
		if layers[l].b, err = c.readFloats(out, fmt.Sprintf("biases of layer %d", l)); err != nil {
			return nil, err
		}
	}
	want := c.crc.Sum32()
	var tail [4]byte
	if n, err := io.ReadFull(r, tail[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, loadErr(ErrTruncated, "file ends in the checksum (got %d of 4 bytes)", n)
		}
		return nil, fmt.Errorf("model: load weights: reading the checksum: %w", err)
	}
	if got := binary.LittleEndian.Uint32(tail[:]); got != want {
		return nil, loadErr(ErrChecksum, "stored CRC-32C %08x, contents hash to %08x (file corrupted)", got, want)
	}
	m := alloc(sizes)
	for l, ly := range layers {
		if err := checkFinite(ly.w, l, "weight"); err != nil {
			return nil, err
		}
		if err := checkFinite(ly.b, l, "bias"); err != nil {
			return nil, err
		}
		if err := m.SetWeights(l, ly.w, ly.b); err != nil {
			return nil, fmt.Errorf("model: load weights: %w", err)
		}
	}
	return m, nil
}

// checkFinite reports the first NaN or infinity in layer l's vals.
func checkFinite(vals []float32, l int, kind string) error {
	for i, v := range vals {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return loadErr(ErrNonFinite, "layer %d %s %d is %v", l, kind, i, v)
		}
	}
	return nil
}

// SaveFile writes the network to path atomically: it writes a temporary
// file in the same directory and renames it over path.
func (m *MLP) SaveFile(path string) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("model: save weights: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = m.Save(f); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("model: save weights: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("model: save weights: %w", err)
	}
	return nil
}

// LoadFile reads a network from the AIMW file at path, like Load, and also
// rejects bytes after the checksum (ErrTrailingData). Errors name the
// path.
func LoadFile(path string) (*MLP, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model: load weights: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	m, err := Load(br)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		if err != nil {
			return nil, fmt.Errorf("model: load weights: %w (file %s)", err, path)
		}
		return nil, fmt.Errorf("model: load weights: %w (file %s)", ErrTrailingData, path)
	}
	return m, nil
}
