package serve

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"aimeter/sut/kserve/inferencepb"
)

// RegisterGRPC registers the v2 gRPC service (GRPCInferenceService, with
// Triton's ModelStreamInfer) on s. Unary inference responses carry the
// request's stage times in a "server-timing" trailer, in the syntax of the
// Server-Timing header.
func (k *KServe) RegisterGRPC(s grpc.ServiceRegistrar) {
	inferencepb.RegisterGRPCInferenceServiceServer(s, &kserveGRPC{k: k})
}

// kserveGRPC implements the gRPC service.
type kserveGRPC struct {
	inferencepb.UnimplementedGRPCInferenceServiceServer
	k *KServe
}

func (g *kserveGRPC) ServerLive(context.Context, *inferencepb.ServerLiveRequest) (*inferencepb.ServerLiveResponse, error) {
	return &inferencepb.ServerLiveResponse{Live: true}, nil
}

func (g *kserveGRPC) ServerReady(context.Context, *inferencepb.ServerReadyRequest) (*inferencepb.ServerReadyResponse, error) {
	return &inferencepb.ServerReadyResponse{Ready: true}, nil
}

func (g *kserveGRPC) known(name, version string) error {
	if name != g.k.opts.ModelName {
		return status.Errorf(codes.NotFound, "unknown model %q (this server serves %q)", name, g.k.opts.ModelName)
	}
	if version != "" && version != g.k.opts.ModelVersion {
		return status.Errorf(codes.NotFound, "model %q has no version %q (it has %q)", name, version, g.k.opts.ModelVersion)
	}
	return nil
}

func (g *kserveGRPC) ModelReady(_ context.Context, r *inferencepb.ModelReadyRequest) (*inferencepb.ModelReadyResponse, error) {
	if err := g.known(r.GetName(), r.GetVersion()); err != nil {
		return nil, err
	}
	return &inferencepb.ModelReadyResponse{Ready: true}, nil
}

func (g *kserveGRPC) ServerMetadata(context.Context, *inferencepb.ServerMetadataRequest) (*inferencepb.ServerMetadataResponse, error) {
	return &inferencepb.ServerMetadataResponse{Name: g.k.opts.ServerName, Version: g.k.opts.ServerVersion}, nil
}

func (g *kserveGRPC) ModelMetadata(_ context.Context, r *inferencepb.ModelMetadataRequest) (*inferencepb.ModelMetadataResponse, error) {
	if err := g.known(r.GetName(), r.GetVersion()); err != nil {
		return nil, err
	}
	type tm = inferencepb.ModelMetadataResponse_TensorMetadata
	return &inferencepb.ModelMetadataResponse{
		Name: g.k.opts.ModelName, Versions: []string{g.k.opts.ModelVersion}, Platform: "aimeter_mlp",
		Inputs:  []*tm{{Name: KServeInput, Datatype: "FP32", Shape: []int64{-1, int64(g.k.inputs)}}},
		Outputs: []*tm{{Name: KServeOutput, Datatype: "FP32", Shape: []int64{-1, int64(g.k.classes)}}},
	}, nil
}

// inferProto runs one request; it returns the response and the stage
// times in Server-Timing syntax.
func (g *kserveGRPC) inferProto(ctx context.Context, r *inferencepb.ModelInferRequest) (*inferencepb.ModelInferResponse, string, error) {
	received := time.Now()
	if err := g.known(r.GetModelName(), r.GetModelVersion()); err != nil {
		return nil, "", err
	}
	ins := r.GetInputs()
	if len(ins) != 1 {
		return nil, "", status.Errorf(codes.InvalidArgument, "%d inputs: the model takes one, %q", len(ins), KServeInput)
	}
	in := ins[0]
	var x []float32
	var err error
	switch raw := r.GetRawInputContents(); {
	case len(raw) == 1:
		x, err = rawFloats(make([]float32, 0, len(raw[0])/4), raw[0])
	case len(raw) > 1:
		err = fmt.Errorf("%d raw input contents for one input", len(raw))
	default:
		x = in.GetContents().GetFp32Contents()
	}
	if err != nil {
		return nil, "", status.Errorf(codes.InvalidArgument, "input %q: %v", in.GetName(), err)
	}
	rows, err := g.k.checkInput(in.GetName(), in.GetDatatype(), in.GetShape(), len(x))
	if err != nil {
		return nil, "", status.Error(codes.InvalidArgument, err.Error())
	}
	for _, o := range r.GetOutputs() {
		if o.GetName() != KServeOutput {
			return nil, "", status.Errorf(codes.InvalidArgument, "unknown output %q: the model's output is %q", o.GetName(), KServeOutput)
		}
	}
	decoded := time.Now()
	j, err := g.k.infer(ctx, x, rows)
	switch {
	case errors.Is(err, errBusy) || errors.Is(err, errClosed):
		return nil, "", status.Error(codes.Unavailable, err.Error())
	case err != nil:
		return nil, "", status.FromContextError(err).Err()
	}
	raw := make([]byte, 0, 4*len(j.out))
	for _, v := range j.out {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
	}
	resp := &inferencepb.ModelInferResponse{
		ModelName: g.k.opts.ModelName, ModelVersion: g.k.opts.ModelVersion, Id: r.GetId(),
		Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{{
			Name: KServeOutput, Datatype: "FP32", Shape: []int64{int64(rows), int64(g.k.classes)},
		}},
		RawOutputContents: [][]byte{raw},
	}
	st := serverTiming(received, decoded, j, time.Now())
	g.k.release(j)
	return resp, st, nil
}

func (g *kserveGRPC) ModelInfer(ctx context.Context, r *inferencepb.ModelInferRequest) (*inferencepb.ModelInferResponse, error) {
	resp, st, err := g.inferProto(ctx, r)
	if err != nil {
		return nil, err
	}
	_ = grpc.SetTrailer(ctx, metadata.Pairs("server-timing", st))
	return resp, nil
}

// ModelStreamInfer serves requests over one stream, each as soon as it
// arrives, answering each with one response marked final
// (triton_final_response) or with an error message.
func (g *kserveGRPC) ModelStreamInfer(s grpc.BidiStreamingServer[inferencepb.ModelInferRequest, inferencepb.ModelStreamInferResponse]) error {
	ctx := s.Context()
	var (
		mu      sync.Mutex // one Send at a time
		wg      sync.WaitGroup
		sendErr error
	)
	send := func(m *inferencepb.ModelStreamInferResponse) {
		mu.Lock()
		defer mu.Unlock()
		if sendErr == nil {
			sendErr = s.Send(m)
		}
	}
	defer wg.Wait()
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _, err := g.inferProto(ctx, r)
			if err != nil {
				send(&inferencepb.ModelStreamInferResponse{ErrorMessage: status.Convert(err).Message(),
					InferResponse: &inferencepb.ModelInferResponse{Id: r.GetId()}})
				return
			}
			resp.Parameters = map[string]*inferencepb.InferParameter{
				"triton_final_response": {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: true}},
			}
			send(&inferencepb.ModelStreamInferResponse{InferResponse: resp})
		}()
	}
}
