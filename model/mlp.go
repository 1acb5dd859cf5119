package model

import (
	"fmt"
	"math"
	"sync"
)

// Limits on network shape, enforced by New, SetWeights and Load.
const (
	// MaxLayers is the largest number of layer sizes (input, hidden and
	// output together) a network may have.
	MaxLayers = 64
	// MaxWidth is the largest size of any single layer.
	MaxWidth = 1 << 16
	// MaxParams is the largest total number of weights and biases.
	MaxParams = 1 << 28
)

// MLP is a fully connected feed-forward classifier: every hidden layer is
// affine followed by ReLU, and the output layer is affine, producing
// logits (softmax is applied only by the loss and by callers that want
// probabilities).
//
// Weights are held internally in the packed panel layout of the matrix
// kernels, so inference reads them directly; Weights and SetWeights
// convert to and from plain row-major matrices. An MLP is safe for
// concurrent inference (Infer, Predict, Evaluate, Save), but not for
// inference concurrent with Train or SetWeights.
type MLP struct {
	sizes []int
	w     [][]float32 // w[l]: packed sizes[l]×sizes[l+1]
	b     [][]float32 // b[l]: sizes[l+1]

	infPool sync.Pool // *Inferencer for the convenience methods
}

// DefaultLayers returns the layer sizes of the reference Fashion-MNIST
// classifier: 784 inputs (28×28 pixels), one hidden layer of 128 ReLU
// units and 10 output logits (101,770 parameters, 203,264 FLOPs per
// sample).
func DefaultLayers() []int { return []int{784, 128, 10} }

// checkSizes reports why layer sizes are unusable, or nil.
func checkSizes(sizes []int) error {
	if len(sizes) < 2 {
		return fmt.Errorf("%d layer sizes, need at least 2 (input and output)", len(sizes))
	}
	if len(sizes) > MaxLayers {
		return fmt.Errorf("%d layer sizes, at most %d allowed", len(sizes), MaxLayers)
	}
	params := 0
	for i, s := range sizes {
		if s < 1 || s > MaxWidth {
			return fmt.Errorf("layer %d has size %d, want 1..%d", i, s, MaxWidth)
		}
		if i > 0 {
			params += sizes[i-1]*s + s
			if params > MaxParams {
				return fmt.Errorf("more than %d parameters", MaxParams)
			}
		}
	}
	return nil
}

// alloc returns an MLP with zeroed parameters; sizes must be valid.
func alloc(sizes []int) *MLP {
	m := &MLP{sizes: append([]int(nil), sizes...)}
	for l := 0; l+1 < len(sizes); l++ {
		m.w = append(m.w, make([]float32, packedLen(sizes[l], sizes[l+1])))
		m.b = append(m.b, make([]float32, sizes[l+1]))
	}
	return m
}

// New returns a network with the given layer sizes (input first, number
// of classes last), initialised deterministically from seed: hidden
// layers use He-uniform weights (U(±√(6/fan_in)), suited to ReLU), the
// output layer Glorot-uniform (U(±√(6/(fan_in+fan_out)))), biases zero.
// The same sizes and seed give the same weights on every platform. New
// panics if the sizes are invalid (fewer than 2, a size outside
// 1..MaxWidth, more than MaxLayers sizes or MaxParams parameters).
func New(layers []int, seed uint64) *MLP {
	if err := checkSizes(layers); err != nil {
		panic("model.New: " + err.Error())
	}
	m := alloc(layers)
	r := newRNG(seed)
	last := len(layers) - 2
	for l := 0; l <= last; l++ {
		in, out := layers[l], layers[l+1]
		limit := math.Sqrt(6 / float64(in))
		if l == last {
			limit = math.Sqrt(6 / float64(in+out))
		}
		// Draw in row-major order so the values do not depend on the
		// internal layout.
		for i := 0; i < in; i++ {
			for j := 0; j < out; j++ {
				m.w[l][wIndex(in, i, j)] = float32(r.uniform(limit))
			}
		}
	}
	return m
}

// wIndex returns the position of W[i][j] in a packed in×out matrix.
func wIndex(in, i, j int) int { return (j/nr)*in*nr + i*nr + j%nr }

// Layers returns a copy of the layer sizes, input first.
func (m *MLP) Layers() []int { return append([]int(nil), m.sizes...) }

// NumParams returns the number of weights and biases.
func (m *MLP) NumParams() int {
	n := 0
	for l := 0; l+1 < len(m.sizes); l++ {
		n += m.sizes[l]*m.sizes[l+1] + m.sizes[l+1]
	}
	return n
}

// FLOPsPerSample returns the floating-point operations of one forward pass
// for one sample, counting a multiply-add as two (2·in·out per layer);
// benchmarks divide by it to report GFLOP/s.
func (m *MLP) FLOPsPerSample() int64 {
	var f int64
	for l := 0; l+1 < len(m.sizes); l++ {
		f += 2 * int64(m.sizes[l]) * int64(m.sizes[l+1])
	}
	return f
}

// Weights returns copies of layer l's weights as a row-major in×out matrix
// (w[i*out+j] connects input i to output j) and of its biases.
func (m *MLP) Weights(l int) (w, b []float32) {
	in, out := m.sizes[l], m.sizes[l+1]
	w = make([]float32, in*out)
	for i := 0; i < in; i++ {
		for j := 0; j < out; j++ {
			w[i*out+j] = m.w[l][wIndex(in, i, j)]
		}
	}
	return w, append([]float32(nil), m.b[l]...)
}

// SetWeights replaces layer l's weights (row-major in×out, as returned by
// Weights) and biases. It reports an error if l is out of range or a
// length is wrong.
func (m *MLP) SetWeights(l int, w, b []float32) error {
	if l < 0 || l+1 >= len(m.sizes) {
		return fmt.Errorf("model: layer %d out of range 0..%d", l, len(m.sizes)-2)
	}
	in, out := m.sizes[l], m.sizes[l+1]
	if len(w) != in*out || len(b) != out {
		return fmt.Errorf("model: layer %d needs %d weights and %d biases, got %d and %d", l, in*out, out, len(w), len(b))
	}
	for i := 0; i < in; i++ {
		for j := 0; j < out; j++ {
			m.w[l][wIndex(in, i, j)] = w[i*out+j]
		}
	}
	copy(m.b[l], b)
	return nil
}

// Inferencer runs batched inference for one MLP with preallocated
// workspaces, so Infer and Predict do not allocate. Batches larger than
// the maximum given to NewInferencer are processed in pieces. An
// Inferencer is not safe for concurrent use; create one per goroutine (or
// use MLP.Infer, which pools them).
type Inferencer struct {
	m        *MLP
	maxBatch int
	act      [2][]float32 // ping-pong hidden activations, maxBatch×maxHidden
	logits   []float32    // maxBatch×classes, for Predict
	g        gemmOp
}

// NewInferencer returns an Inferencer whose workspaces hold maxBatch
// samples (values below 1 mean 1).
func (m *MLP) NewInferencer(maxBatch int) *Inferencer {
	maxBatch = max(maxBatch, 1)
	hidden := 0
	for _, s := range m.sizes[1 : len(m.sizes)-1] {
		hidden = max(hidden, s)
	}
	inf := &Inferencer{m: m, maxBatch: maxBatch}
	inf.act[0] = make([]float32, maxBatch*hidden)
	inf.act[1] = make([]float32, maxBatch*hidden)
	inf.logits = make([]float32, maxBatch*m.Classes())
	return inf
}

// SetThreads limits the goroutines one Infer or Predict call may use to n
// (n < 1 means all of GOMAXPROCS, the default). Results do not depend on it.
// A server that shares the machine with a busy load generator, or runs
// several inferencers side by side, sets it to avoid oversubscribing cores.
func (inf *Inferencer) SetThreads(n int) { inf.g.threads = n }

// Classes returns the number of outputs (the last layer size).
func (m *MLP) Classes() int { return m.sizes[len(m.sizes)-1] }

// Inputs returns the number of inputs per sample (the first layer size).
func (m *MLP) Inputs() int { return m.sizes[0] }

// Infer writes the logits of batch samples to dst (batch×Classes(),
// row-major). x holds the samples row-major (batch×Inputs()). It panics if
// x or dst is too short. The result for each sample does not depend on
// the batch size it was computed in, nor on GOMAXPROCS.
func (inf *Inferencer) Infer(dst, x []float32, batch int) {
	m := inf.m
	in, classes := m.Inputs(), m.Classes()
	if batch < 0 || len(x) < batch*in || len(dst) < batch*classes {
		panic(fmt.Sprintf("model: Infer of %d samples needs %d inputs and %d outputs, got %d and %d",
			batch, batch*in, batch*classes, len(x), len(dst)))
	}
	for s := 0; s < batch; s += inf.maxBatch {
		n := min(inf.maxBatch, batch-s)
		inf.forward(dst[s*classes:(s+n)*classes], x[s*in:(s+n)*in], n)
	}
}

// forward runs the network on n ≤ maxBatch samples.
func (inf *Inferencer) forward(dst, x []float32, n int) {
	m := inf.m
	src := x
	for l := 0; l+1 < len(m.sizes); l++ {
		in, out := m.sizes[l], m.sizes[l+1]
		last := l+2 == len(m.sizes)
		var c []float32
		if last {
			c = dst[:n*out]
		} else {
			c = inf.act[l%2][:n*out]
		}
		affine(&inf.g, c, src, n, in, out, m.w[l], m.b[l])
		if !last {
			relu(c)
		}
		src = c
	}
}

// affine sets c (n×out) to a·W + b, where a is n×in and w packed.
func affine(g *gemmOp, c, a []float32, n, in, out int, w, b []float32) {
	for i := 0; i < n; i++ {
		copy(c[i*out:(i+1)*out], b)
	}
	*g = gemmOp{m: n, n: out, k: in, a: a, lda: in, bp: w, c: c, ldc: out, accumulate: true, scratch: g.scratch}
	g.run()
	g.a, g.bp, g.c = nil, nil, nil
}

// relu applies max(v, 0) in place.
func relu(v []float32) {
	for i, x := range v {
		if x < 0 {
			v[i] = 0
		}
	}
}

// Predict writes the top-1 class of each of batch samples into dst (grown
// if its capacity is too small) and returns it. Ties go to the lower
// class index.
func (inf *Inferencer) Predict(dst []int, x []float32, batch int) []int {
	m := inf.m
	in, classes := m.Inputs(), m.Classes()
	if cap(dst) < batch {
		dst = make([]int, batch)
	}
	dst = dst[:batch]
	for s := 0; s < batch; s += inf.maxBatch {
		n := min(inf.maxBatch, batch-s)
		inf.Infer(inf.logits[:n*classes], x[s*in:(s+n)*in], n)
		for i := 0; i < n; i++ {
			dst[s+i] = argmax(inf.logits[i*classes : (i+1)*classes])
		}
	}
	return dst
}

// argmax returns the index of the largest value (the first on ties; NaN
// never wins).
func argmax(v []float32) int {
	best := 0
	for i := 1; i < len(v); i++ {
		if v[i] > v[best] {
			best = i
		}
	}
	return best
}

// pooledBatch is the workspace size of the Inferencers MLP.Infer pools.
const pooledBatch = 256

func (m *MLP) getInferencer() *Inferencer {
	if inf, ok := m.infPool.Get().(*Inferencer); ok {
		return inf
	}
	return m.NewInferencer(pooledBatch)
}

// Infer writes the logits of batch samples to dst, like Inferencer.Infer,
// using a pooled Inferencer; it is safe for concurrent use and does not
// allocate in the steady state.
func (m *MLP) Infer(dst, x []float32, batch int) {
	inf := m.getInferencer()
	inf.Infer(dst, x, batch)
	m.infPool.Put(inf)
}

// Predict returns the top-1 class of each of batch samples in x.
func (m *MLP) Predict(x []float32, batch int) []int {
	inf := m.getInferencer()
	out := inf.Predict(nil, x, batch)
	m.infPool.Put(inf)
	return out
}

// Evaluate returns the top-1 accuracy, as a fraction in [0, 1], of the
// network on n samples x (n×Inputs()) with labels y. It returns 0 for
// n == 0 and panics if x or y is too short.
func (m *MLP) Evaluate(x []float32, y []uint8, n int) float64 {
	if n <= 0 {
		return 0
	}
	if len(y) < n {
		panic(fmt.Sprintf("model: Evaluate of %d samples got %d labels", n, len(y)))
	}
	inf := m.getInferencer()
	defer m.infPool.Put(inf)
	in := m.Inputs()
	var pred [pooledBatch]int
	correct := 0
	for s := 0; s < n; s += pooledBatch {
		b := min(pooledBatch, n-s)
		p := inf.Predict(pred[:0], x[s*in:(s+b)*in], b)
		for i, c := range p {
			if c == int(y[s+i]) {
				correct++
			}
		}
	}
	return float64(correct) / float64(n)
}
