package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	m := New([]int{13, 9, 4}, 21)
	for l := range m.b {
		for j := range m.b[l] {
			m.b[l][j] = float32(j) - 1.5
		}
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	wantLen := 4 + 4 + 4 + 3*4 + 4*(13*9+9+9*4+4) + 4
	if buf.Len() != wantLen {
		t.Fatalf("file is %d bytes, want %d", buf.Len(), wantLen)
	}
	data := bytes.Clone(buf.Bytes())
	// The layout is the documented one: header, row-major weights, biases, CRC.
	if string(data[:4]) != "AIMW" || binary.LittleEndian.Uint32(data[4:]) != 1 || binary.LittleEndian.Uint32(data[8:]) != 3 {
		t.Fatalf("bad header % x", data[:12])
	}
	w0, _ := m.Weights(0)
	if got := math.Float32frombits(binary.LittleEndian.Uint32(data[24+4*10:])); got != w0[10] {
		t.Fatalf("weight 10 stored as %v, want %v", got, w0[10])
	}
	if crc := crc32.Checksum(data[:len(data)-4], crc32.MakeTable(crc32.Castagnoli)); crc != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		t.Fatal("stored checksum is not the CRC-32C of the preceding bytes")
	}
	m2, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !sameParams(m, m2) {
		t.Fatal("loaded parameters differ")
	}
	var again bytes.Buffer
	if err := m2.Save(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), data) {
		t.Fatal("save of loaded model differs from the original file")
	}

	path := filepath.Join(t.TempDir(), "model.aimw")
	if err := m.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	m3, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !sameParams(m, m3) {
		t.Fatal("LoadFile parameters differ")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("SaveFile left %d files behind", len(entries))
	}
}

// withCRC returns body followed by its CRC-32C.
func withCRC(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(bytes.Clone(body), crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
}

// header builds a header with the given version and sizes.
func header(version uint32, sizes ...uint32) []byte {
	b := []byte("AIMW")
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(sizes)))
	for _, s := range sizes {
		b = binary.LittleEndian.AppendUint32(b, s)
	}
	return b
}

func TestLoadCorrupt(t *testing.T) {
	var good bytes.Buffer
	if err := New([]int{3, 2}, 1).Save(&good); err != nil {
		t.Fatal(err)
	}
	valid := good.Bytes() // 12+8 header, 6+2 floats, 4 CRC = 56 bytes
	body := valid[:len(valid)-4]
	mutate := func(off int, b byte) []byte {
		d := bytes.Clone(valid)
		d[off] ^= b
		return d
	}
	nanBody := bytes.Clone(body)
	binary.LittleEndian.PutUint32(nanBody[20+4*2:], math.Float32bits(float32(math.NaN())))
	infBias := bytes.Clone(body)
	binary.LittleEndian.PutUint32(infBias[20+4*7:], math.Float32bits(float32(math.Inf(-1))))

	cases := []struct {
		name   string
		data   []byte
		want   error
		reason string // must appear in the message
	}{
		{"empty", nil, ErrTruncated, "magic (got 0 of 4"},
		{"short magic", []byte("AIM"), ErrTruncated, "magic (got 3 of 4"},
		{"wrong magic", append([]byte("PK\x03\x04"), valid[4:]...), ErrBadMagic, `"PK\x03\x04"`},
		{"lower-case magic", append([]byte("aimw"), valid[4:]...), ErrBadMagic, "want \"AIMW\""},
		{"header cut", valid[:9], ErrTruncated, "header"},
		{"version 0", withCRC(append(header(0, 3, 2), body[20:]...)), ErrVersion, "version 0"},
		{"version 2", withCRC(append(header(2, 3, 2), body[20:]...)), ErrVersion, "version 2"},
		{"one layer size", withCRC(header(1, 3)), ErrLayerSizes, "1 layer sizes"},
		{"zero layer sizes", withCRC(header(1)), ErrLayerSizes, "0 layer sizes"},
		{"too many layers", withCRC(header(1, make([]uint32, MaxLayers+1)...)), ErrLayerSizes, "65 layer sizes"},
		{"huge count", []byte("AIMW\x01\x00\x00\x00\xff\xff\xff\xff"), ErrLayerSizes, "4294967295 layer sizes"},
		{"size zero", withCRC(header(1, 3, 0)), ErrLayerSizes, "layer 1 has size 0"},
		{"size too wide", withCRC(header(1, 1<<20, 2)), ErrLayerSizes, "layer 0 has size 1048576"},
		{"too many params", header(1, MaxWidth, MaxWidth, MaxWidth), ErrLayerSizes, "parameters"},
		{"sizes cut", header(1, 3, 2)[:18], ErrTruncated, "layer sizes (got 6 of 8"},
		{"weights cut", valid[:30], ErrTruncated, "weights of layer 0 (3×2) (got 10 of 24"},
		{"biases cut", valid[:46], ErrTruncated, "biases of layer 0 (got 2 of 8"},
		{"checksum missing", body, ErrTruncated, "checksum (got 0 of 4"},
		{"checksum cut", valid[:len(valid)-2], ErrTruncated, "checksum (got 2 of 4"},
		{"forged big layer", header(1, 4096, 4096), ErrTruncated, "weights of layer 0 (4096×4096) (got 0 of 67108864"},
		{"flipped weight bit", mutate(25, 0x10), ErrChecksum, "stored CRC-32C"},
		{"smaller size", mutate(12, 0x01), ErrChecksum, "stored CRC-32C"},
		{"larger size", mutate(12, 0x04), ErrTruncated, "weights of layer 0 (7×2) (got 36 of 56"},
		{"flipped checksum", mutate(len(valid)-1, 0x80), ErrChecksum, "file corrupted"},
		{"NaN weight", withCRC(nanBody), ErrNonFinite, "layer 0 weight 2 is NaN"},
		{"-Inf bias", withCRC(infBias), ErrNonFinite, "layer 0 bias 1 is -Inf"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Load(bytes.NewReader(c.data))
			if err == nil {
				t.Fatalf("loaded %v, want error %v", m.Layers(), c.want)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("error %q does not wrap %q", err, c.want)
			}
			if !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("error %q does not say %q", err, c.reason)
			}
		})
	}
}

func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	var good bytes.Buffer
	if err := New([]int{3, 2}, 1).Save(&good); err != nil {
		t.Fatal(err)
	}
	trailing := filepath.Join(dir, "trailing.aimw")
	os.WriteFile(trailing, append(good.Bytes(), 0), 0o644)
	if _, err := LoadFile(trailing); !errors.Is(err, ErrTrailingData) || !strings.Contains(err.Error(), trailing) {
		t.Errorf("trailing byte: %v", err)
	}
	cut := filepath.Join(dir, "cut.aimw")
	os.WriteFile(cut, good.Bytes()[:30], 0o644)
	if _, err := LoadFile(cut); !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), cut) {
		t.Errorf("truncated file: %v", err)
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.aimw")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if err := New([]int{3, 2}, 1).SaveFile(filepath.Join(dir, "no", "such", "dir.aimw")); err == nil {
		t.Error("SaveFile into a missing directory succeeded")
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n < len(p) {
		return 0, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestSaveReportsWriteErrors(t *testing.T) {
	m := New([]int{300, 100, 10}, 1)
	for _, n := range []int{0, 70000, 121644} {
		if err := m.Save(&failWriter{n: n}); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("writer failing after %d bytes: %v", n, err)
		}
	}
}
