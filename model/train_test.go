package model

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLearnsSeparableBlobs trains the default network on 10 Gaussian-like
// blobs in 784 dimensions and requires > 95 % held-out accuracy within 2 s.
func TestLearnsSeparableBlobs(t *testing.T) {
	n, test := 3000, 1000
	layers := DefaultLayers()
	switch {
	case raceEnabled:
		// The race detector slows the kernels ~50×; keep the parallel
		// paths but shrink the work.
		n, layers = 600, []int{784, 32, 10}
	case testing.Short():
		n = 1500
	}
	x, y := blobs(n+test, 784, 10, 12)
	m := New(layers, 1)
	cfg := DefaultTrainConfig()
	var epochs []float64
	start := time.Now()
	err := m.Train(context.Background(), x[:n*784], y[:n], n, cfg, func(epoch int, loss, acc float64) {
		if epoch != len(epochs)+1 {
			t.Errorf("progress epoch %d after %d calls", epoch, len(epochs))
		}
		epochs = append(epochs, loss)
	})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(epochs) != cfg.Epochs {
		t.Fatalf("progress called %d times, want %d", len(epochs), cfg.Epochs)
	}
	if epochs[len(epochs)-1] >= epochs[0] {
		t.Errorf("training loss did not fall: %v", epochs)
	}
	acc := m.Evaluate(x[n*784:], y[n:], test)
	t.Logf("%d samples, %d epochs: held-out accuracy %.4f in %v", n, cfg.Epochs, acc, elapsed)
	if acc <= 0.95 {
		t.Errorf("held-out accuracy %.4f, want > 0.95", acc)
	}
}

func TestTrainRejectsBadInput(t *testing.T) {
	m := New([]int{4, 3}, 1)
	x := make([]float32, 8)
	good := DefaultTrainConfig()
	bad := func(f func(*TrainConfig)) TrainConfig { c := good; f(&c); return c }
	cases := []struct {
		name string
		x    []float32
		y    []uint8
		n    int
		cfg  TrainConfig
		want string
	}{
		{"zero config", x, []uint8{0, 1}, 2, TrainConfig{}, "Epochs is 0"},
		{"batch", x, []uint8{0, 1}, 2, bad(func(c *TrainConfig) { c.BatchSize = -1 }), "BatchSize is -1"},
		{"lr", x, []uint8{0, 1}, 2, bad(func(c *TrainConfig) { c.LearningRate = 0 }), "LearningRate is 0"},
		{"decay", x, []uint8{0, 1}, 2, bad(func(c *TrainConfig) { c.Schedule, c.LRDecay = StepDecay, 1.5 }), "LRDecay is 1.5"},
		{"schedule", x, []uint8{0, 1}, 2, bad(func(c *TrainConfig) { c.Schedule = 7 }), "Schedule is LRSchedule(7)"},
		{"momentum", x, []uint8{0, 1}, 2, bad(func(c *TrainConfig) { c.Momentum = 1 }), "Momentum is 1"},
		{"weight decay", x, []uint8{0, 1}, 2, bad(func(c *TrainConfig) { c.WeightDecay = -1 }), "WeightDecay is -1"},
		{"no samples", x, nil, 0, good, "at least one sample"},
		{"short x", x[:7], []uint8{0, 1}, 2, good, "needs 8 inputs"},
		{"short y", x, []uint8{0}, 2, good, "and 2 labels"},
		{"label range", x, []uint8{0, 3}, 2, good, "label 3 of sample 1"},
	}
	before := New([]int{4, 3}, 1)
	for _, c := range cases {
		err := m.Train(context.Background(), c.x, c.y, c.n, c.cfg, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	if !sameParams(m, before) {
		t.Error("a rejected Train changed the weights")
	}
}

func TestTrainStopsOnCancel(t *testing.T) {
	x, y := blobs(256, 784, 10, 1)
	m := New([]int{784, 16, 10}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := DefaultTrainConfig()
	cfg.Epochs = 1000
	calls := 0
	err := m.Train(ctx, x, y, 256, cfg, func(int, float64, float64) {
		calls++
		if calls == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "epoch 3") {
		t.Fatalf("err = %v, want context.Canceled in epoch 3", err)
	}
}

// TestTrainDeterministicAcrossRuns checks that two runs from the same seeds
// give bit-identical weights and that a different shuffle seed does not.
func TestTrainDeterministicAcrossRuns(t *testing.T) {
	x, y := blobs(300, 50, 4, 2)
	cfg := DefaultTrainConfig()
	train := func(seed uint64) *MLP {
		m := New([]int{50, 20, 4}, 3)
		c := cfg
		c.Seed = seed
		c.BatchSize = 32 // 300 is not a multiple: exercises the short last batch
		if err := m.Train(context.Background(), x, y, 300, c, nil); err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b, c := train(1), train(1), train(2)
	if !sameParams(a, b) {
		t.Fatal("two identical runs differ")
	}
	if sameParams(a, c) {
		t.Fatal("shuffle seed had no effect")
	}
}

func TestLearningRateSchedules(t *testing.T) {
	c := TrainConfig{LearningRate: 0.1, LRDecay: 0.5}
	approx := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	c.Schedule = Cosine
	if !approx(c.learningRate(0, 100, 0), 0.1) || !approx(c.learningRate(50, 100, 1), 0.05) || c.learningRate(99, 100, 2) > 0.0001 {
		t.Errorf("cosine: %v %v %v", c.learningRate(0, 100, 0), c.learningRate(50, 100, 1), c.learningRate(99, 100, 2))
	}
	c.Schedule = StepDecay
	if !approx(c.learningRate(70, 100, 2), 0.025) {
		t.Errorf("step decay in epoch 3: %v", c.learningRate(70, 100, 2))
	}
	c.Schedule = Constant
	if c.learningRate(99, 100, 2) != 0.1 {
		t.Errorf("constant: %v", c.learningRate(99, 100, 2))
	}
	for _, s := range []LRSchedule{Cosine, StepDecay, Constant} {
		c := DefaultTrainConfig()
		c.Schedule, c.LRDecay, c.Epochs = s, 0.5, 2
		x, y := blobs(200, 30, 3, 1)
		m := New([]int{30, 8, 3}, 1)
		if err := m.Train(context.Background(), x, y, 200, c, nil); err != nil {
			t.Errorf("%v: %v", s, err)
		}
	}
}

// TestTrainWithHooks checks that the hooks are called in order, once per
// epoch, with the epoch's sample count, and that they change nothing: the
// weights equal those of Train with the same data and configuration.
func TestTrainWithHooks(t *testing.T) {
	const n = 200
	x, y := blobs(n, 784, 10, 3)
	cfg := DefaultTrainConfig()
	cfg.Epochs = 2
	plain := New([]int{784, 16, 10}, 7)
	if err := plain.Train(context.Background(), x, y, n, cfg, nil); err != nil {
		t.Fatal(err)
	}
	hooked := New([]int{784, 16, 10}, 7)
	var calls []string
	hooks := TrainHooks{
		EpochStart: func(epoch int) { calls = append(calls, "start"+strconv.Itoa(epoch)) },
		EpochEnd: func(epoch, samples int, loss, acc float64) {
			calls = append(calls, "end"+strconv.Itoa(epoch)+"/"+strconv.Itoa(samples))
			if !(loss > 0) || acc < 0 || acc > 1 {
				t.Errorf("epoch %d: loss %v, accuracy %v", epoch, loss, acc)
			}
		},
	}
	if err := hooked.TrainWithHooks(context.Background(), x, y, n, cfg, hooks); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(calls, " "), "start1 end1/200 start2 end2/200"; got != want {
		t.Errorf("hook calls %q, want %q", got, want)
	}
	for l := range len(plain.Layers()) - 1 {
		w1, b1 := plain.Weights(l)
		w2, b2 := hooked.Weights(l)
		if !slices.Equal(w1, w2) || !slices.Equal(b1, b2) {
			t.Fatalf("layer %d: weights differ with hooks", l)
		}
	}
}
