// Package kserve is a network SUT adapter for the Open Inference Protocol
// (KServe v2, also served by NVIDIA Triton, Seldon MLServer and aimeter
// serve kserve): an Endpoint of package sut/netsut that sends one
// inference request per sample over HTTP/REST (JSON tensors or the binary
// tensor data extension) or gRPC (unary ModelInfer, or Triton's
// ModelStreamInfer stream).
//
// A model other than the reference model is sent inputs built from its
// metadata (Options.Data, InputOptions, Inputs; after Triton's
// perf_analyzer: every input's datatype and shape, --shape for dynamic
// dimensions, a leading -1 taken as the batch dimension, seeded random or
// zero data, or perf_analyzer's JSON input data), and its responses are
// checked against the metadata's outputs (errors of category protocol).
//
// For the reference model, each sample's input is one FP32 tensor taken from Options.Inputs; its
// name and shape come from the model metadata, which Check reads and
// checks against the data before the run. The response of a sample is the
// top-1 class of the model's output as one byte, the format of aimeter's
// in-process reference SUT, so that the accuracy check of a run scores a
// remote model the same way. A sample's RequestBytes and ResponseBytes are
// the HTTP body sizes, or the sizes of the protobuf messages over gRPC,
// without headers and framing. Errors carry the categories of sut/netsut:
// http (status and the start of the body), grpc (code and message), decode,
// connect, reset, truncated (a stream that ended before the final
// response), timeout and client.
package kserve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"aimeter/loadgen"
	"aimeter/sut/netsut"
)

// SampleSource returns the input values of a loaded sample (a QSL such as
// dataset.QSL).
type SampleSource interface {
	Sample(index uint64) ([]float32, bool)
}

// Options configure an Endpoint.
type Options struct {
	// URL is the server (required): http://host:port or https://host:port
	// for HTTP; for gRPC host:port, grpc://host:port, or https:// or
	// grpcs:// for gRPC over TLS. A path after the host is a prefix of the
	// HTTP routes (/v2/...).
	URL string
	// GRPC selects gRPC; false means HTTP/REST.
	GRPC bool
	// Model is the model name (required).
	Model string
	// ModelVersion is the model version; empty means the server's choice.
	ModelVersion string
	// Inputs gives the input values of each sample by QSL index: the
	// reference data set, one FP32 tensor per sample. Nil means none: Data
	// must then be set.
	Inputs SampleSource
	// InputSize is the number of FP32 values in every sample; Check
	// compares it with the shape in the model metadata. Zero means Check
	// does not compare (each sample is still checked against the shape).
	InputSize int
	// InputName is the model input the samples go to; empty means the
	// model's only input (Check fails on a model with several).
	InputName string
	// OutputName is the model output read for the top-1 class; empty means
	// the model's first output.
	OutputName string
	// BinaryData sends and asks for tensor data in the binary tensor data
	// extension of HTTP/REST (Inference-Header-Content-Length). False
	// sends JSON numbers. Ignored for gRPC, which always sends raw bytes.
	BinaryData bool
	// Stream sends every request over one Triton ModelStreamInfer stream
	// (gRPC only), for decoupled models: the first response of a request
	// is its first token, and the response whose triton_final_response
	// parameter is true (or the only one, where the parameter is absent)
	// ends it. False uses unary ModelInfer calls.
	Stream bool
	// TLS is the TLS configuration for https/grpcs URLs; nil means the
	// system's roots and the URL's host name. Plain URLs do not use it.
	TLS *tls.Config
	// BearerToken, if not empty, is sent as "Authorization: Bearer …" with
	// every request. It is never written to a log, an error or the name.
	BearerToken string
	// MaxConns bounds the HTTP connections open at once, idle ones kept for
	// reuse included: a request beyond it waits for a free connection
	// (the wait counts in its latency), so that an Offline query of
	// thousands of samples cannot exhaust the file descriptors of client or
	// server. Size it to the requests the server can work on at once. Zero
	// means 256. gRPC uses one HTTP/2 connection and bounds the ModelInfer
	// calls in flight on it at MaxConns instead.
	MaxConns int
	// StageTimes reads the server's stage times (the Server-Timing header
	// over HTTP, the server-timing trailer over gRPC) into each sample's
	// stage times, for the GB/T time breakdown. False ignores them (no
	// parsing cost).
	StageTimes bool
	// Data, if not nil, lets Check build the requests from the model
	// metadata (every input, of any datatype and shape; see InputOptions)
	// for a model the reference data set (Inputs) does not fit. Check uses
	// Inputs when Inputs is set, Data asks for nothing of its own (no
	// File, Mode, Shapes or BatchSize above 1) and the metadata accepts the
	// reference samples (one FP32 input, or InputName, of InputSize values,
	// as before); otherwise it builds the samples from Data, and
	// Endpoint.Inputs returns them: the QSL of the run. Nil means the
	// reference data set only.
	Data *InputOptions
	// Compression is the QSL-side compression of the samples (HTTP only;
	// see Compression and Loading); "" means CompressionNone.
	Compression Compression
}

// layout is what Check learnt from the model metadata: how to send a
// sample and which output to read.
type layout struct {
	// gen is the sample library built from the metadata (Options.Data);
	// nil when the samples are Options.Inputs. outs are then the outputs
	// of the metadata, which responses are checked against.
	gen  *Inputs
	outs []tensorMeta

	inName  string
	shape   []int64 // the request shape: the metadata shape, -1 as 1
	size    int     // values per sample: the product of shape
	outName string
}

// Endpoint is a KServe v2 server as a netsut.Endpoint. Create it with New;
// call Check before the first Do.
type Endpoint struct {
	opts   Options
	base   string // URL without a trailing slash (HTTP)
	target string // host:port (gRPC)
	tls    bool
	lay    atomic.Pointer[layout]
	genMu  sync.Mutex
	gen    *Inputs // kept across Checks: loadgen loads it once
	ids    atomic.Uint64

	h *httpClient
	g *grpcClient

	pre preparedSet // the samples prepared when loaded (Compression)

	requests, failures atomic.Uint64
	lateness           netsut.Histogram // gRPC send lateness

	closeOnce sync.Once
}

var (
	_ netsut.Endpoint  = (*Endpoint)(nil)
	_ netsut.NodeNamer = (*Endpoint)(nil)
)

// New returns an Endpoint for opts. It does not connect: Check does.
func New(opts Options) (*Endpoint, error) {
	if opts.URL == "" {
		return nil, errors.New("kserve: URL is required")
	}
	if opts.Model == "" {
		return nil, errors.New("kserve: Model is required")
	}
	if opts.Inputs == nil && opts.Data == nil {
		return nil, errors.New("kserve: Inputs is required, or Data to build the inputs from the model metadata")
	}
	if opts.Stream && !opts.GRPC {
		return nil, errors.New("kserve: Stream needs GRPC (ModelStreamInfer is a gRPC call)")
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 256
	}
	if err := checkCompression(&opts); err != nil {
		return nil, err
	}
	e := &Endpoint{opts: opts}
	raw := opts.URL
	if !strings.Contains(raw, "://") {
		if !opts.GRPC {
			return nil, fmt.Errorf("kserve: URL %q: want http:// or https://", raw)
		}
		raw = "grpc://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("kserve: URL %q: %w", opts.URL, err)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("kserve: URL %q has no host", opts.URL)
	}
	switch u.Scheme {
	case "http", "grpc":
	case "https", "grpcs":
		e.tls = true
	default:
		return nil, fmt.Errorf("kserve: URL %q: scheme %q: want http, https, grpc or grpcs", opts.URL, u.Scheme)
	}
	if !opts.GRPC && (u.Scheme == "grpc" || u.Scheme == "grpcs") {
		return nil, fmt.Errorf("kserve: URL %q is a gRPC URL: set GRPC (--grpc) or use http://", opts.URL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("kserve: URL %s: credentials in the URL are not supported; use the bearer token", u.Redacted())
	}
	e.target = u.Host
	if opts.GRPC {
		// Name the gRPC address in messages, whatever scheme the URL had
		// (http:// and https:// select plain and TLS gRPC too).
		e.base = "grpc://" + u.Host
		if e.tls {
			e.base = "grpcs://" + u.Host
		}
		e.g, err = newGRPCClient(e)
		if err != nil {
			return nil, err
		}
	} else {
		e.base = strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/")
		e.h = newHTTPClient(e)
	}
	return e, nil
}

// Name is the SUT name: protocol, URL and model.
func (e *Endpoint) Name() string {
	proto := "HTTP JSON"
	switch {
	case e.opts.Stream:
		proto = "gRPC stream"
	case e.opts.GRPC:
		proto = "gRPC"
	case e.opts.BinaryData:
		proto = "HTTP binary"
	}
	if e.opts.Compression == CompressionLossless {
		proto += " lossless (" + Codec + ")"
	}
	m := e.opts.Model
	if e.opts.ModelVersion != "" {
		m += " v" + e.opts.ModelVersion
	}
	return fmt.Sprintf("KServe v2 %s %s model %s", proto, e.base, m)
}

// Check asks the server whether it is live and ready and the model ready,
// reads the model metadata and checks it against the data: one FP32 input
// (or Options.InputName) whose shape holds Options.InputSize values, and
// the output to read. The error names the URL and the step that failed.
func (e *Endpoint) Check(ctx context.Context) error {
	var md *modelMeta
	var err error
	if e.g != nil {
		md, err = e.g.check(ctx)
	} else {
		md, err = e.h.check(ctx)
	}
	if err != nil {
		return err
	}
	var l *layout
	if e.opts.Inputs != nil && (e.opts.Data == nil || !e.opts.Data.wantsOwn()) {
		l, err = e.layoutOf(md)
		if err != nil {
			if e.opts.Data == nil {
				return fmt.Errorf("kserve: %s: model %q: %w", e.base, e.opts.Model, err)
			}
			l = nil // the reference data does not fit: the model's own inputs
		}
	}
	if l == nil {
		l, err = e.generated(md)
		if err != nil {
			return fmt.Errorf("kserve: %s: model %q: %w", e.base, e.opts.Model, err)
		}
	}
	if err := e.checkOriginal(l); err != nil {
		return err
	}
	e.lay.Store(l)
	return nil
}

// wantsOwn tells whether the options ask for data of their own rather than
// the reference data set.
func (o *InputOptions) wantsOwn() bool {
	return o.File != "" || o.Mode != "" || len(o.Shapes) > 0 || o.BatchSize > 1
}

// generated is the layout of samples built from the metadata and
// Options.Data; the sample library is made once and kept.
func (e *Endpoint) generated(md *modelMeta) (*layout, error) {
	if len(md.Outputs) == 0 {
		return nil, errors.New("the model metadata lists no outputs")
	}
	e.genMu.Lock()
	defer e.genMu.Unlock()
	if e.gen == nil {
		specs := make([]TensorSpec, len(md.Inputs))
		for i, t := range md.Inputs {
			specs[i] = TensorSpec(t)
		}
		in, err := NewInputs(specs, *e.opts.Data)
		if err != nil {
			return nil, err
		}
		e.gen = in
	}
	return &layout{gen: e.gen, outs: md.Outputs}, nil
}

// Inputs returns the sample library Check built from the model metadata
// and Options.Data, the QSL of a run; nil before Check, or when the
// samples are the reference data set (Options.Inputs).
func (e *Endpoint) Inputs() *Inputs {
	if l := e.lay.Load(); l != nil {
		return l.gen
	}
	return nil
}

// OwnInputs is Inputs as a netsut.InputsProvider gives it: a nil QSL
// where Inputs is nil.
func (e *Endpoint) OwnInputs() loadgen.QSL {
	if in := e.Inputs(); in != nil {
		return in
	}
	return nil
}

// NodeName asks the server's metadata for its name and version.
func (e *Endpoint) NodeName(ctx context.Context) (string, error) {
	if e.g != nil {
		return e.g.nodeName(ctx)
	}
	return e.h.nodeName(ctx)
}

// Do sends sample s and fills resp (see netsut.Endpoint). r may be nil
// outside a loadgen run: no first-token or token times are reported then.
func (e *Endpoint) Do(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, resp *loadgen.Response) {
	l := e.lay.Load()
	if l == nil {
		resp.Err = loadgen.WithCategory(netsut.CategoryClient, errors.New("kserve: Check has not succeeded before the first request"))
		return
	}
	if e.h != nil && e.compressing() {
		e.h.doPrepared(ctx, l, s, resp)
		return
	}
	if l.gen != nil {
		ts, ok := l.gen.Tensors(s.Index)
		if !ok {
			resp.Err = loadgen.WithCategory(netsut.CategoryClient, fmt.Errorf("sample %d is not loaded in the QSL", s.Index))
			return
		}
		switch {
		case e.g != nil && e.opts.Stream:
			e.g.doStream(ctx, r, s, l, nil, ts, resp)
		case e.g != nil:
			e.g.do(ctx, r, l, nil, ts, resp)
		default:
			e.h.doGen(ctx, l, ts, resp)
		}
		return
	}
	x, ok := e.opts.Inputs.Sample(s.Index)
	if !ok {
		resp.Err = loadgen.WithCategory(netsut.CategoryClient, fmt.Errorf("sample %d is not loaded in the QSL", s.Index))
		return
	}
	if len(x) != l.size {
		resp.Err = loadgen.WithCategory(netsut.CategoryClient, fmt.Errorf("sample %d has %d values; input %q of shape %v takes %d", s.Index, len(x), l.inName, l.shape, l.size))
		return
	}
	switch {
	case e.g != nil && e.opts.Stream:
		e.g.doStream(ctx, r, s, l, x, nil, resp)
	case e.g != nil:
		e.g.do(ctx, r, l, x, nil, resp)
	default:
		e.h.do(ctx, r, l, x, resp)
	}
}

// Stats is a snapshot of an Endpoint's counters.
type Stats struct {
	// Requests is the number of gRPC samples sent (Do calls that reached
	// the network); HTTP requests are not counted.
	Requests uint64
	// Errors is how many of those ended with an error.
	Errors uint64
	// SendLateness is the time from the start of a gRPC request to the
	// moment its message was written to the transport: for unary calls the
	// SentTime of the gRPC stats handler's OutPayload, for ModelStreamInfer
	// the return of the stream's Send. It is the client's own delay, on top
	// of loadgen's issue delay. Empty over HTTP.
	SendLateness netsut.Durations
}

// Stats returns a snapshot of the counters.
func (e *Endpoint) Stats() Stats {
	return Stats{Requests: e.requests.Load(), Errors: e.failures.Load(), SendLateness: e.lateness.Summary()}
}

// ClientStats returns Stats as a netsut.StatsReporter reports them, and
// false over HTTP, where nothing is counted.
func (e *Endpoint) ClientStats() (netsut.ClientStats, bool) {
	st := e.Stats()
	if st.Requests == 0 {
		return netsut.ClientStats{}, false
	}
	return netsut.ClientStats{Requests: st.Requests, Errors: st.Errors, SendLateness: st.SendLateness}, true
}

// Close closes the connections.
func (e *Endpoint) Close() error {
	var err error
	e.closeOnce.Do(func() {
		if e.g != nil {
			err = e.g.close()
		} else {
			e.h.close()
		}
	})
	return err
}

// modelMeta is the model metadata, from either protocol.
type modelMeta struct {
	Name     string       `json:"name"`
	Versions []string     `json:"versions"`
	Platform string       `json:"platform"`
	Inputs   []tensorMeta `json:"inputs"`
	Outputs  []tensorMeta `json:"outputs"`
	Error    string       `json:"error"`
}

type tensorMeta struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

// layoutOf checks the model metadata against the options and the data.
func (e *Endpoint) layoutOf(md *modelMeta) (*layout, error) {
	var in *tensorMeta
	switch {
	case e.opts.InputName != "":
		for i := range md.Inputs {
			if md.Inputs[i].Name == e.opts.InputName {
				in = &md.Inputs[i]
			}
		}
		if in == nil {
			return nil, fmt.Errorf("no input %q in the model metadata (inputs: %s)", e.opts.InputName, names(md.Inputs))
		}
	case len(md.Inputs) == 1:
		in = &md.Inputs[0]
	case len(md.Inputs) == 0:
		return nil, errors.New("the model metadata lists no inputs")
	default:
		return nil, fmt.Errorf("the model has %d inputs (%s): name the one the samples go to", len(md.Inputs), names(md.Inputs))
	}
	if in.Datatype != "FP32" {
		return nil, fmt.Errorf("input %q has datatype %s; the data set's samples are FP32", in.Name, in.Datatype)
	}
	if len(in.Shape) == 0 {
		return nil, fmt.Errorf("input %q has no shape in the model metadata", in.Name)
	}
	l := &layout{inName: in.Name, shape: make([]int64, len(in.Shape)), size: 1}
	for i, d := range in.Shape {
		switch {
		case d == -1:
			d = 1
		case d < 0:
			return nil, fmt.Errorf("input %q: bad dimension %d in shape %v", in.Name, d, in.Shape)
		}
		l.shape[i] = d
		if d > 1<<30 || int64(l.size)*d > 1<<30 {
			return nil, fmt.Errorf("input %q: shape %v is too large", in.Name, in.Shape)
		}
		l.size *= int(d)
	}
	if e.opts.InputSize > 0 && l.size != e.opts.InputSize {
		return nil, fmt.Errorf("input %q has shape %v (%d values per request); the data set's samples have %d values", in.Name, in.Shape, l.size, e.opts.InputSize)
	}
	switch {
	case e.opts.OutputName != "":
		for _, o := range md.Outputs {
			if o.Name == e.opts.OutputName {
				l.outName = o.Name
			}
		}
		if l.outName == "" {
			return nil, fmt.Errorf("no output %q in the model metadata (outputs: %s)", e.opts.OutputName, names(md.Outputs))
		}
	case len(md.Outputs) == 0:
		return nil, errors.New("the model metadata lists no outputs")
	default:
		l.outName = md.Outputs[0].Name
	}
	return l, nil
}

func names(ts []tensorMeta) string {
	if len(ts) == 0 {
		return "none"
	}
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = fmt.Sprintf("%s %s %v", t.Name, t.Datatype, t.Shape)
	}
	return strings.Join(s, "; ")
}
