package gguf

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// file is what the test reader gets back from a GGUF file.
type file struct {
	version  uint32
	meta     map[string]any
	keys     []string // in file order
	tensors  []tensorInfo
	dataOff  int64 // start of the tensor data section
	fileSize int64
}

type tensorInfo struct {
	name   string
	dims   []uint64
	typ    uint32
	offset uint64
}

// reader is a small independent GGUF v3 parser: header, metadata (every
// value type the format has), tensor infos and the data section's start.
type reader struct {
	b   []byte
	pos int
}

var errShort = errors.New("unexpected end of file")

func (r *reader) take(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.pos) {
		return nil, fmt.Errorf("at %d, %d bytes: %w", r.pos, n, errShort)
	}
	p := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return p, nil
}

func (r *reader) u32() (uint32, error) {
	p, err := r.take(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(p), nil
}

func (r *reader) u64() (uint64, error) {
	p, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(p), nil
}

func (r *reader) str() (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	p, err := r.take(n)
	return string(p), err
}

// value reads one metadata value of type t.
func (r *reader) value(t uint32) (any, error) {
	sizes := map[uint32]uint64{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
	switch t {
	case typeString:
		return r.str()
	case typeArray:
		et, err := r.u32()
		if err != nil {
			return nil, err
		}
		n, err := r.u64()
		if err != nil {
			return nil, err
		}
		if n > uint64(len(r.b)) {
			return nil, fmt.Errorf("array of %d elements in a %d-byte file", n, len(r.b))
		}
		out := make([]any, 0, n)
		for range n {
			v, err := r.value(et)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	size, ok := sizes[t]
	if !ok {
		return nil, fmt.Errorf("unknown value type %d", t)
	}
	p, err := r.take(size)
	if err != nil {
		return nil, err
	}
	switch t {
	case typeUint32:
		return binary.LittleEndian.Uint32(p), nil
	case typeInt32:
		return int32(binary.LittleEndian.Uint32(p)), nil
	case typeFloat32:
		return math.Float32frombits(binary.LittleEndian.Uint32(p)), nil
	case typeBool:
		if p[0] > 1 {
			return nil, fmt.Errorf("bool byte %d", p[0])
		}
		return p[0] == 1, nil
	}
	return append([]byte(nil), p...), nil // other scalars: raw bytes
}

func parse(b []byte) (*file, error) {
	r := &reader{b: b}
	magic, err := r.take(4)
	if err != nil {
		return nil, err
	}
	if string(magic) != Magic {
		return nil, fmt.Errorf("magic %q", magic)
	}
	f := &file{meta: map[string]any{}, fileSize: int64(len(b))}
	if f.version, err = r.u32(); err != nil {
		return nil, err
	}
	nt, err := r.u64()
	if err != nil {
		return nil, err
	}
	nkv, err := r.u64()
	if err != nil {
		return nil, err
	}
	for range nkv {
		k, err := r.str()
		if err != nil {
			return nil, err
		}
		t, err := r.u32()
		if err != nil {
			return nil, err
		}
		v, err := r.value(t)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		if _, dup := f.meta[k]; dup {
			return nil, fmt.Errorf("duplicate key %q", k)
		}
		f.meta[k] = v
		f.keys = append(f.keys, k)
	}
	for range nt {
		var ti tensorInfo
		if ti.name, err = r.str(); err != nil {
			return nil, err
		}
		nd, err := r.u32()
		if err != nil {
			return nil, err
		}
		if nd == 0 || nd > 4 {
			return nil, fmt.Errorf("tensor %q has %d dimensions", ti.name, nd)
		}
		for range nd {
			d, err := r.u64()
			if err != nil {
				return nil, err
			}
			ti.dims = append(ti.dims, d)
		}
		if ti.typ, err = r.u32(); err != nil {
			return nil, err
		}
		if ti.offset, err = r.u64(); err != nil {
			return nil, err
		}
		f.tensors = append(f.tensors, ti)
	}
	align := int64(Alignment)
	if a, ok := f.meta["general.alignment"].(uint32); ok {
		align = int64(a)
	}
	f.dataOff = (int64(r.pos) + align - 1) / align * align
	return f, nil
}

func encode(t *testing.T, c Config) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriteParsesBack(t *testing.T) {
	for _, c := range []Config{Micro(1), Tiny(7)} {
		t.Run(c.Name, func(t *testing.T) {
			b := encode(t, c)
			f, err := parse(b)
			if err != nil {
				t.Fatal(err)
			}
			if f.version != Version {
				t.Errorf("version %d, want %d", f.version, Version)
			}
			wantU32 := map[string]int{
				"general.alignment":               Alignment,
				"llama.embedding_length":          c.Embedding,
				"llama.block_count":               c.Layers,
				"llama.feed_forward_length":       c.FeedForward,
				"llama.attention.head_count":      c.Heads,
				"llama.attention.head_count_kv":   c.Heads,
				"llama.rope.dimension_count":      c.Embedding / c.Heads,
				"llama.context_length":            2048,
				"tokenizer.ggml.bos_token_id":     BOSToken,
				"tokenizer.ggml.eos_token_id":     EOSToken,
				"tokenizer.ggml.unknown_token_id": UnknownToken,
				"llama.vocab_size":                VocabSize,
				"general.file_type":               0,
			}
			for k, v := range wantU32 {
				if got, ok := f.meta[k].(uint32); !ok || int(got) != v {
					t.Errorf("%s = %v, want uint32 %d", k, f.meta[k], v)
				}
			}
			if f.meta["general.architecture"] != "llama" || f.meta["tokenizer.ggml.model"] != "llama" {
				t.Errorf("architecture %v, tokenizer model %v", f.meta["general.architecture"], f.meta["tokenizer.ggml.model"])
			}
			if f.keys[0] != "general.architecture" {
				t.Errorf("first key %q: llama.cpp reads general.architecture first by convention", f.keys[0])
			}
			if f.meta["tokenizer.chat_template"] != ChatTemplate {
				t.Errorf("chat template %v", f.meta["tokenizer.chat_template"])
			}

			toks, _ := f.meta["tokenizer.ggml.tokens"].([]any)
			scores, _ := f.meta["tokenizer.ggml.scores"].([]any)
			types, _ := f.meta["tokenizer.ggml.token_type"].([]any)
			if len(toks) != VocabSize || len(scores) != VocabSize || len(types) != VocabSize {
				t.Fatalf("vocabulary arrays of %d, %d, %d entries, want %d", len(toks), len(scores), len(types), VocabSize)
			}
			seen := map[string]bool{}
			for i, tok := range toks {
				s := tok.(string)
				if seen[s] {
					t.Errorf("token %q twice", s)
				}
				seen[s] = true
				typ := types[i].(int32)
				switch {
				case i == UnknownToken:
					if s != "<unk>" || typ != typeUnknown {
						t.Errorf("token %d = %q type %d", i, s, typ)
					}
				case i < FirstByteToken:
					if typ != typeControl {
						t.Errorf("token %d %q type %d, want control", i, s, typ)
					}
				case i < FirstTextToken:
					if want := fmt.Sprintf("<0x%02X>", i-FirstByteToken); s != want || typ != typeByte {
						t.Errorf("token %d = %q type %d, want %q byte", i, s, typ, want)
					}
				default:
					if typ != typeNormal || !strings.HasPrefix(s, "▁") && len(s) != 1 {
						t.Errorf("token %d = %q type %d", i, s, typ)
					}
				}
			}
			for _, s := range []string{"<s>", "</s>", "▁", "a", "~", "!", "▁a", "▁z"} {
				if !seen[s] {
					t.Errorf("token %q missing", s)
				}
			}

			// Tensor infos: F32, offsets aligned, in order, without
			// overlap, and the data section ends at the end of the file.
			if len(f.tensors) != 3+9*c.Layers {
				t.Errorf("%d tensors, want %d", len(f.tensors), 3+9*c.Layers)
			}
			if f.dataOff%Alignment != 0 {
				t.Errorf("data section at %d, not aligned to %d", f.dataOff, Alignment)
			}
			var next uint64
			names := map[string]tensorInfo{}
			for _, ti := range f.tensors {
				names[ti.name] = ti
				if ti.typ != 0 {
					t.Errorf("%s type %d, want F32 (0)", ti.name, ti.typ)
				}
				if ti.offset%Alignment != 0 || ti.offset < next {
					t.Errorf("%s at offset %d: not aligned, or overlaps the tensor before (which ends at %d)", ti.name, ti.offset, next)
				}
				n := uint64(4)
				for _, d := range ti.dims {
					n *= d
				}
				next = ti.offset + n
			}
			if end := f.dataOff + int64(next); end != f.fileSize {
				t.Errorf("last tensor ends at %d, file is %d bytes", end, f.fileSize)
			}
			if out := names["output.weight"]; len(out.dims) != 2 || out.dims[0] != uint64(c.Embedding) || out.dims[1] != VocabSize {
				t.Errorf("output.weight dims %v", out.dims)
			}
			if got := c.Params() * 4; got != int64(next) {
				// Every tensor here is a multiple of 32 bytes, so the
				// data section is exactly the weights.
				t.Errorf("Params()*4 = %d, data section %d bytes", got, next)
			}

			// The output rows of control and byte tokens are zero,
			// and the others are not.
			out := names["output.weight"]
			row := func(id int) []byte {
				start := f.dataOff + int64(out.offset) + int64(id*c.Embedding*4)
				return b[start : start+int64(c.Embedding*4)]
			}
			zero := make([]byte, c.Embedding*4)
			for _, id := range []int{UnknownToken, BOSToken, EOSToken, FirstByteToken, FirstTextToken - 1} {
				if !bytes.Equal(row(id), zero) {
					t.Errorf("output row %d is not zero", id)
				}
			}
			for _, id := range []int{FirstTextToken, VocabSize - 1} {
				if bytes.Equal(row(id), zero) {
					t.Errorf("output row %d is zero", id)
				}
			}
			// The norms are ones and the random weights are finite,
			// with a standard deviation near 1/sqrt(row length).
			norm := names["output_norm.weight"]
			for i := range c.Embedding {
				p := f.dataOff + int64(norm.offset) + int64(4*i)
				if v := math.Float32frombits(binary.LittleEndian.Uint32(b[p:])); v != 1 {
					t.Fatalf("output_norm[%d] = %v, want 1", i, v)
				}
			}
			q := names["blk.0.attn_q.weight"]
			var sum, sq float64
			n := c.Embedding * c.Embedding
			for i := range n {
				p := f.dataOff + int64(q.offset) + int64(4*i)
				v := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[p:])))
				if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 6/math.Sqrt(float64(c.Embedding))+1e-6 {
					t.Fatalf("attn_q[%d] = %v, out of the generator's range", i, v)
				}
				sum += v
				sq += v * v
			}
			sd := math.Sqrt(sq/float64(n) - (sum/float64(n))*(sum/float64(n)))
			if want := 1 / math.Sqrt(float64(c.Embedding)); math.Abs(sd/want-1) > 0.1 {
				t.Errorf("attn_q standard deviation %v, want about %v", sd, want)
			}
		})
	}
}

// TestDeterministic pins the bytes for a seed: a change to the generator
// changes the served model and so every figure measured with it, and must
// be deliberate (update the hashes then).
func TestDeterministic(t *testing.T) {
	for _, tc := range []struct {
		c      Config
		sha256 string
		reason string
	}{
		{Micro(1), "d9a64ea63ffc508cc000168de1704d9accf00a4461fecfc908a84889e90866f1", "the CI model"},
		{Micro(2), "15d3bde27ebcccf4bdf1181115023ec88547384cf10b91ab92e5f92c7cef5d75", "a different seed gives different weights"},
		{Tiny(1), "ededb296e55685a2de89a8a0d124c8a40884ee234740902d12d97e5d8976c9f3", "the larger size"},
	} {
		b := encode(t, tc.c)
		sum := sha256.Sum256(b)
		got := hex.EncodeToString(sum[:])
		if got != tc.sha256 {
			t.Errorf("%s seed %d (%s): sha256 %s, want %s", tc.c.Name, tc.c.Seed, tc.reason, got, tc.sha256)
		}
		if tc.c.Embedding > 64 {
			continue // one write of the larger model is enough
		}
		if again := encode(t, tc.c); !bytes.Equal(again, b) {
			t.Errorf("%s seed %d: two writes differ", tc.c.Name, tc.c.Seed)
		}
	}
}

func TestSizes(t *testing.T) {
	for _, tc := range []struct {
		size   string
		params int64
		reason string
	}{
		{"micro", 130_000, "about 0.13 M parameters, as the notes' micro model"},
		{"tiny", 3_600_000, "about 3.6 M parameters"},
	} {
		c, err := BySize(tc.size, 1)
		if err != nil {
			t.Fatal(err)
		}
		if p := c.Params(); math.Abs(float64(p)/float64(tc.params)-1) > 0.05 {
			t.Errorf("%s: %d parameters, want about %d (%s)", tc.size, p, tc.params, tc.reason)
		}
	}
	if _, err := BySize("huge", 1); err == nil || !strings.Contains(err.Error(), `"huge"`) {
		t.Errorf("BySize(huge): error %v, want one naming the size", err)
	}
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		c      Config
		field  string
		reason string
	}{
		{Config{}, "Embedding", "the zero Config has no shape"},
		{Config{Embedding: 64, Layers: 0, FeedForward: 128, Heads: 4}, "Layers", "no layers"},
		{Config{Embedding: 64, Layers: 2, FeedForward: -1, Heads: 4}, "FeedForward", "negative width"},
		{Config{Embedding: 64, Layers: 2, FeedForward: 128, Heads: 5}, "Heads", "64 is not a multiple of 5"},
		{Config{Embedding: 60, Layers: 2, FeedForward: 128, Heads: 4}, "Heads", "head size 15 is odd"},
		{Config{Embedding: 1 << 20, Layers: 2, FeedForward: 128, Heads: 4}, "Embedding", "too large"},
	} {
		err := Write(io.Discard, tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %v, want one naming %s", tc.reason, err, tc.field)
		}
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.gguf")
	if err := WriteFile(p, Micro(1)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, encode(t, Micro(1))) {
		t.Error("WriteFile and Write differ")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files left in the folder, want only the model", len(entries))
	}
	if err := WriteFile(filepath.Join(dir, "missing", "m.gguf"), Micro(1)); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("WriteFile into a missing folder: error %v, want one naming the path", err)
	}
	if err := WriteFile(filepath.Join(dir, "bad.gguf"), Config{}); err == nil {
		t.Error("WriteFile of a bad Config: no error")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed WriteFile left %d files", len(entries))
	}
}

// errWriter fails after n bytes.
type errWriter struct{ n int }

func (w *errWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriteError(t *testing.T) {
	for _, n := range []int{0, 100, 1 << 16, 1 << 18} {
		if err := Write(&errWriter{n: n}, Micro(1)); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("failing after %d bytes: error %v, want the writer's", n, err)
		}
	}
}

// FuzzParse checks the test's own reader on arbitrary bytes: it must fail
// cleanly, never panic or allocate without bound, and read a generated model
// back whole.
func FuzzParse(f *testing.F) {
	var buf bytes.Buffer
	if err := Write(&buf, Micro(1)); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes()[:4096])
	f.Add([]byte("GGUF"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parse(b)
	})
}
