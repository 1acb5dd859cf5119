package kserve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"aimeter/loadgen"
	"aimeter/sut/kserve/inferencepb"
	"aimeter/sut/netsut"
	"aimeter/sut/servertiming"
)

// grpcClient is the gRPC side of an Endpoint.
type grpcClient struct {
	e    *Endpoint
	conn *grpc.ClientConn
	api  inferencepb.GRPCInferenceServiceClient
	reqs sync.Pool // *grpcReq
	// slots bounds the ModelInfer calls in flight at once at
	// Options.MaxConns, as the HTTP client's connections are: a call
	// beyond it waits (the wait counts in its latency), so that an Offline
	// query of many thousand samples does not overflow the server's
	// request queue over the one HTTP/2 connection.
	slots chan struct{}

	// The ModelStreamInfer stream, opened on first use.
	ctx    context.Context
	cancel context.CancelFunc
	sm     sync.Mutex
	stream *inferStream
}

// grpcReq is the reusable memory of one unary request.
type grpcReq struct {
	req  inferencepb.ModelInferRequest
	in   inferencepb.ModelInferRequest_InferInputTensor
	out  inferencepb.ModelInferRequest_InferRequestedOutputTensor
	ins  [1]*inferencepb.ModelInferRequest_InferInputTensor
	outs [1]*inferencepb.ModelInferRequest_InferRequestedOutputTensor
	raw  [1][]byte
	resp inferencepb.ModelInferResponse
	// sent is when the request message was written to the transport
	// (UnixNano; 0 until then), set by sendTimes.
	sent atomic.Int64
}

// sentKey is the context key under which a unary call carries its
// *grpcReq to sendTimes.
type sentKey struct{}

// sendTimes is a gRPC stats handler that notes when each unary request was
// written to the transport (OutPayload's SentTime), the gRPC counterpart
// of httptrace's WroteRequest.
type sendTimes struct{}

func (sendTimes) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (sendTimes) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if p, ok := s.(*stats.OutPayload); ok && p.Client {
		if q, ok := ctx.Value(sentKey{}).(*grpcReq); ok {
			q.sent.Store(p.SentTime.UnixNano())
		}
	}
}

func (sendTimes) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (sendTimes) HandleConn(context.Context, stats.ConnStats) {}

// bearer sends the token with every call; it never prints it.
type bearer struct {
	md     map[string]string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return b.md, nil
}

func (b bearer) RequireTransportSecurity() bool { return b.secure }

func newGRPCClient(e *Endpoint) (*grpcClient, error) {
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if e.tls {
		cfg := e.opts.TLS
		if cfg == nil {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		creds = credentials.NewTLS(cfg)
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxBody)),
		// The window grows with the traffic; a larger start avoids a
		// throttled first second.
		grpc.WithInitialWindowSize(1 << 20),
		grpc.WithInitialConnWindowSize(1 << 24),
		grpc.WithStatsHandler(sendTimes{}),
	}
	if e.opts.BearerToken != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer{md: map[string]string{"authorization": "Bearer " + e.opts.BearerToken}, secure: e.tls}))
	}
	conn, err := grpc.NewClient(e.target, opts...)
	if err != nil {
		return nil, fmt.Errorf("kserve: gRPC client for %s: %w", e.base, err)
	}
	g := &grpcClient{e: e, conn: conn, api: inferencepb.NewGRPCInferenceServiceClient(conn), slots: make(chan struct{}, max(e.opts.MaxConns, 1))}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.reqs.New = func() any {
		q := new(grpcReq)
		q.ins[0] = &q.in
		q.outs[0] = &q.out
		q.req.Inputs = q.ins[:]
		q.req.Outputs = q.outs[:]
		q.in.Datatype = "FP32"
		return q
	}
	return g, nil
}

func (g *grpcClient) close() error {
	g.cancel()
	return g.conn.Close()
}

// callErr names the call and the server of a failed check.
func (g *grpcClient) callErr(step string, err error) error {
	if s, ok := status.FromError(err); ok {
		return fmt.Errorf("kserve: gRPC %s at %s: %s: %s", step, g.e.target, s.Code(), s.Message())
	}
	return fmt.Errorf("kserve: gRPC %s at %s: %w", step, g.e.target, err)
}

func (g *grpcClient) check(ctx context.Context) (*modelMeta, error) {
	live, err := g.api.ServerLive(ctx, &inferencepb.ServerLiveRequest{})
	if err != nil {
		return nil, g.callErr("ServerLive", err)
	}
	if !live.GetLive() {
		return nil, fmt.Errorf("kserve: ServerLive at %s: the server is not live: %w", g.e.target, netsut.ErrNotReady)
	}
	ready, err := g.api.ServerReady(ctx, &inferencepb.ServerReadyRequest{})
	if err != nil {
		return nil, g.callErr("ServerReady", err)
	}
	if !ready.GetReady() {
		return nil, fmt.Errorf("kserve: ServerReady at %s: the server is not ready: %w", g.e.target, netsut.ErrNotReady)
	}
	mr, err := g.api.ModelReady(ctx, &inferencepb.ModelReadyRequest{Name: g.e.opts.Model, Version: g.e.opts.ModelVersion})
	if err != nil {
		return nil, g.callErr("ModelReady", err)
	}
	if !mr.GetReady() {
		return nil, fmt.Errorf("kserve: ModelReady at %s: model %q is not ready: %w", g.e.target, g.e.opts.Model, netsut.ErrNotReady)
	}
	m, err := g.api.ModelMetadata(ctx, &inferencepb.ModelMetadataRequest{Name: g.e.opts.Model, Version: g.e.opts.ModelVersion})
	if err != nil {
		return nil, g.callErr("ModelMetadata", err)
	}
	md := &modelMeta{Name: m.GetName(), Versions: m.GetVersions(), Platform: m.GetPlatform()}
	for _, t := range m.GetInputs() {
		md.Inputs = append(md.Inputs, tensorMeta{Name: t.GetName(), Datatype: t.GetDatatype(), Shape: t.GetShape()})
	}
	for _, t := range m.GetOutputs() {
		md.Outputs = append(md.Outputs, tensorMeta{Name: t.GetName(), Datatype: t.GetDatatype(), Shape: t.GetShape()})
	}
	return md, nil
}

func (g *grpcClient) nodeName(ctx context.Context) (string, error) {
	sm, err := g.api.ServerMetadata(ctx, &inferencepb.ServerMetadataRequest{})
	if err != nil {
		return "", g.callErr("ServerMetadata", err)
	}
	return nodeLabel(sm.GetName(), sm.GetVersion(), g.e.target), nil
}

// fill sets the request for sample values x, or for the input tensors ts
// of a sample built from the metadata (l.gen).
func (g *grpcClient) fill(q *grpcReq, l *layout, x []float32, ts []Tensor, id string) {
	q.req.ModelName = g.e.opts.Model
	q.req.ModelVersion = g.e.opts.ModelVersion
	q.req.Id = id
	if l.gen != nil {
		fillGen(&q.req, ts, l.outs)
		return
	}
	q.req.Inputs = q.ins[:]
	q.req.Outputs = q.outs[:]
	q.in.Name = l.inName
	q.in.Shape = l.shape
	q.out.Name = l.outName
	q.raw[0] = appendRaw(q.raw[0][:0], x)
	q.req.RawInputContents = q.raw[:]
}

func (g *grpcClient) do(ctx context.Context, r *loadgen.Responder, l *layout, x []float32, ts []Tensor, resp *loadgen.Response) {
	start := time.Now()
	g.e.requests.Add(1)
	q := g.reqs.Get().(*grpcReq)
	defer g.reqs.Put(q)
	g.fill(q, l, x, ts, "")
	resp.RequestBytes = int64(proto.Size(&q.req))
	proto.Reset(&q.resp)
	q.sent.Store(0)
	ctx = context.WithValue(ctx, sentKey{}, q)
	defer func() {
		if t := q.sent.Load(); t != 0 {
			g.e.lateness.Record(t - start.UnixNano())
		}
		if resp.Err != nil {
			g.e.failures.Add(1)
		}
	}()
	select {
	case g.slots <- struct{}{}:
		defer func() { <-g.slots }()
	case <-ctx.Done():
		resp.Err = classify(ctx, ctx.Err(), false)
		return
	}
	var err error
	if g.e.opts.StageTimes {
		var tr metadata.MD
		err = g.conn.Invoke(ctx, inferencepb.GRPCInferenceService_ModelInfer_FullMethodName, &q.req, &q.resp, grpc.Trailer(&tr))
		if v := tr.Get(serverTimingKey); err == nil && len(v) > 0 {
			st, _ := servertiming.ParseStages(v...)
			resp.Stages = &st
		}
	} else {
		err = g.conn.Invoke(ctx, inferencepb.GRPCInferenceService_ModelInfer_FullMethodName, &q.req, &q.resp)
	}
	if err != nil {
		resp.Err = grpcError(ctx, err)
		return
	}
	resp.ResponseBytes = int64(proto.Size(&q.resp))
	if l.gen != nil {
		resp.Err = checkProtoResponse(&q.resp, l.outs)
		return
	}
	class, err := top1Proto(&q.resp, l.outName)
	if err != nil {
		resp.Err = loadgen.WithCategory(netsut.CategoryProtocol, err)
		return
	}
	resp.Data = classBytes[class : class+1]
}

// serverTimingKey is the gRPC metadata key (trailer) of the server's stage
// times, in the syntax of the Server-Timing HTTP header.
const serverTimingKey = "server-timing"

// top1Proto reads the top-1 class of output name from a gRPC response: raw
// output contents where the server sent them, else the typed contents.
func top1Proto(m *inferencepb.ModelInferResponse, name string) (uint8, error) {
	outs := m.GetOutputs()
	raw := m.GetRawOutputContents()
	if len(raw) > 0 && len(raw) != len(outs) {
		return 0, fmt.Errorf("%w: %d raw output contents for %d outputs", errDecode, len(raw), len(outs))
	}
	for i, o := range outs {
		if name != "" && o.GetName() != name {
			continue
		}
		if len(raw) > 0 {
			return top1Raw(o.GetDatatype(), raw[i])
		}
		c := o.GetContents()
		if c == nil {
			return 0, fmt.Errorf("%w: output %q has no contents", errDecode, o.GetName())
		}
		var a argmax
		switch dt := o.GetDatatype(); dt {
		case "FP32":
			for _, v := range c.GetFp32Contents() {
				a.add(float64(v))
			}
		case "FP64":
			for _, v := range c.GetFp64Contents() {
				a.add(v)
			}
		case "INT8", "INT16", "INT32":
			for _, v := range c.GetIntContents() {
				a.add(float64(v))
			}
		case "INT64":
			for _, v := range c.GetInt64Contents() {
				a.add(float64(v))
			}
		case "UINT8", "UINT16", "UINT32":
			for _, v := range c.GetUintContents() {
				a.add(float64(v))
			}
		case "UINT64":
			for _, v := range c.GetUint64Contents() {
				a.add(float64(v))
			}
		default:
			return 0, fmt.Errorf("%w: output datatype %q is not supported (want FP32, FP64 or an integer type)", errDecode, dt)
		}
		return a.class(o.GetDatatype())
	}
	return 0, fmt.Errorf("%w: no output %q in the response", errDecode, name)
}

// grpcError categorises a failed call: deadlines as request_timeout,
// transport failures (code Unavailable with a refused, reset or TLS
// message) by the netsut taxonomy, every other status as grpc with its code
// and code name.
func grpcError(ctx context.Context, err error) error {
	s, ok := status.FromError(err)
	if !ok {
		return classify(ctx, err, false)
	}
	msg := fmt.Errorf("gRPC %s: %s", s.Code(), prefix(s.Message()))
	m := s.Message()
	switch {
	case ctx.Err() != nil || s.Code() == codes.DeadlineExceeded:
		return loadgen.WithCategory(netsut.ClassOf(ctx, context.DeadlineExceeded, false), msg)
	// A Canceled status while the request's context is live was not the
	// client's doing: the server (or the transport under it) cancelled
	// the call, as grpc-python does under overload. It keeps its code.
	case s.Code() != codes.Unavailable:
	case strings.Contains(m, "connection refused"):
		return loadgen.WithCategory(netsut.CategoryConnectionRefused, msg)
	case strings.Contains(m, "handshake") || strings.Contains(m, "tls:") || strings.Contains(m, "x509"):
		return loadgen.WithCategory(netsut.CategoryTLS, msg)
	case strings.Contains(m, "i/o timeout") && strings.Contains(m, "dial"):
		return loadgen.WithCategory(netsut.CategoryConnectTimeout, msg)
	case isConnectMessage(m):
		return loadgen.WithCategory(netsut.CategoryConnect, msg)
	case strings.Contains(m, "reset") || strings.Contains(m, "EOF") || strings.Contains(m, "closing"):
		return loadgen.WithCategory(netsut.CategoryConnectionReset, msg)
	}
	return netsut.GRPCError(int(s.Code()), s.Code().String(), msg)
}

func isConnectMessage(m string) bool {
	return strings.Contains(m, "connection refused") || strings.Contains(m, "dial") || strings.Contains(m, "no such host") || strings.Contains(m, "handshake")
}

var errStreamBroken = errors.New("the ModelStreamInfer stream broke")
