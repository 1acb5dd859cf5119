package serve

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"sync"
	"time"

	"aimeter/model"
	"aimeter/sut/servertiming"
)

// DefaultMaxBatch is KServeOptions.MaxBatch when it is zero: the largest
// batch of the reference model (mlp.MaxBatch).
const DefaultMaxBatch = 64

// KServeOptions configure a KServe server.
type KServeOptions struct {
	// Model is the model served; required unless NullModel is set.
	Model *model.MLP
	// NullModel, when true, runs no model: every request is answered at
	// once with logits of zeros of the right shape, with no queue and no
	// batching, so that a benchmark of clients measures the clients and
	// the protocol rather than the model. The shapes are Model's if it is
	// set, else NullInputs and NullClasses. False means the model is run.
	NullModel bool
	// ModelName is the name the model is served under; empty means
	// "fashion-mlp".
	ModelName string
	// ModelVersion is the model's one version; empty means "1".
	ModelVersion string
	// ServerName and ServerVersion are reported by the server metadata;
	// empty means "aimeter" and "dev".
	ServerName, ServerVersion string
	// MaxBatch is the largest batch the model runs; the server batches the
	// requests that wait while the model is busy. Zero means
	// DefaultMaxBatch.
	MaxBatch int
	// Workers is the number of batches run at once. Zero means 1.
	Workers int
	// Threads is the number of goroutines the model uses for one batch.
	// Zero means all cores.
	Threads int
	// QueueSize is the number of requests that may wait for the model;
	// more are refused (HTTP 503, gRPC UNAVAILABLE). Zero means 8192.
	QueueSize int
}

// The tensor shapes of a null model (KServeOptions.NullModel) without a
// Model: those of the reference model.
const (
	NullInputs  = 784
	NullClasses = 10
)

// The tensor names of the served model.
const (
	KServeInput  = "input"
	KServeOutput = "logits"
)

// KServe serves the reference model over the Open Inference Protocol (KServe
// v2): HTTP/REST through ServeHTTP, gRPC through RegisterGRPC. Requests that
// arrive while the model is busy are batched. Create it with NewKServe and
// Close it after its listeners.
type KServe struct {
	opts    KServeOptions
	inputs  int
	classes int
	jobs    chan *kjob
	done    chan struct{}
	wg      sync.WaitGroup
	jobPool sync.Pool // *kjob
	scratch sync.Pool // *httpScratch
	mux     httpMux
	live    kserveMetrics
	metrics http.Handler
}

// kjob is one request waiting for the model.
type kjob struct {
	x      []float32 // rows × inputs
	rows   int
	out    []float32 // rows × classes, filled by the worker
	queued time.Time
	start  time.Time // inference start
	end    time.Time // inference end
	ready  chan struct{}
}

// NewKServe starts the batching workers of a server for opts.Model.
func NewKServe(opts KServeOptions) (*KServe, error) {
	if opts.Model == nil && !opts.NullModel {
		return nil, errors.New("serve.NewKServe: Model is required unless NullModel is set")
	}
	if opts.ModelName == "" {
		opts.ModelName = "fashion-mlp"
	}
	if opts.ModelVersion == "" {
		opts.ModelVersion = "1"
	}
	if opts.ServerName == "" {
		opts.ServerName = "aimeter"
	}
	if opts.ServerVersion == "" {
		opts.ServerVersion = "dev"
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	if opts.Threads <= 0 {
		opts.Threads = runtime.GOMAXPROCS(0)
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 8192
	}
	k := &KServe{
		opts:    opts,
		inputs:  NullInputs,
		classes: NullClasses,
		jobs:    make(chan *kjob, opts.QueueSize),
		done:    make(chan struct{}),
	}
	if opts.Model != nil {
		k.inputs, k.classes = opts.Model.Inputs(), opts.Model.Classes()
	}
	k.jobPool.New = func() any { return &kjob{ready: make(chan struct{}, 1)} }
	k.scratch.New = func() any { return new(httpScratch) }
	k.registerMetrics()
	k.mux = k.newMux()
	if opts.NullModel {
		return k, nil
	}
	for range opts.Workers {
		k.wg.Add(1)
		go k.work()
	}
	return k, nil
}

// Close stops the workers; requests still waiting fail. Close the listeners
// (http.Server.Shutdown, grpc.Server.Stop) first.
func (k *KServe) Close() {
	select {
	case <-k.done:
	default:
		close(k.done)
	}
	k.wg.Wait()
}

// errBusy: the request queue is full.
var errBusy = errors.New("server busy: the request queue is full")

// errClosed: the server is shutting down.
var errClosed = errors.New("server shutting down")

// infer runs rows samples of x through the model, batched with other
// requests, and returns the logits (valid until the job is released) and
// the job with its times.
func (k *KServe) infer(ctx context.Context, x []float32, rows int) (*kjob, error) {
	k.live.inflight.Add(1)
	defer k.live.inflight.Add(-1)
	j, err := k.inferJob(ctx, x, rows)
	if err != nil {
		k.live.failure.Add(1)
	} else {
		k.live.success.Add(1)
	}
	return j, err
}

// inferJob is infer without its counts.
func (k *KServe) inferJob(ctx context.Context, x []float32, rows int) (*kjob, error) {
	j := k.jobPool.Get().(*kjob)
	j.x, j.rows, j.queued = x, rows, time.Now()
	if cap(j.out) < rows*k.classes {
		j.out = make([]float32, rows*k.classes)
	}
	j.out = j.out[:rows*k.classes]
	if k.opts.NullModel {
		clear(j.out)
		j.start = time.Now()
		j.end = j.start
		return j, nil
	}
	select {
	case k.jobs <- j:
	case <-k.done:
		k.release(j)
		return nil, errClosed
	default:
		k.release(j)
		return nil, errBusy
	}
	select {
	case <-j.ready:
		return j, nil
	case <-ctx.Done():
		// The worker still owns the job: leave it to the garbage
		// collector instead of the pool.
		return nil, ctx.Err()
	case <-k.done:
		return nil, errClosed
	}
}

// release returns a finished job to the pool.
func (k *KServe) release(j *kjob) {
	j.x = nil
	k.jobPool.Put(j)
}

func (k *KServe) work() {
	defer k.wg.Done()
	inf := k.opts.Model.NewInferencer(k.opts.MaxBatch)
	inf.SetThreads(k.opts.Threads)
	x := make([]float32, 0, k.opts.MaxBatch*k.inputs)
	out := make([]float32, 0, k.opts.MaxBatch*k.classes)
	var batch []*kjob
	for {
		var first *kjob
		select {
		case first = <-k.jobs:
		case <-k.done:
			return
		}
		batch = append(batch[:0], first)
		rows := first.rows
	fill:
		for rows < k.opts.MaxBatch {
			select {
			case j := <-k.jobs:
				batch = append(batch, j)
				rows += j.rows
			default:
				break fill
			}
		}
		x = x[:0]
		for _, j := range batch {
			x = append(x, j.x...)
		}
		if cap(out) < rows*k.classes {
			out = make([]float32, rows*k.classes)
		}
		out = out[:rows*k.classes]
		start := time.Now()
		inf.Infer(out, x, rows)
		end := time.Now()
		off := 0
		for _, j := range batch {
			n := j.rows * k.classes
			copy(j.out, out[off:off+n])
			off += n
			j.start, j.end = start, end
			j.ready <- struct{}{}
		}
		clear(batch)
	}
}

// serverTiming formats the stage times of a request: decode is the
// preprocessing (parsing the request), the queue wait is the dispatch, the
// model's batch is the inference, encoding the response the postprocessing.
func serverTiming(received, decoded time.Time, j *kjob, encoded time.Time) string {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return servertiming.Format([]servertiming.Metric{
		{Name: servertiming.MetricDispatch, Dur: ms(j.start.Sub(j.queued)), HasDur: true},
		{Name: servertiming.MetricPreprocess, Dur: ms(decoded.Sub(received)), HasDur: true},
		{Name: servertiming.MetricInference, Dur: ms(j.end.Sub(j.start)), HasDur: true},
		{Name: servertiming.MetricPostprocess, Dur: ms(encoded.Sub(j.end)), HasDur: true},
	})
}

// checkInput checks a request's input tensor and returns its row count.
func (k *KServe) checkInput(name, datatype string, shape []int64, values int) (int, error) {
	if name != KServeInput {
		return 0, fmt.Errorf("unknown input %q: the model's input is %q", name, KServeInput)
	}
	if datatype != "FP32" {
		return 0, fmt.Errorf("input %q: datatype %s: want FP32", name, datatype)
	}
	rows := 1
	switch {
	case len(shape) == 2 && shape[1] == int64(k.inputs) && shape[0] >= 1 && shape[0] <= int64(k.opts.QueueSize):
		rows = int(shape[0])
	case len(shape) == 1 && shape[0] == int64(k.inputs):
	default:
		return 0, fmt.Errorf("input %q: shape %v: want [N, %d] or [%d]", name, shape, k.inputs, k.inputs)
	}
	if values != rows*k.inputs {
		return 0, fmt.Errorf("input %q: shape %v holds %d values, the request has %d", name, shape, rows*k.inputs, values)
	}
	return rows, nil
}

// rawFloats appends little-endian FP32 data to x.
func rawFloats(x []float32, b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return x, fmt.Errorf("%d bytes of FP32 data is not a whole number of values", len(b))
	}
	for i := 0; i < len(b); i += 4 {
		x = append(x, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return x, nil
}
