//go:build onnx

package onnx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"aimeter/loadgen"
	"aimeter/sut/batch"
)

// LibraryEnv is the environment variable naming the ONNX Runtime shared
// library when Options.Library is empty.
const LibraryEnv = "AIMETER_ONNXRUNTIME_LIB"

// SetupHint is the command that provides the runtime library and models.
const SetupHint = `eval "$(scripts/setup-onnx.sh)"`

var (
	initMu   sync.Mutex
	initPath string
)

// Init loads the ONNX Runtime shared library at path ("" means
// $AIMETER_ONNXRUNTIME_LIB) and initialises the runtime, once per
// process. A later call with another path is an error: a process holds one
// runtime.
func Init(path string) error {
	if path == "" {
		path = os.Getenv(LibraryEnv)
	}
	if path == "" {
		return fmt.Errorf("onnx: no ONNX Runtime library: set %s or give the library's path (run %s to fetch ONNX Runtime 1.30.0)", LibraryEnv, SetupHint)
	}
	initMu.Lock()
	defer initMu.Unlock()
	if initPath != "" {
		if initPath != path {
			return fmt.Errorf("onnx: ONNX Runtime is already loaded from %s; one process loads one library (asked for %s)", initPath, path)
		}
		return nil
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		if err == nil {
			err = errors.New("is a directory")
		}
		return fmt.Errorf("onnx: the ONNX Runtime library %s: %w (run %s to fetch it)", path, err, SetupHint)
	}
	ort.SetSharedLibraryPath(path)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("onnx: loading ONNX Runtime from %s: %w", path, err)
	}
	initPath = path
	return nil
}

// Version returns the version of the loaded ONNX Runtime ("" before Init).
func Version() string {
	initMu.Lock()
	defer initMu.Unlock()
	if initPath == "" {
		return ""
	}
	return ort.GetVersion()
}

// Output is one output tensor of one sample, as the model returned it.
// Exactly one of the data slices is set, by the tensor's element type.
type Output struct {
	Shape   []int64
	Float32 []float32
	Int64   []int64
}

// Task turns samples into model inputs and model outputs into responses.
// Its methods are called from the SUT's workers, concurrently.
type Task interface {
	// InputShape returns the shape of sample index's input, without the
	// batch dimension; samples of equal shape may share a batch.
	InputShape(index uint64) ([]int64, error)
	// Preprocess writes the input of sample index into dst, which holds
	// the product of InputShape's dimensions.
	Preprocess(index uint64, dst []float32) error
	// Postprocess turns the model's output for sample index into the
	// sample's response data, appended to dst.
	Postprocess(index uint64, out Output, dst []byte) ([]byte, error)
}

// Options configure the SUT. The zero value of each field but Model and
// Task has a useful default.
type Options struct {
	// Name is the SUT name logged by loadgen; "" means "ONNXRuntimeSUT".
	Name string
	// Model is the .onnx file (required).
	Model string
	// Input and Output name the model's input and output; "" means the
	// first of each. The input must be a float32 tensor.
	Input, Output string
	// IntraOpThreads is ONNX Runtime's intra-op thread count; 0 means 1.
	IntraOpThreads int
	// MaxBatch is the most samples of one model call; 0 means 1. A model
	// whose input has a fixed batch dimension of 1 runs one at a time
	// whatever this says.
	MaxBatch int
	// Workers is the number of goroutines running the model at once, each
	// with its own batch; 0 means 1.
	Workers int
	// NoSpin stops ONNX Runtime's intra-op threads from spinning while
	// they wait for work (session.intra_op.allow_spinning = 0): slower
	// hand-offs, but no core burnt, which helps on a machine shared with
	// other work. The zero value lets them spin, ONNX Runtime's default.
	NoSpin bool
	// Task prepares the inputs and reads the outputs (required).
	Task Task
	// NoStageTimes leaves the per-sample stage times out of the
	// responses; Stats still sums them.
	NoStageTimes bool
}

// Stage is a processing stage.
type Stage int

// The stages, in processing order.
const (
	Preprocess  Stage = iota // the task's Preprocess of every sample of a batch
	Inference                // the model call
	Postprocess              // the task's Postprocess of every sample
	numStages
)

// String names the stage as the GB/T time breakdown does.
func (s Stage) String() string { return [...]string{"preprocess", "inference", "postprocess"}[s] }

// Stats sums the time of each stage over the batches run.
type Stats struct {
	Batches, Samples uint64
	Total            [numStages]time.Duration
}

// MeanPerSample returns the mean time of stage s per sample.
func (st Stats) MeanPerSample(s Stage) time.Duration {
	if st.Samples == 0 {
		return 0
	}
	return st.Total[s] / time.Duration(st.Samples)
}

// ModelInfo is what a model file declares of its inputs and outputs.
type ModelInfo struct {
	Inputs, Outputs []ort.InputOutputInfo
}

// Inspect reads the inputs and outputs of a model file; Init must have
// been called.
func Inspect(model string) (*ModelInfo, error) {
	if _, err := os.Stat(model); err != nil {
		return nil, fmt.Errorf("onnx: the model %w (run %s for the OCR models)", err, SetupHint)
	}
	in, out, err := ort.GetInputOutputInfo(model)
	if err != nil {
		return nil, fmt.Errorf("onnx: reading the model %s: %w", model, err)
	}
	return &ModelInfo{Inputs: in, Outputs: out}, nil
}

func names(list []ort.InputOutputInfo) string {
	var s []string
	for _, x := range list {
		s = append(s, fmt.Sprintf("%s %s%v", x.Name, x.DataType, []int64(x.Dimensions)))
	}
	return strings.Join(s, ", ")
}

// pick returns the entry named name ("" = the first).
func pick(list []ort.InputOutputInfo, name, what, model string) (ort.InputOutputInfo, error) {
	if len(list) == 0 {
		return ort.InputOutputInfo{}, fmt.Errorf("onnx: the model %s has no %ss", model, what)
	}
	if name == "" {
		return list[0], nil
	}
	for _, x := range list {
		if x.Name == name {
			return x, nil
		}
	}
	return ort.InputOutputInfo{}, fmt.Errorf("onnx: the model %s has no %s %q; its %ss: %s", model, what, name, what, names(list))
}

// SUT runs an ONNX model for loadgen. Create it with New and Close it.
type SUT struct {
	opts          Options
	session       *ort.DynamicAdvancedSession
	input, output ort.InputOutputInfo
	maxBatch      int
	// queue holds the issued samples until a worker batches them.
	queue *batch.Queue

	batches, samples atomic.Uint64
	stageNs          [numStages]atomic.Int64
	wg               sync.WaitGroup
}

var (
	_ loadgen.SUT     = (*SUT)(nil)
	_ loadgen.Drainer = (*SUT)(nil)
)

// New loads the model into a session and starts the workers. Init must
// have been called. The input must be a float32 tensor whose dimensions
// after the first agree with the task's shapes where the model fixes
// them; this is checked for each batch, with an error naming the input.
func New(opts Options) (*SUT, error) {
	if opts.Model == "" || opts.Task == nil {
		return nil, errors.New("onnx.New: Model and Task are required")
	}
	if opts.IntraOpThreads < 0 || opts.MaxBatch < 0 || opts.Workers < 0 {
		return nil, fmt.Errorf("onnx.New: IntraOpThreads %d, MaxBatch %d, Workers %d: none may be negative", opts.IntraOpThreads, opts.MaxBatch, opts.Workers)
	}
	if opts.Name == "" {
		opts.Name = "ONNXRuntimeSUT"
	}
	opts.IntraOpThreads = max(opts.IntraOpThreads, 1)
	opts.MaxBatch = max(opts.MaxBatch, 1)
	opts.Workers = max(opts.Workers, 1)
	info, err := Inspect(opts.Model)
	if err != nil {
		return nil, err
	}
	in, err := pick(info.Inputs, opts.Input, "input", opts.Model)
	if err != nil {
		return nil, err
	}
	out, err := pick(info.Outputs, opts.Output, "output", opts.Model)
	if err != nil {
		return nil, err
	}
	if in.OrtValueType != ort.ONNXTypeTensor || in.DataType != ort.TensorElementDataTypeFloat {
		return nil, fmt.Errorf("onnx: the model's input %s is %s, want a float32 tensor", in.Name, &in)
	}
	if out.OrtValueType != ort.ONNXTypeTensor || (out.DataType != ort.TensorElementDataTypeFloat && out.DataType != ort.TensorElementDataTypeInt64) {
		return nil, fmt.Errorf("onnx: the model's output %s is %s, want a float32 or int64 tensor (name another with the output option; its outputs: %s)", out.Name, &out, names(info.Outputs))
	}
	if len(in.Dimensions) == 0 {
		return nil, fmt.Errorf("onnx: the model's input %s is a scalar, want a tensor with a batch dimension", in.Name)
	}
	maxBatch := opts.MaxBatch
	if d := in.Dimensions[0]; d > 0 {
		maxBatch = min(maxBatch, int(d))
		if d != 1 {
			return nil, fmt.Errorf("onnx: the model's input %s has a fixed first dimension of %d; a batch dimension of -1 or 1 is needed", in.Name, d)
		}
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("onnx: session options: %w", err)
	}
	defer so.Destroy()
	if err := so.SetIntraOpNumThreads(opts.IntraOpThreads); err != nil {
		return nil, fmt.Errorf("onnx: intra-op threads %d: %w", opts.IntraOpThreads, err)
	}
	if err := so.SetInterOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("onnx: inter-op threads: %w", err)
	}
	if opts.NoSpin {
		if err := so.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
			return nil, fmt.Errorf("onnx: turning spinning off: %w", err)
		}
	}
	sess, err := ort.NewDynamicAdvancedSession(opts.Model, []string{in.Name}, []string{out.Name}, so)
	if err != nil {
		return nil, fmt.Errorf("onnx: loading the model %s: %w", opts.Model, err)
	}
	s := &SUT{opts: opts, session: sess, input: in, output: out, maxBatch: maxBatch, queue: batch.New(maxBatch, 0)}
	for range opts.Workers {
		s.wg.Add(1)
		go s.work()
	}
	return s, nil
}

// Name returns the configured name.
func (s *SUT) Name() string { return s.opts.Name }

// InputName is the name of the model's input the SUT feeds.
func (s *SUT) InputName() string { return s.input.Name }

// OutputName is the name of the model's output the SUT reads.
func (s *SUT) OutputName() string { return s.output.Name }

// MaxBatch is the largest batch the SUT runs.
func (s *SUT) MaxBatch() int { return s.maxBatch }

// IssueQuery queues the samples; it never blocks on inference.
func (s *SUT) IssueQuery(r *loadgen.Responder, samples []loadgen.QuerySample) {
	s.queue.IssueQuery(r, samples)
}

// FlushQueries does nothing: workers run whatever is queued.
func (s *SUT) FlushQueries() {}

// Drain discards the samples still queued and waits until the batches in
// progress are complete (loadgen.Drainer); call it only between runs.
func (s *SUT) Drain(ctx context.Context) error {
	if _, err := s.queue.Drain(ctx); err != nil {
		return fmt.Errorf("onnx SUT: %w", err)
	}
	return nil
}

// Close stops the workers and releases the session; queued samples are
// dropped (loadgen counts them lost).
func (s *SUT) Close() {
	s.queue.Close()
	s.wg.Wait()
	_ = s.session.Destroy()
}

// Stats returns the stage times so far.
func (s *SUT) Stats() Stats {
	st := Stats{Batches: s.batches.Load(), Samples: s.samples.Load()}
	for i := range st.Total {
		st.Total[i] = time.Duration(s.stageNs[i].Load())
	}
	return st
}

func (s *SUT) work() {
	defer s.wg.Done()
	jobs := make([]batch.Job, 0, s.maxBatch)
	var x []float32
	var out []byte
	resp := make([]loadgen.Response, 0, s.maxBatch)
	stages := make([]loadgen.StageTimes, s.maxBatch)
	for {
		jobs = s.queue.Take(jobs)
		if len(jobs) == 0 {
			return
		}
		// Run the samples in groups of one input shape, in queue order.
		for len(jobs) > 0 {
			shape, err := s.opts.Task.InputShape(jobs[0].S.Index)
			if err != nil {
				jobs[0].R.Fail(jobs[0].S.ID, err)
				jobs = jobs[1:]
				continue
			}
			n := 1
			for n < len(jobs) {
				sh, err := s.opts.Task.InputShape(jobs[n].S.Index)
				if err != nil || !slices.Equal(sh, shape) {
					break
				}
				n++
			}
			x, out = s.run(jobs[:n], shape, x, out, resp, stages)
			jobs = jobs[n:]
		}
		s.queue.Done()
	}
}

// run runs one group of samples of one input shape through the model and
// completes them; it returns its scratch buffers for reuse.
func (s *SUT) run(group []batch.Job, shape []int64, x []float32, out []byte, resp []loadgen.Response, stages []loadgen.StageTimes) ([]float32, []byte) {
	fail := func(err error) {
		for _, j := range group {
			j.R.Fail(j.S.ID, err)
		}
	}
	size := 1
	for _, d := range shape {
		size *= int(d)
	}
	n := len(group)
	if cap(x) < n*size {
		x = make([]float32, n*size)
	}
	x = x[:n*size]
	if err := s.checkShape(shape); err != nil {
		fail(err)
		return x, out
	}
	t0 := time.Now()
	for k, j := range group {
		if err := s.opts.Task.Preprocess(j.S.Index, x[k*size:(k+1)*size]); err != nil {
			fail(fmt.Errorf("sample %d: %w", j.S.Index, err))
			return x, out
		}
	}
	t1 := time.Now()
	in, err := ort.NewTensor(append(ort.Shape{int64(n)}, shape...), x)
	if err != nil {
		fail(fmt.Errorf("onnx: input tensor: %w", err))
		return x, out
	}
	outputs := []ort.Value{nil}
	err = s.session.Run([]ort.Value{in}, outputs)
	_ = in.Destroy()
	t2 := time.Now()
	if err != nil {
		fail(fmt.Errorf("onnx: running %s: %w", s.opts.Model, err))
		return x, out
	}
	defer outputs[0].Destroy()
	oshape := outputs[0].GetShape()
	if len(oshape) == 0 || oshape[0] != int64(n) {
		fail(fmt.Errorf("onnx: the output %s has shape %v for a jobs of %d", s.output.Name, oshape, n))
		return x, out
	}
	per := 1
	for _, d := range oshape[1:] {
		per *= int(d)
	}
	out = out[:0]
	ends := make([]int, n)
	for k, j := range group {
		o := Output{Shape: oshape[1:]}
		switch t := outputs[0].(type) {
		case *ort.Tensor[float32]:
			o.Float32 = t.GetData()[k*per : (k+1)*per]
		case *ort.Tensor[int64]:
			o.Int64 = t.GetData()[k*per : (k+1)*per]
		default:
			fail(fmt.Errorf("onnx: the output %s is of an unsupported type", s.output.Name))
			return x, out
		}
		out, err = s.opts.Task.Postprocess(j.S.Index, o, out)
		if err != nil {
			fail(fmt.Errorf("sample %d: %w", j.S.Index, err))
			return x, out
		}
		ends[k] = len(out)
	}
	t3 := time.Now()
	resp = resp[:0]
	start := 0
	for k, j := range group {
		resp = append(resp, loadgen.Response{ID: j.S.ID, Data: out[start:ends[k]]})
		start = ends[k]
		if !s.opts.NoStageTimes {
			r := j.R
			stages[k] = loadgen.StageTimes{
				Received:        j.Received,
				PreprocessStart: r.At(t0), PreprocessEnd: r.At(t1),
				InferenceStart: r.At(t1), InferenceEnd: r.At(t2),
				PostprocessStart: r.At(t2), PostprocessEnd: r.At(t3),
				ResultSent: r.At(t3),
			}
			resp[k].Stages = &stages[k]
		}
	}
	s.batches.Add(1)
	s.samples.Add(uint64(n))
	s.stageNs[Preprocess].Add(int64(t1.Sub(t0)))
	s.stageNs[Inference].Add(int64(t2.Sub(t1)))
	s.stageNs[Postprocess].Add(int64(t3.Sub(t2)))
	// One completion call per responder (a jobs normally has one).
	from := 0
	for k := 1; k <= n; k++ {
		if k == n || group[k].R != group[from].R {
			group[from].R.CompleteBatch(resp[from:k])
			from = k
		}
	}
	return x, out
}

// checkShape compares a sample shape with the dimensions the model fixes.
func (s *SUT) checkShape(shape []int64) error {
	dims := s.input.Dimensions[1:]
	if len(dims) != len(shape) {
		return fmt.Errorf("onnx: the model's input %s has dimensions %v; a sample of shape %v does not fit (%d dimensions after the batch, want %d)", s.input.Name, []int64(s.input.Dimensions), shape, len(shape), len(dims))
	}
	for i, d := range dims {
		if d > 0 && d != shape[i] {
			return fmt.Errorf("onnx: the model's input %s has dimensions %v; a sample of shape %v does not fit (dimension %d)", s.input.Name, []int64(s.input.Dimensions), shape, i+1)
		}
	}
	return nil
}
