package kserve

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"sync"

	"aimeter/loadgen"
	"aimeter/sut/netsut"
)

// Compression is the QSL-side compression of the samples an Endpoint
// sends over HTTP (the MLPerf network division's options: no compression,
// lossless compression, or the data set's original compression).
type Compression string

// The compressions. The empty Compression is CompressionNone.
const (
	// CompressionNone builds each request as it is sent.
	CompressionNone Compression = "none"
	// CompressionLossless builds each sample's request body when the
	// sample is loaded (untimed) and gzips it (RFC 1952, compress/gzip at
	// its default level); the request carries "Content-Encoding: gzip",
	// standard HTTP that Triton and aimeter serve kserve decode, and
	// Inference-Header-Content-Length keeps the length of the JSON part of
	// the body before compression, as Triton reads it. The body carries no
	// request id (the id is optional in the protocol), so that the bytes
	// of a sample are fixed before the run.
	CompressionLossless Compression = "lossless"
	// CompressionOriginal sends the data set's own compressed form of a
	// sample (JPEG for the image sets). No data set aimeter sends has one
	// yet: Check refuses it, naming the data set.
	CompressionOriginal Compression = "original"
)

// Codec is the codec of CompressionLossless, as a bundle records it.
const Codec = "gzip"

// prepared is a sample's request body, built and compressed when the
// sample was loaded.
type prepared struct {
	body    []byte // the gzip of the body
	jsonLen int    // the length of the JSON part before compression
}

// preparedSet holds the prepared bodies of the loaded samples and the
// sizes of every sample ever prepared, by QSL index.
type preparedSet struct {
	mu      sync.RWMutex
	bodies  map[uint64]*prepared
	payload []int64 // body bytes before compression, by index
	wire    []int64 // after
}

func (p *preparedSet) get(i uint64) *prepared {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.bodies[i]
}

func (p *preparedSet) put(i uint64, pr *prepared, raw int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bodies == nil {
		p.bodies = make(map[uint64]*prepared)
	}
	p.bodies[i] = pr
	if n := int(i) + 1; n > len(p.payload) {
		p.payload = append(p.payload, make([]int64, n-len(p.payload))...)
		p.wire = append(p.wire, make([]int64, n-len(p.wire))...)
	}
	p.payload[i], p.wire[i] = int64(raw), int64(len(pr.body))
}

func (p *preparedSet) drop(idx []uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, i := range idx {
		delete(p.bodies, i)
	}
}

// ParseCompression reads none, lossless or original; "" is
// CompressionNone.
func ParseCompression(s string) (Compression, error) {
	switch c := Compression(s); c {
	case "", CompressionNone:
		return CompressionNone, nil
	case CompressionLossless, CompressionOriginal:
		return c, nil
	}
	return "", fmt.Errorf("compression %q: want none, lossless or original", s)
}

// checkCompression is New's check of Options.Compression.
func checkCompression(opts *Options) error {
	c, err := ParseCompression(string(opts.Compression))
	if err != nil {
		return fmt.Errorf("kserve: Compression: %w", err)
	}
	opts.Compression = c
	if c != CompressionNone && opts.GRPC {
		return fmt.Errorf("kserve: Compression %s needs HTTP: gRPC compresses each message as it is sent, in the timed path, which the MLPerf rules do not allow (compression is the QSL's, untimed)", c)
	}
	return nil
}

// compressing reports whether the samples are prepared when loaded.
func (e *Endpoint) compressing() bool {
	return e.opts.Compression != "" && e.opts.Compression != CompressionNone
}

// checkOriginal refuses CompressionOriginal for a data set without an
// original compressed form (every data set aimeter sends today).
func (e *Endpoint) checkOriginal(l *layout) error {
	if e.opts.Compression != CompressionOriginal {
		return nil
	}
	what := "the reference data set (Fashion-MNIST IDX files of raw 8-bit pixels)"
	if l.gen != nil {
		what = "the inputs built from the model metadata (" + l.gen.Name() + ")"
	}
	return &CompressionError{fmt.Errorf("kserve: Compression original: %s has no original compressed form of its samples; use lossless or none", what)}
}

// CompressionError is Check's error for a compression the samples cannot
// have (original, for a data set without an original compressed form): a
// setting to change, not a server that is not ready.
type CompressionError struct{ Err error }

func (e *CompressionError) Error() string { return e.Err.Error() }
func (e *CompressionError) Unwrap() error { return e.Err }

// Loading returns q with its LoadSamples extended to build and compress
// the request body of every sample it loads, as the network division asks
// (QSL-side, untimed; never in the issue path), when the Endpoint
// compresses; otherwise q itself. Call it after Check, and run loadgen on
// the QSL it returns.
func (e *Endpoint) Loading(q loadgen.QSL) loadgen.QSL {
	if !e.compressing() {
		return q
	}
	return &compressingQSL{QSL: q, e: e}
}

// compressingQSL is a QSL whose loaded samples are prepared for the wire.
type compressingQSL struct {
	loadgen.QSL
	e *Endpoint
}

func (c *compressingQSL) LoadSamples(idx []uint64) error {
	if err := c.QSL.LoadSamples(idx); err != nil {
		return err
	}
	return c.e.prepare(idx)
}

func (c *compressingQSL) UnloadSamples(idx []uint64) error {
	c.e.pre.drop(idx)
	return c.QSL.UnloadSamples(idx)
}

// prepare builds and gzips the request bodies of samples idx.
func (e *Endpoint) prepare(idx []uint64) error {
	l := e.lay.Load()
	if l == nil {
		return errors.New("kserve: samples loaded before Check succeeded")
	}
	var scratch []byte
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for _, i := range idx {
		var b []byte
		var jsonLen int
		if l.gen != nil {
			ts, ok := l.gen.Tensors(i)
			if !ok {
				return fmt.Errorf("kserve: preparing sample %d: not loaded in the QSL", i)
			}
			b = appendGenRequest(scratch[:0], "", ts, l.outs, e.opts.BinaryData)
			jsonLen = len(b)
			if e.opts.BinaryData {
				for _, t := range ts {
					b = append(b, t.Raw...)
				}
			}
		} else {
			x, ok := e.opts.Inputs.Sample(i)
			if !ok {
				return fmt.Errorf("kserve: preparing sample %d: not loaded in the QSL", i)
			}
			if len(x) != l.size {
				return fmt.Errorf("kserve: preparing sample %d: %d values; input %q of shape %v takes %d", i, len(x), l.inName, l.shape, l.size)
			}
			b = appendJSONRequest(scratch[:0], "", l, x, e.opts.BinaryData)
			jsonLen = len(b)
			if e.opts.BinaryData {
				b = appendRaw(b, x)
			}
		}
		gz.Reset()
		zw.Reset(&gz)
		if _, err := zw.Write(b); err != nil {
			return fmt.Errorf("kserve: compressing sample %d: %w", i, err)
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("kserve: compressing sample %d: %w", i, err)
		}
		e.pre.put(i, &prepared{body: bytes.Clone(gz.Bytes()), jsonLen: jsonLen}, len(b))
		scratch = b
	}
	return nil
}

// PayloadSizes returns, by QSL index, the request body of every sample
// prepared so far before compression (payload) and as sent (wire); 0 for
// a sample never loaded. Both are nil when the Endpoint does not
// compress.
func (e *Endpoint) PayloadSizes() (payload, wire []int64) {
	e.pre.mu.RLock()
	defer e.pre.mu.RUnlock()
	if e.pre.payload == nil {
		return nil, nil
	}
	return append([]int64(nil), e.pre.payload...), append([]int64(nil), e.pre.wire...)
}

// doPrepared sends the prepared body of sample s over HTTP.
func (h *httpClient) doPrepared(ctx context.Context, l *layout, s loadgen.QuerySample, resp *loadgen.Response) {
	pr := h.e.pre.get(s.Index)
	if pr == nil {
		resp.Err = loadgen.WithCategory(netsut.CategoryClient, fmt.Errorf("sample %d was not prepared: Compression prepares samples when the QSL loads them (Endpoint.Loading)", s.Index))
		return
	}
	b := h.bufs.Get().(*httpBuf)
	defer h.bufs.Put(b)
	b.req = append(b.req[:0], pr.body...)
	b.gzip = true
	body, hl, hdr := h.post(ctx, b, pr.jsonLen, resp)
	b.gzip = false
	if body == nil {
		return
	}
	if l.gen != nil {
		if err := checkHTTPResponse(body, hl, l.outs); err != nil {
			resp.Err = err
			return
		}
	} else {
		class, err := decodeHTTPResponse(body, hl, l.outName)
		if err != nil {
			resp.Err = decodeError(err)
			return
		}
		resp.Data = classBytes[class : class+1]
	}
	h.stages(hdr, resp)
}

var gzipEncoding = []string{"gzip"}

// Compression returns the Endpoint's compression: CompressionNone when
// it sends the samples as they are.
func (e *Endpoint) Compression() Compression { return e.opts.Compression }

// InputDatatype is the datatype of the samples' input tensor as the
// model metadata declared it ("FP32"), for the bandwidth check's data type;
// "" before Check or for a model of several inputs of different types.
func (e *Endpoint) InputDatatype() string {
	l := e.lay.Load()
	switch {
	case l == nil:
		return ""
	case l.gen == nil:
		return "FP32"
	}
	dt := ""
	for _, s := range l.gen.Specs() {
		if dt != "" && s.Datatype != dt {
			return ""
		}
		dt = s.Datatype
	}
	return dt
}
