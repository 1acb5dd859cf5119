package model

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestSplitmix64 checks the seeding generator against its published
// reference output for seed 0.
func TestSplitmix64(t *testing.T) {
	var s uint64
	for i, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := splitmix64(&s); got != want {
			t.Fatalf("output %d = %#x, want %#x", i, got, want)
		}
	}
}

func TestRNGIntnAndShuffle(t *testing.T) {
	r := newRNG(42)
	var counts [7]int
	for i := 0; i < 70000; i++ {
		v := r.intn(7)
		if v < 0 || v >= 7 {
			t.Fatalf("intn(7) = %d", v)
		}
		counts[v]++
	}
	for i, c := range counts {
		if c < 9500 || c > 10500 {
			t.Errorf("value %d drawn %d times of 70000, want about 10000", i, c)
		}
	}
	p := make([]int32, 100)
	for i := range p {
		p[i] = int32(i)
	}
	r.shuffle(p)
	q := slices.Clone(p)
	slices.Sort(q)
	for i, v := range q {
		if v != int32(i) {
			t.Fatalf("shuffle lost or duplicated %d", i)
		}
	}
	if slices.IsSorted(p) {
		t.Fatal("shuffle left 100 items in order")
	}
}

func TestNewDeterministicAndScaled(t *testing.T) {
	a, b, c := New([]int{784, 256, 10}, 7), New([]int{784, 256, 10}, 7), New([]int{784, 256, 10}, 8)
	if !sameParams(a, b) {
		t.Fatal("same seed gave different weights")
	}
	if sameParams(a, c) {
		t.Fatal("different seeds gave the same weights")
	}
	w, bias := a.Weights(0)
	limit := float32(math.Sqrt(6.0 / 784))
	var sumSq float64
	for _, v := range w {
		if v < -limit || v >= limit {
			t.Fatalf("He-uniform weight %v outside ±%v", v, limit)
		}
		sumSq += float64(v) * float64(v)
	}
	if std := math.Sqrt(sumSq / float64(len(w))); math.Abs(std-math.Sqrt(2.0/784)) > 0.002 {
		t.Errorf("weight std %v, want about √(2/784) = %v", std, math.Sqrt(2.0/784))
	}
	for _, v := range bias {
		if v != 0 {
			t.Fatal("bias not zero-initialised")
		}
	}
	if got := a.NumParams(); got != 784*256+256+256*10+10 {
		t.Errorf("NumParams = %d", got)
	}
}

func TestNewRejectsBadSizes(t *testing.T) {
	for _, sizes := range [][]int{nil, {10}, {10, 0}, {-1, 3}, {MaxWidth + 1, 2}, make([]int, MaxLayers+1)} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "model.New") {
					t.Errorf("New(%v) did not panic with a clear message (got %v)", sizes, r)
				}
			}()
			New(sizes, 1)
		}()
	}
}

// toyNet is a 2→2→2 network with hand-picked weights.
//
//	W0 = [[1, -1], [2, 0.5]], b0 = [0.5, -1]
//	W1 = [[1, 2], [3, -1]],   b1 = [0, 1]
func toyNet(t *testing.T) *MLP {
	m := New([]int{2, 2, 2}, 1)
	if err := m.SetWeights(0, []float32{1, -1, 2, 0.5}, []float32{0.5, -1}); err != nil {
		t.Fatal(err)
	}
	if err := m.SetWeights(1, []float32{1, 2, 3, -1}, []float32{0, 1}); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestForwardHandWorked checks a forward pass worked out by hand:
//
//	x = (1, 2):    h = relu(1·1+2·2+0.5, 1·(−1)+2·0.5−1) = relu(5.5, −1) = (5.5, 0)
//	               logits = (5.5·1+0·3+0, 5.5·2+0·(−1)+1) = (5.5, 12)
//	x = (−1, 0.5): h = relu(−1+1+0.5, 1+0.25−1) = (0.5, 0.25)
//	               logits = (0.5+0.75, 1−0.25+1) = (1.25, 1.75)
//
// All values are exact in float32, so equality is exact.
func TestForwardHandWorked(t *testing.T) {
	m := toyNet(t)
	x := []float32{1, 2, -1, 0.5}
	got := make([]float32, 4)
	m.Infer(got, x, 2)
	want := []float32{5.5, 12, 1.25, 1.75}
	if !slices.Equal(got, want) {
		t.Fatalf("logits = %v, want %v", got, want)
	}
	if p := m.Predict(x, 2); !slices.Equal(p, []int{1, 1}) {
		t.Fatalf("Predict = %v, want [1 1]", p)
	}
	if acc := m.Evaluate(x, []uint8{1, 0}, 2); acc != 0.5 {
		t.Fatalf("Evaluate = %v, want 0.5", acc)
	}
}

func TestSetWeightsErrors(t *testing.T) {
	m := New([]int{3, 2}, 1)
	if err := m.SetWeights(1, nil, nil); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("layer out of range: %v", err)
	}
	if err := m.SetWeights(0, make([]float32, 5), make([]float32, 2)); err == nil || !strings.Contains(err.Error(), "needs 6 weights") {
		t.Errorf("wrong length: %v", err)
	}
}

// TestSoftmaxCrossEntropyNumerics checks the loss and gradient on logits
// that overflow a naive exp.
func TestSoftmaxCrossEntropyNumerics(t *testing.T) {
	cases := []struct {
		name     string
		logits   []float32
		label    uint8
		wantLoss float64
		wantGrad []float32
	}{
		{"confident right", []float32{1000, 0, -1000}, 0, 0, []float32{0, 0, 0}},
		{"confident wrong", []float32{1000, 0, -1000}, 1, 1000, []float32{1, -1, 0}},
		{"float32 extremes", []float32{3e38, -3e38}, 1, 6e38, []float32{1, -1}},
		{"uniform", []float32{7, 7, 7, 7}, 2, math.Log(4), []float32{0.25, 0.25, -0.75, 0.25}},
	}
	for _, c := range cases {
		dz := make([]float32, len(c.logits))
		loss, _ := softmaxCrossEntropy(dz, c.logits, []uint8{c.label}, 1, len(c.logits))
		if math.IsNaN(loss) || math.IsInf(loss, 0) || math.Abs(loss-c.wantLoss) > 1e-6*max(1, c.wantLoss) {
			t.Errorf("%s: loss = %v, want %v", c.name, loss, c.wantLoss)
		}
		for i := range dz {
			if math.Abs(float64(dz[i]-c.wantGrad[i])) > 1e-6 {
				t.Errorf("%s: grad = %v, want %v", c.name, dz, c.wantGrad)
				break
			}
		}
		p := make([]float32, len(c.logits))
		Softmax(p, c.logits)
		var sum float64
		for _, v := range p {
			if math.IsNaN(float64(v)) {
				t.Fatalf("%s: softmax NaN", c.name)
			}
			sum += float64(v)
		}
		if math.Abs(sum-1) > 1e-6 {
			t.Errorf("%s: softmax sums to %v", c.name, sum)
		}
	}
	// The gradient of the mean over a batch is divided by its size.
	dz := make([]float32, 4)
	softmaxCrossEntropy(dz, []float32{0, 0, 0, 0}, []uint8{0, 1}, 2, 2)
	if want := []float32{-0.25, 0.25, 0.25, -0.25}; !slices.Equal(dz, want) {
		t.Errorf("batch-mean grad = %v, want %v", dz, want)
	}
}

// TestGradientCheck compares backprop with central finite differences of
// the mean loss for every weight and bias of a small three-layer net.
func TestGradientCheck(t *testing.T) {
	sizes := []int{6, 9, 5, 4}
	m := New(sizes, 3)
	for l := range m.b { // non-zero biases so their gradients are exercised
		for j := range m.b[l] {
			m.b[l][j] = 0.05 * float32(j%3-1)
		}
	}
	const n = 5
	x := randMat(11, n*sizes[0])
	y := []uint8{0, 3, 1, 2, 3}
	tr := newTrainer(m, n)
	loss := func() float64 {
		l, _ := tr.forwardBackward(x, y, n)
		return l / n
	}
	loss()
	var gw, gb [][]float32
	for l := range tr.gw {
		gw = append(gw, slices.Clone(tr.gw[l]))
		gb = append(gb, slices.Clone(tr.gb[l]))
	}
	const eps = 1e-3
	check := func(what string, p *float32, analytic float32) {
		old := *p
		*p = old + eps
		lp := loss()
		*p = old - eps
		lm := loss()
		*p = old
		numeric := (lp - lm) / (2 * eps)
		if d := math.Abs(float64(analytic) - numeric); d > 1e-3+2e-2*math.Abs(numeric) {
			t.Errorf("%s: backprop %v, finite difference %v", what, analytic, numeric)
		}
	}
	checked := 0
	for l := 0; l+1 < len(sizes); l++ {
		in, out := sizes[l], sizes[l+1]
		for i := 0; i < in; i++ {
			for j := 0; j < out; j++ {
				k := wIndex(in, i, j)
				check("W"+string(rune('0'+l))+"["+string(rune('0'+i))+"]["+string(rune('0'+j))+"]", &m.w[l][k], gw[l][k])
				checked++
			}
		}
		for j := 0; j < out; j++ {
			check("b"+string(rune('0'+l))+"["+string(rune('0'+j))+"]", &m.b[l][j], gb[l][j])
			checked++
		}
	}
	if checked != m.NumParams() {
		t.Fatalf("checked %d of %d parameters", checked, m.NumParams())
	}
	// Padding columns of the packed gradient must stay zero.
	for l := 0; l+1 < len(sizes); l++ {
		in, out := sizes[l], sizes[l+1]
		for i := 0; i < in; i++ {
			for j := out; j < panels(out)*nr; j++ {
				if gw[l][wIndex(in, i, j)] != 0 {
					t.Fatalf("padding gradient W%d[%d][%d] = %v", l, i, j, gw[l][wIndex(in, i, j)])
				}
			}
		}
	}
}

// TestInferBatchInvariant checks that a sample's logits do not depend on
// the batch it is computed in, nor on the Inferencer's workspace size.
func TestInferBatchInvariant(t *testing.T) {
	m := New([]int{784, 100, 30, 10}, 2)
	const n = 300
	x := randMat(5, n*784)
	all := make([]float32, n*10)
	m.NewInferencer(n).Infer(all, x, n)
	small := m.NewInferencer(7)
	one := make([]float32, 10)
	for i := 0; i < n; i += 37 {
		small.Infer(one, x[i*784:(i+1)*784], 1)
		for j := range one {
			if math.Float32bits(one[j]) != math.Float32bits(all[i*10+j]) {
				t.Fatalf("sample %d logit %d: %v alone, %v in a batch", i, j, one[j], all[i*10+j])
			}
		}
	}
	chunked := make([]float32, n*10)
	small.Infer(chunked, x, n)
	if !slices.Equal(chunked, all) {
		t.Fatal("batch split into workspace-sized pieces changed logits")
	}
	pred := small.Predict(nil, x, n)
	for i, p := range pred {
		if p != argmax(all[i*10:(i+1)*10]) {
			t.Fatalf("Predict[%d] = %d, logits argmax %d", i, p, argmax(all[i*10:(i+1)*10]))
		}
	}
}

// TestInferDoesNotAllocate checks the hot path for a serial and a
// parallel batch.
func TestInferDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	m := New(DefaultLayers(), 1)
	for _, batch := range []int{1, 256} {
		inf := m.NewInferencer(batch)
		x := randMat(1, batch*784)
		dst := make([]float32, batch*10)
		pred := make([]int, batch)
		inf.Infer(dst, x, batch)
		if a := testing.AllocsPerRun(20, func() { inf.Infer(dst, x, batch) }); a != 0 {
			t.Errorf("Inferencer.Infer(batch %d): %v allocs/op", batch, a)
		}
		if a := testing.AllocsPerRun(20, func() { inf.Predict(pred, x, batch) }); a != 0 {
			t.Errorf("Inferencer.Predict(batch %d): %v allocs/op", batch, a)
		}
		if a := testing.AllocsPerRun(20, func() { m.Infer(dst, x, batch) }); a != 0 {
			t.Errorf("MLP.Infer(batch %d): %v allocs/op", batch, a)
		}
	}
}

// TestDeterministicAcrossGOMAXPROCS trains and infers with 1, 2 and 3
// goroutines and requires bit-identical weights and logits.
func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	// Sizes chosen so that forward, weight-gradient and update steps all
	// cross the parallel thresholds (784×176 weights ≥ 2^17 elements).
	const n = 256
	x, y := blobs(n, 784, 10, 4)
	cfg := DefaultTrainConfig()
	cfg.Epochs, cfg.BatchSize = 1, 64
	run := func(procs int) (*MLP, []float32) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		m := New([]int{784, 176, 40, 10}, 9)
		if err := m.Train(t.Context(), x, y, n, cfg, nil); err != nil {
			t.Fatal(err)
		}
		logits := make([]float32, n*10)
		m.NewInferencer(n).Infer(logits, x, n)
		return m, logits
	}
	m1, l1 := run(1)
	for _, procs := range []int{2, 3} {
		m2, l2 := run(procs)
		if !sameParams(m1, m2) {
			t.Fatalf("GOMAXPROCS %d trained different weights than GOMAXPROCS 1", procs)
		}
		for i := range l1 {
			if math.Float32bits(l1[i]) != math.Float32bits(l2[i]) {
				t.Fatalf("GOMAXPROCS %d: logit %d = %v, GOMAXPROCS 1 gave %v", procs, i, l2[i], l1[i])
			}
		}
	}
}

// sameParams reports whether two networks have bit-identical parameters.
func sameParams(a, b *MLP) bool {
	if !slices.Equal(a.sizes, b.sizes) {
		return false
	}
	for l := range a.w {
		for _, pair := range [][2][]float32{{a.w[l], b.w[l]}, {a.b[l], b.b[l]}} {
			for i := range pair[0] {
				if math.Float32bits(pair[0][i]) != math.Float32bits(pair[1][i]) {
					return false
				}
			}
		}
	}
	return true
}
