package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
)

// LRSchedule selects how Train varies the learning rate.
type LRSchedule int

const (
	// Cosine anneals the learning rate at every step along a half cosine,
	// from LearningRate at the first step towards 0 at the end of the last
	// epoch. It is the zero value and the default.
	Cosine LRSchedule = iota
	// StepDecay multiplies the learning rate by LRDecay after each epoch.
	StepDecay
	// Constant keeps LearningRate throughout.
	Constant
)

// String returns the schedule's name.
func (s LRSchedule) String() string {
	switch s {
	case Cosine:
		return "cosine"
	case StepDecay:
		return "step-decay"
	case Constant:
		return "constant"
	}
	return fmt.Sprintf("LRSchedule(%d)", int(s))
}

// TrainConfig holds the hyperparameters of Train. DefaultTrainConfig
// returns the tuned values; Train rejects unusable values (a zero Epochs,
// BatchSize or LearningRate among them) rather than guessing.
type TrainConfig struct {
	// Epochs is the number of passes over the training set.
	Epochs int
	// BatchSize is the number of samples per SGD step (the last step of an
	// epoch may be smaller).
	BatchSize int
	// LearningRate is the step size at the start of training.
	LearningRate float64
	// Schedule says how the learning rate changes (default Cosine).
	Schedule LRSchedule
	// LRDecay is the per-epoch factor of the StepDecay schedule, in
	// (0, 1]; other schedules ignore it.
	LRDecay float64
	// Momentum is the heavy-ball coefficient μ in [0, 1): v ← μv + g,
	// w ← w − lr·v (the PyTorch formulation).
	Momentum float64
	// WeightDecay adds WeightDecay·w to the gradient of every weight (not
	// of the biases); 0 disables it.
	WeightDecay float64
	// Seed drives the per-epoch shuffling of the training set.
	Seed uint64
}

// DefaultTrainConfig returns the hyperparameters tuned for DefaultLayers on
// Fashion-MNIST: 3 epochs of batch 128, learning rate 0.1 with cosine
// annealing, momentum 0.9, no weight decay. See the package documentation
// for the measurements behind them.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{
		Epochs:       3,
		BatchSize:    128,
		LearningRate: 0.1,
		Schedule:     Cosine,
		Momentum:     0.9,
		Seed:         1,
	}
}

// validate reports the first unusable field.
func (c TrainConfig) validate() error {
	switch {
	case c.Epochs < 1:
		return fmt.Errorf("model: TrainConfig.Epochs is %d, want ≥ 1", c.Epochs)
	case c.BatchSize < 1:
		return fmt.Errorf("model: TrainConfig.BatchSize is %d, want ≥ 1", c.BatchSize)
	case !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 0):
		return fmt.Errorf("model: TrainConfig.LearningRate is %v, want a finite value > 0", c.LearningRate)
	case c.Schedule < Cosine || c.Schedule > Constant:
		return fmt.Errorf("model: TrainConfig.Schedule is %v, want Cosine, StepDecay or Constant", c.Schedule)
	case c.Schedule == StepDecay && !(c.LRDecay > 0 && c.LRDecay <= 1):
		return fmt.Errorf("model: TrainConfig.LRDecay is %v, want a value in (0, 1] for StepDecay", c.LRDecay)
	case !(c.Momentum >= 0 && c.Momentum < 1):
		return fmt.Errorf("model: TrainConfig.Momentum is %v, want a value in [0, 1)", c.Momentum)
	case !(c.WeightDecay >= 0) || math.IsInf(c.WeightDecay, 0):
		return fmt.Errorf("model: TrainConfig.WeightDecay is %v, want a finite value ≥ 0", c.WeightDecay)
	}
	return nil
}

// learningRate returns the rate for step (0-based) of steps in all, which
// falls in epoch (0-based).
func (c TrainConfig) learningRate(step, steps, epoch int) float64 {
	switch c.Schedule {
	case StepDecay:
		return c.LearningRate * math.Pow(c.LRDecay, float64(epoch))
	case Constant:
		return c.LearningRate
	}
	return c.LearningRate * 0.5 * (1 + math.Cos(math.Pi*float64(step)/float64(steps)))
}

// Train fits the network to n samples x (n×Inputs(), row-major, pixels
// already scaled) with labels y (each < Classes()) by mini-batch SGD with
// momentum on the mean softmax cross-entropy loss. After each epoch
// (numbered from 1) it calls progress, if not nil, with that epoch's mean
// training loss and training top-1 accuracy (measured on the fly, before
// each step's update).
//
// Training is deterministic: the same network, data and cfg give
// bit-identical weights for any GOMAXPROCS, because the samples are
// shuffled by cfg.Seed and every gradient element is reduced by a single
// goroutine in a fixed order. Train returns ctx.Err() (wrapped) if ctx is
// cancelled, leaving the weights of the last completed step, and an error
// for invalid arguments without touching the weights.
func (m *MLP) Train(ctx context.Context, x []float32, y []uint8, n int, cfg TrainConfig, progress func(epoch int, loss, acc float64)) error {
	var hooks TrainHooks
	if progress != nil {
		hooks.EpochEnd = func(epoch, _ int, loss, acc float64) { progress(epoch, loss, acc) }
	}
	return m.TrainWithHooks(ctx, x, y, n, cfg, hooks)
}

// TrainHooks are the optional callbacks of TrainWithHooks, through which a
// caller can time a training run (for instance with the GB/T 45087 training
// events of package train) without this package depending on it. A nil
// field is not called. The callbacks run on the training goroutine, between
// steps, and do not change what is trained.
type TrainHooks struct {
	// EpochStart is called just before epoch (numbered from 1) starts, before
	// its shuffle. nil: not called.
	EpochStart func(epoch int)
	// EpochEnd is called just after the epoch's last update, with the
	// number of samples it processed, its mean training loss and its
	// training top-1 accuracy (as Train's progress). nil: not called.
	EpochEnd func(epoch, samples int, loss, acc float64)
}

// TrainWithHooks is Train with callbacks at the start and the end of each
// epoch. Train(ctx, x, y, n, cfg, progress) is TrainWithHooks with an
// EpochEnd hook that calls progress; the weights are bit-identical whatever
// the hooks.
func (m *MLP) TrainWithHooks(ctx context.Context, x []float32, y []uint8, n int, cfg TrainConfig, hooks TrainHooks) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	in, classes := m.Inputs(), m.Classes()
	if n < 1 {
		return fmt.Errorf("model: Train needs at least one sample, got n=%d", n)
	}
	if len(x) < n*in || len(y) < n {
		return fmt.Errorf("model: Train of %d samples needs %d inputs and %d labels, got %d and %d", n, n*in, n, len(x), len(y))
	}
	for i, label := range y[:n] {
		if int(label) >= classes {
			return fmt.Errorf("model: label %d of sample %d is not below the %d classes", label, i, classes)
		}
	}
	if n > math.MaxInt32 {
		return errors.New("model: Train supports at most 2^31-1 samples")
	}
	t := newTrainer(m, min(cfg.BatchSize, n))
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	r := newRNG(cfg.Seed)
	steps := cfg.Epochs * ((n + t.batch - 1) / t.batch)
	step := 0
	for epoch := 1; epoch <= cfg.Epochs; epoch++ {
		if hooks.EpochStart != nil {
			hooks.EpochStart(epoch)
		}
		r.shuffle(perm)
		var lossSum float64
		correct := 0
		for s := 0; s < n; s += t.batch {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("model: training stopped in epoch %d: %w", epoch, err)
			}
			b := min(t.batch, n-s)
			t.gather(x, y, perm[s:s+b])
			loss, ok := t.forwardBackward(t.xb[:b*in], t.yb[:b], b)
			lossSum += loss
			correct += ok
			lr := cfg.learningRate(step, steps, epoch-1)
			step++
			t.update(float32(lr), float32(cfg.Momentum), float32(cfg.WeightDecay))
		}
		if hooks.EpochEnd != nil {
			hooks.EpochEnd(epoch, n, lossSum/float64(n), float64(correct)/float64(n))
		}
	}
	return nil
}

// trainer holds every buffer one training run needs, allocated once.
type trainer struct {
	m     *MLP
	batch int
	xb    []float32   // gathered inputs, batch×in
	yb    []uint8     // gathered labels
	act   [][]float32 // act[l]: output of layer l (after ReLU; logits for the last)
	dz    [2][]float32
	dzp   []float32 // packed dZ (B operand of the weight gradient)
	wt    []float32 // packed Wᵀ (B operand of the input gradient)
	gw    [][]float32
	gb    [][]float32
	vw    [][]float32
	vb    [][]float32
	g     gemmOp
	pk    packOp
	up    updateOp
}

func newTrainer(m *MLP, batch int) *trainer {
	t := &trainer{m: m, batch: batch}
	in := m.Inputs()
	t.xb = make([]float32, batch*in)
	t.yb = make([]uint8, batch)
	maxOut, maxWT := 0, 0
	for l := 0; l+1 < len(m.sizes); l++ {
		li, lo := m.sizes[l], m.sizes[l+1]
		t.act = append(t.act, make([]float32, batch*lo))
		t.gw = append(t.gw, make([]float32, len(m.w[l])))
		t.vw = append(t.vw, make([]float32, len(m.w[l])))
		t.gb = append(t.gb, make([]float32, lo))
		t.vb = append(t.vb, make([]float32, lo))
		maxOut = max(maxOut, lo)
		if l > 0 {
			maxWT = max(maxWT, packedLen(lo, li))
		}
	}
	t.dz[0] = make([]float32, batch*maxOut)
	t.dz[1] = make([]float32, batch*maxOut)
	t.dzp = make([]float32, packedLen(batch, maxOut))
	t.wt = make([]float32, maxWT)
	return t
}

// gather copies the samples idx into the batch buffers.
func (t *trainer) gather(x []float32, y []uint8, idx []int32) {
	in := t.m.Inputs()
	for i, j := range idx {
		copy(t.xb[i*in:(i+1)*in], x[int(j)*in:(int(j)+1)*in])
		t.yb[i] = y[j]
	}
}

// forwardBackward computes the gradients of the mean loss over the n
// samples x into gw and gb, and returns the summed loss and the number of
// samples classified correctly.
func (t *trainer) forwardBackward(x []float32, y []uint8, n int) (lossSum float64, correct int) {
	m := t.m
	L := len(m.sizes) - 1
	src := x
	for l := 0; l < L; l++ {
		in, out := m.sizes[l], m.sizes[l+1]
		c := t.act[l][:n*out]
		affine(&t.g, c, src, n, in, out, m.w[l], m.b[l])
		if l+1 < L {
			relu(c)
		}
		src = c
	}
	classes := m.Classes()
	dz := t.dz[0][:n*classes]
	lossSum, correct = softmaxCrossEntropy(dz, t.act[L-1][:n*classes], y, n, classes)
	for l := L - 1; l >= 0; l-- {
		in, out := m.sizes[l], m.sizes[l+1]
		a := x
		if l > 0 {
			a = t.act[l-1][:n*in]
		}
		// dW = aᵀ·dZ, written straight into the packed layout.
		t.pk = packOp{dst: t.dzp[:packedLen(n, out)], src: dz, ld: out, k: n, n: out}
		t.pk.run()
		t.g = gemmOp{m: in, n: out, k: n, a: a, lda: in, transA: true, bp: t.dzp[:packedLen(n, out)],
			c: t.gw[l], cPacked: true, scratch: t.g.scratch}
		t.g.run()
		gb := t.gb[l]
		clear(gb)
		for i := 0; i < n; i++ {
			for j, v := range dz[i*out : (i+1)*out] {
				gb[j] += v
			}
		}
		if l == 0 {
			break
		}
		// dA = dZ·Wᵀ, then through the ReLU of layer l-1.
		wt := t.wt[:packedLen(out, in)]
		t.pk = packOp{dst: wt, src: m.w[l], k: out, n: in, wT: true}
		t.pk.run()
		next := t.dz[(L-l)%2][:n*in]
		t.g = gemmOp{m: n, n: in, k: out, a: dz, lda: out, bp: wt, c: next, ldc: in, scratch: t.g.scratch}
		t.g.run()
		for i, v := range a {
			if v <= 0 {
				next[i] = 0
			}
		}
		dz = next
	}
	t.g = gemmOp{scratch: t.g.scratch}
	t.pk = packOp{}
	return lossSum, correct
}

// softmaxCrossEntropy computes, for n rows of logits, the summed loss
// −log softmax(z)[y] and the gradient of the mean loss, (softmax(z) −
// onehot(y))/n, into dz; it also counts rows whose top-1 class is y. It
// works in float64 after subtracting the row maximum, so huge logits
// neither overflow nor lose the loss.
func softmaxCrossEntropy(dz, logits []float32, y []uint8, n, classes int) (lossSum float64, correct int) {
	inv := 1 / float64(n)
	for i := 0; i < n; i++ {
		z := logits[i*classes : (i+1)*classes]
		d := dz[i*classes : (i+1)*classes]
		best := argmax(z)
		if best == int(y[i]) {
			correct++
		}
		zmax := float64(z[best])
		var sum float64
		for _, v := range z {
			sum += math.Exp(float64(v) - zmax)
		}
		lse := zmax + math.Log(sum)
		lossSum += lse - float64(z[y[i]])
		for j, v := range z {
			p := math.Exp(float64(v) - lse)
			if j == int(y[i]) {
				p--
			}
			d[j] = float32(p * inv)
		}
	}
	return lossSum, correct
}

// Softmax writes softmax(logits) to dst (same length), computed stably in
// float64; use it to turn Infer's logits into class probabilities.
func Softmax(dst, logits []float32) {
	if len(logits) == 0 {
		return
	}
	zmax := float64(logits[argmax(logits)])
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - zmax)
	}
	for i, v := range logits {
		dst[i] = float32(math.Exp(float64(v)-zmax) / sum)
	}
}

// update applies one SGD-with-momentum step to every parameter.
func (t *trainer) update(lr, mu, wd float32) {
	m := t.m
	for l := range m.w {
		t.up = updateOp{w: m.w[l], g: t.gw[l], v: t.vw[l], lr: lr, mu: mu, wd: wd}
		t.up.run()
		t.up = updateOp{w: m.b[l], g: t.gb[l], v: t.vb[l], lr: lr, mu: mu}
		t.up.run()
	}
	t.up = updateOp{}
}

// updateOp is v ← μv + g + wd·w; w ← w − lr·v over slices, elementwise
// (so any split is deterministic).
type updateOp struct {
	w, g, v    []float32
	lr, mu, wd float32
	wg         sync.WaitGroup
}

func (o *updateOp) run() {
	chunks := 1
	if len(o.w) >= 1<<17 {
		chunks = maxProcs()
	}
	parallelFor(o, chunks, &o.wg)
}

func (o *updateOp) runChunk(idx, total int) {
	lo, hi := split(len(o.w), idx, total)
	w, g, v := o.w[lo:hi], o.g[lo:hi], o.v[lo:hi]
	g, v = g[:len(w)], v[:len(w)]
	lr, mu, wd := o.lr, o.mu, o.wd
	for i := range w {
		vi := mu*v[i] + g[i] + wd*w[i]
		v[i] = vi
		w[i] -= lr * vi
	}
}
