package kserve

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"aimeter/loadgen"
	"aimeter/sut/kserve/inferencepb"
	"aimeter/sut/netsut"
)

// finalParam is the response parameter by which Triton marks the last
// response of a request on a ModelStreamInfer stream.
const finalParam = "triton_final_response"

// inferStream is one ModelStreamInfer stream shared by every request in
// flight; requests are matched to responses by request id.
type inferStream struct {
	cancel  context.CancelFunc
	sendMu  sync.Mutex // one sender at a time (grpc streams allow one)
	s       grpc.BidiStreamingClient[inferencepb.ModelInferRequest, inferencepb.ModelStreamInferResponse]
	mu      sync.Mutex
	pending map[string]*streamCall
	err     error // why the stream ended; nil while it works
}

// streamCall is one request waiting for its responses.
type streamCall struct {
	ch   chan *inferencepb.ModelStreamInferResponse
	gone chan struct{} // closed when the caller stops waiting
	end  chan struct{} // closed when the stream ends
}

// openStream returns the working stream, opening one if there is none or
// the last one broke.
func (g *grpcClient) openStream() (*inferStream, error) {
	g.sm.Lock()
	defer g.sm.Unlock()
	if st := g.stream; st != nil {
		st.mu.Lock()
		broken := st.err != nil
		st.mu.Unlock()
		if !broken {
			return st, nil
		}
	}
	ctx, cancel := context.WithCancel(g.ctx)
	s, err := g.api.ModelStreamInfer(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	st := &inferStream{cancel: cancel, s: s, pending: make(map[string]*streamCall)}
	g.stream = st
	go st.receive()
	return st, nil
}

// receive hands every response to the request it answers, until the
// stream ends; then it fails the requests still waiting.
func (st *inferStream) receive() {
	for {
		m, err := st.s.Recv()
		if err != nil {
			st.mu.Lock()
			st.err = fmt.Errorf("%w: %w", errStreamBroken, err)
			calls := st.pending
			st.pending = make(map[string]*streamCall)
			st.mu.Unlock()
			for _, c := range calls {
				close(c.end)
			}
			st.cancel()
			return
		}
		id := m.GetInferResponse().GetId()
		st.mu.Lock()
		c := st.pending[id]
		st.mu.Unlock()
		if c == nil {
			continue // a response to a request its caller gave up on
		}
		select {
		case c.ch <- m:
		case <-c.gone:
		}
	}
}

func (g *grpcClient) doStream(ctx context.Context, r *loadgen.Responder, s loadgen.QuerySample, l *layout, x []float32, ts []Tensor, resp *loadgen.Response) {
	start := time.Now()
	g.e.requests.Add(1)
	defer func() {
		if resp.Err != nil {
			g.e.failures.Add(1)
		}
	}()
	st, err := g.openStream()
	if err != nil {
		resp.Err = grpcError(ctx, err)
		return
	}
	var idBuf [20]byte
	id := string(strconv.AppendUint(idBuf[:0], g.e.ids.Add(1), 10))
	c := &streamCall{ch: make(chan *inferencepb.ModelStreamInferResponse, 4), gone: make(chan struct{}), end: make(chan struct{})}
	st.mu.Lock()
	if st.err != nil {
		err := st.err
		st.mu.Unlock()
		resp.Err = loadgen.WithCategory(netsut.CategoryConnectionReset, err)
		return
	}
	st.pending[id] = c
	st.mu.Unlock()
	defer func() {
		close(c.gone)
		st.mu.Lock()
		delete(st.pending, id)
		st.mu.Unlock()
	}()

	q := g.reqs.Get().(*grpcReq)
	g.fill(q, l, x, ts, id)
	resp.RequestBytes = int64(proto.Size(&q.req))
	st.sendMu.Lock()
	err = st.s.Send(&q.req)
	st.sendMu.Unlock()
	g.reqs.Put(q)
	if err == nil {
		// Send returns once the message is with the transport: the
		// stream's counterpart of the unary call's OutPayload time.
		g.e.lateness.Record(int64(time.Since(start)))
	}
	if err != nil {
		resp.Err = grpcError(ctx, err)
		return
	}
	var (
		class uint8
		have  bool
		times []int64
	)
	for {
		var m *inferencepb.ModelStreamInferResponse
		select {
		case <-ctx.Done():
			resp.Err = grpcError(ctx, ctx.Err())
			return
		case <-c.end:
			// The receiver queues a call's responses before it ends the
			// call: those already queued are read first (a select between
			// two ready cases picks either).
			select {
			case m = <-c.ch:
			default:
				st.mu.Lock()
				err := st.err
				st.mu.Unlock()
				if have {
					resp.Err = loadgen.WithCategory(netsut.CategoryStreamTruncated, fmt.Errorf("the stream ended before the final response: %w", err))
					return
				}
				resp.Err = grpcError(ctx, err)
				return
			}
		case m = <-c.ch:
		}
		{
			var now int64
			if r != nil {
				now = r.Now()
			}
			resp.ResponseBytes += int64(proto.Size(m))
			if msg := m.GetErrorMessage(); msg != "" {
				resp.Err = loadgen.WithCategory(netsut.CategoryGRPC, fmt.Errorf("ModelStreamInfer error: %s", prefix(msg)))
				return
			}
			ir := m.GetInferResponse()
			final, marked := finalFlag(ir)
			if len(ir.GetOutputs()) > 0 {
				if l.gen != nil {
					// Every response of a sample built from the
					// metadata is checked against it.
					if err := checkProtoResponse(ir, l.outs); err != nil {
						resp.Err = err
						return
					}
				}
				if !have {
					var data []byte
					if l.gen == nil {
						cl, err := top1Proto(ir, l.outName)
						if err != nil {
							resp.Err = loadgen.WithCategory(netsut.CategoryProtocol, err)
							return
						}
						class = cl
						data = classBytes[class : class+1]
					}
					have = true
					if marked && r != nil {
						// A decoupled model: its first response is
						// the first token, at its arrival (its token
						// time).
						r.FirstTokenAt(s.ID, now, data)
					}
				}
				times = append(times, now)
			}
			if final || !marked {
				if !have {
					resp.Err = loadgen.WithCategory(netsut.CategoryProtocol, fmt.Errorf("%w: request %s ended without an output", errDecode, id))
					return
				}
				if marked {
					resp.Tokens = int64(len(times))
					if r != nil {
						resp.TokenTimes = times
					}
				}
				if l.gen == nil {
					resp.Data = classBytes[class : class+1]
				}
				return
			}
		}
	}
}

// finalFlag reads triton_final_response: whether this is the last response
// of its request, and whether the parameter was there at all.
func finalFlag(ir *inferencepb.ModelInferResponse) (final, marked bool) {
	p, ok := ir.GetParameters()[finalParam]
	if !ok {
		return false, false
	}
	return p.GetBoolParam(), true
}
