// Package gguf writes small llama-architecture language models in the GGUF v3
// file format, with random F32 weights drawn from a seed, for tests and
// benchmarks that need a real llama.cpp-based server (Ollama) but no trained
// model: no package that this project can install ships one.
//
// The model is useless as a language model but exercises the whole serving
// path: tokenizer, prefill, decode and streaming. Its vocabulary is
// SentencePiece-shaped (unknown, BOS, EOS, the 256 byte tokens, "▁", the
// printable ASCII characters and "▁a" to "▁z"). The output projection's rows
// for the control and byte tokens are zero, so greedy decoding never picks
// EOS or a raw byte: every generated token is a visible piece of text, one
// streamed chunk per token, and max_tokens alone sets the output length.
// The text tokens' output rows are scaled up (OutputLogitScale) so that this
// holds when the server samples at a temperature too.
//
// The package uses only the standard library.
package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// Magic is the four bytes every GGUF file starts with.
const Magic = "GGUF"

// Version is the GGUF format version this package writes.
const Version = 3

// Alignment is the alignment, in bytes, of the tensor data section and of
// every tensor in it (GGUF's default, also written as general.alignment).
const Alignment = 32

// Token ids of the vocabulary's special tokens.
const (
	UnknownToken = 0 // "<unk>"
	BOSToken     = 1 // "<s>"
	EOSToken     = 2 // "</s>"
	// FirstByteToken is the id of "<0x00>"; "<0xFF>" is FirstByteToken+255.
	FirstByteToken = 3
	// FirstTextToken is the id of "▁", the first token that greedy decoding
	// can emit; every id below it has a zero output-projection row.
	FirstTextToken = FirstByteToken + 256
)

// OutputLogitScale is the standard deviation of the text tokens' logits.
// The zeroed rows give the control and byte tokens a logit of 0; with the
// others spread this wide, the best text token's logit is some 40 above 0,
// so a byte token or EOS is never picked, not even by a client that samples
// at temperature 1 (Ollama's OpenAI API does so unless the request sets a
// temperature) with top-k and top-p.
const OutputLogitScale = 16

// VocabSize is the number of tokens in the vocabulary: 3 special tokens,
// 256 byte tokens, "▁", the 94 printable ASCII characters other than space,
// and "▁a" to "▁z".
const VocabSize = FirstTextToken + 1 + 94 + 26

// Config describes the model to write.
type Config struct {
	// Name is general.name. Zero: "aimeter-random-llama".
	Name string
	// Embedding is the embedding width (llama.embedding_length). It must be
	// a positive multiple of Heads whose quotient (the head size) is even.
	Embedding int
	// Layers is the number of transformer blocks (llama.block_count); must
	// be positive.
	Layers int
	// FeedForward is the width of the feed-forward layer
	// (llama.feed_forward_length); must be positive.
	FeedForward int
	// Heads is the number of attention heads, for queries and for keys and
	// values alike (no grouped-query attention); must be positive.
	Heads int
	// Context is the training context length (llama.context_length). Zero:
	// 2048.
	Context int
	// Seed seeds the weights; the same Config gives the same bytes. Zero is
	// a valid seed like any other.
	Seed uint64
}

// Micro is a 0.13 M-parameter model (about 0.5 MB): embedding 64, 2 layers,
// feed-forward 128, 4 heads. It generates hundreds of tokens per second on
// one core.
func Micro(seed uint64) Config {
	return Config{Name: "aimeter-micro", Embedding: 64, Layers: 2, FeedForward: 128, Heads: 4, Seed: seed}
}

// Tiny is a 3.6 M-parameter model (about 14 MB): embedding 256, 4 layers,
// feed-forward 768, 4 heads. On one x86-64-v3 core under Ollama it takes
// about 90 ms to prefill 450 tokens and about 1 ms per output token.
func Tiny(seed uint64) Config {
	return Config{Name: "aimeter-tiny", Embedding: 256, Layers: 4, FeedForward: 768, Heads: 4, Seed: seed}
}

// BySize returns Micro(seed) or Tiny(seed) for the size name "micro" or
// "tiny".
func BySize(size string, seed uint64) (Config, error) {
	switch size {
	case "micro":
		return Micro(seed), nil
	case "tiny":
		return Tiny(seed), nil
	}
	return Config{}, fmt.Errorf("gguf: model size %q: want micro or tiny", size)
}

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = "aimeter-random-llama"
	}
	if c.Context == 0 {
		c.Context = 2048
	}
	return c
}

// limit keeps every dimension well inside what the format and a test
// machine's memory can take.
const limit = 1 << 16

func (c Config) validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"Embedding", c.Embedding}, {"Layers", c.Layers}, {"FeedForward", c.FeedForward}, {"Heads", c.Heads}, {"Context", c.Context}} {
		if f.v <= 0 || f.v > limit {
			return fmt.Errorf("gguf: Config.%s is %d: want 1 to %d", f.name, f.v, limit)
		}
	}
	if c.Embedding%c.Heads != 0 || (c.Embedding/c.Heads)%2 != 0 {
		return fmt.Errorf("gguf: Config.Embedding %d is not an even multiple of Config.Heads %d (the head size must be even for rotary embeddings)", c.Embedding, c.Heads)
	}
	return nil
}

// Params returns the number of weights in the model c describes.
func (c Config) Params() int64 {
	var n int64
	for _, t := range c.tensors() {
		n += t.elems()
	}
	return n
}

// ChatTemplate is the model's tokenizer.chat_template (Jinja), a plain
// "role: content" transcript. Ollama does not run it; its Modelfile TEMPLATE
// plays that part.
const ChatTemplate = "{% for message in messages %}{{ message['role'] }}: {{ message['content'] }}\n{% endfor %}" +
	"{% if add_generation_prompt %}assistant: {% endif %}"

// Token types of tokenizer.ggml.token_type, as llama.cpp numbers them.
const (
	typeNormal  = 1
	typeUnknown = 2
	typeControl = 3
	typeByte    = 6
)

// vocab returns the tokens, scores and token types.
func vocab() ([]string, []float32, []int32) {
	tokens := make([]string, 0, VocabSize)
	types := make([]int32, 0, VocabSize)
	tokens = append(tokens, "<unk>", "<s>", "</s>")
	types = append(types, typeUnknown, typeControl, typeControl)
	for b := range 256 {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, typeByte)
	}
	tokens = append(tokens, "▁")
	for ch := byte('!'); ch <= '~'; ch++ {
		tokens = append(tokens, string(ch))
	}
	for ch := byte('a'); ch <= 'z'; ch++ {
		tokens = append(tokens, "▁"+string(ch))
	}
	for len(types) < len(tokens) {
		types = append(types, typeNormal)
	}
	// SentencePiece scores: the tokenizer merges the pair whose joined
	// piece scores highest. Special and byte tokens score 0 and are never
	// merged into; the text tokens score below 0, "▁x" highest of them, so
	// "▁" and a following letter always merge.
	scores := make([]float32, len(tokens))
	for i := FirstTextToken; i < len(tokens); i++ {
		scores[i] = -float32(len(tokens) - i)
	}
	return tokens, scores, types
}

// tensor is one tensor's name and shape, in GGUF's order (dims[0] is the
// length of a row, the fastest-varying dimension).
type tensor struct {
	name string
	dims []uint64
	fill int // fillRandom, fillOnes or fillOutput
}

const (
	fillRandom = iota
	fillOnes
	fillOutput
)

func (t tensor) elems() int64 {
	n := int64(1)
	for _, d := range t.dims {
		n *= int64(d)
	}
	return n
}

func (t tensor) bytes() uint64 { return uint64(t.elems()) * 4 }

func (c Config) tensors() []tensor {
	e, f, v := uint64(c.Embedding), uint64(c.FeedForward), uint64(VocabSize)
	ts := []tensor{
		{"token_embd.weight", []uint64{e, v}, fillRandom},
		{"output_norm.weight", []uint64{e}, fillOnes},
		{"output.weight", []uint64{e, v}, fillOutput},
	}
	for i := range c.Layers {
		p := fmt.Sprintf("blk.%d.", i)
		ts = append(ts,
			tensor{p + "attn_norm.weight", []uint64{e}, fillOnes},
			tensor{p + "attn_q.weight", []uint64{e, e}, fillRandom},
			tensor{p + "attn_k.weight", []uint64{e, e}, fillRandom},
			tensor{p + "attn_v.weight", []uint64{e, e}, fillRandom},
			tensor{p + "attn_output.weight", []uint64{e, e}, fillRandom},
			tensor{p + "ffn_norm.weight", []uint64{e}, fillOnes},
			tensor{p + "ffn_gate.weight", []uint64{e, f}, fillRandom},
			tensor{p + "ffn_up.weight", []uint64{e, f}, fillRandom},
			tensor{p + "ffn_down.weight", []uint64{f, e}, fillRandom},
		)
	}
	return ts
}

// GGUF metadata value types.
const (
	typeUint32  = 4
	typeInt32   = 5
	typeFloat32 = 6
	typeBool    = 7
	typeString  = 8
	typeArray   = 9
)

// writer accumulates the first write error, so the encoding code reads
// straight through.
type writer struct {
	w   *bufio.Writer
	n   int64
	err error
	buf [8]byte
}

func (w *writer) raw(p []byte) {
	if w.err != nil {
		return
	}
	var n int
	n, w.err = w.w.Write(p)
	w.n += int64(n)
}

func (w *writer) u32(v uint32) {
	binary.LittleEndian.PutUint32(w.buf[:4], v)
	w.raw(w.buf[:4])
}

func (w *writer) u64(v uint64) {
	binary.LittleEndian.PutUint64(w.buf[:8], v)
	w.raw(w.buf[:8])
}

func (w *writer) f32(v float32) { w.u32(math.Float32bits(v)) }

func (w *writer) str(s string) {
	w.u64(uint64(len(s)))
	if w.err == nil {
		var n int
		n, w.err = w.w.WriteString(s)
		w.n += int64(n)
	}
}

func (w *writer) pad() {
	for w.n%Alignment != 0 && w.err == nil {
		w.raw([]byte{0})
	}
}

// kv is one metadata pair; write emits its type and value.
type kv struct {
	key   string
	write func(w *writer)
}

func kvU32(key string, v int) kv {
	return kv{key, func(w *writer) { w.u32(typeUint32); w.u32(uint32(v)) }}
}

func kvF32(key string, v float32) kv {
	return kv{key, func(w *writer) { w.u32(typeFloat32); w.f32(v) }}
}

func kvBool(key string, v bool) kv {
	return kv{key, func(w *writer) {
		w.u32(typeBool)
		b := byte(0)
		if v {
			b = 1
		}
		w.raw([]byte{b})
	}}
}

func kvStr(key, v string) kv {
	return kv{key, func(w *writer) { w.u32(typeString); w.str(v) }}
}

func (c Config) metadata() []kv {
	tokens, scores, types := vocab()
	return []kv{
		kvStr("general.architecture", "llama"),
		kvStr("general.name", c.Name),
		kvU32("general.alignment", Alignment),
		kvU32("general.file_type", 0), // all F32
		kvU32("llama.context_length", c.Context),
		kvU32("llama.embedding_length", c.Embedding),
		kvU32("llama.block_count", c.Layers),
		kvU32("llama.feed_forward_length", c.FeedForward),
		kvU32("llama.attention.head_count", c.Heads),
		kvU32("llama.attention.head_count_kv", c.Heads),
		kvU32("llama.rope.dimension_count", c.Embedding/c.Heads),
		kvF32("llama.rope.freq_base", 10000),
		kvF32("llama.attention.layer_norm_rms_epsilon", 1e-5),
		kvU32("llama.vocab_size", VocabSize),
		kvStr("tokenizer.ggml.model", "llama"),
		{"tokenizer.ggml.tokens", func(w *writer) {
			w.u32(typeArray)
			w.u32(typeString)
			w.u64(uint64(len(tokens)))
			for _, t := range tokens {
				w.str(t)
			}
		}},
		{"tokenizer.ggml.scores", func(w *writer) {
			w.u32(typeArray)
			w.u32(typeFloat32)
			w.u64(uint64(len(scores)))
			for _, s := range scores {
				w.f32(s)
			}
		}},
		{"tokenizer.ggml.token_type", func(w *writer) {
			w.u32(typeArray)
			w.u32(typeInt32)
			w.u64(uint64(len(types)))
			for _, t := range types {
				w.u32(uint32(t))
			}
		}},
		kvU32("tokenizer.ggml.unknown_token_id", UnknownToken),
		kvU32("tokenizer.ggml.bos_token_id", BOSToken),
		kvU32("tokenizer.ggml.eos_token_id", EOSToken),
		kvBool("tokenizer.ggml.add_bos_token", true),
		kvBool("tokenizer.ggml.add_eos_token", false),
		kvStr("tokenizer.chat_template", ChatTemplate),
	}
}

// Write writes the model c describes to w in GGUF v3. The bytes depend only
// on c.
func Write(out io.Writer, c Config) error {
	c = c.withDefaults()
	if err := c.validate(); err != nil {
		return err
	}
	w := &writer{w: bufio.NewWriterSize(out, 1<<16)}
	meta := c.metadata()
	ts := c.tensors()

	w.raw([]byte(Magic))
	w.u32(Version)
	w.u64(uint64(len(ts)))
	w.u64(uint64(len(meta)))
	for _, m := range meta {
		w.str(m.key)
		m.write(w)
	}
	var off uint64
	for _, t := range ts {
		w.str(t.name)
		w.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			w.u64(d)
		}
		w.u32(0) // GGML_TYPE_F32
		w.u64(off)
		off += t.bytes()
		off = (off + Alignment - 1) / Alignment * Alignment
	}
	w.pad()

	rng := newNormal(c.Seed)
	start := w.n
	for _, t := range ts {
		// Weights ~ N(0, 1/sqrt(row length)): activations keep a unit
		// scale through the layers, and logits stay finite.
		std := 1 / math.Sqrt(float64(t.dims[0]))
		row := int64(t.dims[0])
		for i := range t.elems() {
			var v float32
			switch t.fill {
			case fillOnes:
				v = 1
			case fillRandom:
				v = float32(rng.next() * std)
			case fillOutput:
				// Draw for every element, so the zeroed rows do not
				// shift the others; zero the rows of ids below
				// FirstTextToken (control and byte tokens), and
				// scale the others to logits of standard deviation
				// OutputLogitScale.
				v = float32(rng.next() * std * OutputLogitScale)
				if i/row < FirstTextToken {
					v = 0
				}
			}
			w.f32(v)
		}
		w.pad()
	}
	if w.err != nil {
		return fmt.Errorf("gguf: writing the model: %w", w.err)
	}
	if got, want := uint64(w.n-start), off; got != want {
		return fmt.Errorf("gguf: internal error: wrote %d bytes of tensor data, the tensor infos describe %d", got, want)
	}
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("gguf: writing the model: %w", err)
	}
	return nil
}

// WriteFile writes the model c describes to the file path, through a
// temporary file in the same folder renamed into place, so that a reader
// never sees a partial model.
func WriteFile(path string, c Config) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err := Write(f, c); err != nil {
		return fmt.Errorf("%w (file %s)", err, path)
	}
	// CreateTemp makes the file 0600; a model is no secret.
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("gguf: closing %s: %w", f.Name(), err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	return nil
}

// normal draws approximately standard normal numbers (the Irwin-Hall sum of
// twelve uniforms, less 6) from SplitMix64. It uses only additions and
// integer arithmetic, never a transcendental function or anything a
// compiler could fuse, so the weights for a seed are the same bits on every
// machine and Go release (math/rand promises no such thing for its
// distributions).
type normal struct{ state uint64 }

func newNormal(seed uint64) *normal { return &normal{state: seed} }

func (n *normal) u64() uint64 {
	n.state += 0x9e3779b97f4a7c15
	z := n.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (n *normal) next() float64 {
	// Each term is an integer below 2^53, so the integer sum is exact; its
	// conversion to float64 is correctly rounded and the division by a
	// power of two exact.
	var sum uint64
	for range 12 {
		sum += n.u64() >> 11
	}
	return float64(sum)/(1<<53) - 6
}
