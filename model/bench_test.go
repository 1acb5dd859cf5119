package model

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

// reportGFLOPs reports total and per-core GFLOP/s for flops per op.
func reportGFLOPs(b *testing.B, flops float64) {
	s := b.Elapsed().Seconds()
	if s <= 0 {
		return
	}
	g := flops * float64(b.N) / s / 1e9
	b.ReportMetric(g, "GFLOP/s")
	b.ReportMetric(g/float64(runtime.GOMAXPROCS(0)), "GFLOP/s/core")
}

// BenchmarkInfer measures end-to-end inference of the default network
// through an Inferencer (no allocation) for several batch sizes.
func BenchmarkInfer(b *testing.B) {
	m := New(DefaultLayers(), 1)
	for _, batch := range []int{1, 32, 256} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			inf := m.NewInferencer(batch)
			x := randMat(9, batch*m.Inputs())
			dst := make([]float32, batch*m.Classes())
			inf.Infer(dst, x, batch)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				inf.Infer(dst, x, batch)
			}
			reportGFLOPs(b, float64(m.FLOPsPerSample())*float64(batch))
			b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

// BenchmarkGEMM measures the matrix kernel alone on the shape of the
// default network's first layer at batch 256 (C[256×256] = A[256×784]·B).
func BenchmarkGEMM(b *testing.B) {
	for _, s := range [][3]int{{256, 256, 784}, {64, 256, 784}, {1, 256, 784}} {
		m, n, k := s[0], s[1], s[2]
		b.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(b *testing.B) {
			a := randMat(1, m*k)
			bp := make([]float32, packedLen(k, n))
			packB(bp, randMat(2, k*n), n, k, n, false, 0, panels(n))
			g := gemmOp{m: m, n: n, k: k, a: a, lda: k, bp: bp, c: make([]float32, m*n), ldc: n}
			b.ReportAllocs()
			for b.Loop() {
				g.run()
			}
			reportGFLOPs(b, 2*float64(m*n*k))
		})
	}
}

// BenchmarkTrainEpoch measures one training epoch of the default network
// with the default configuration on 4096 synthetic samples.
func BenchmarkTrainEpoch(b *testing.B) {
	const n = 4096
	x, y := blobs(n, 784, 10, 3)
	cfg := DefaultTrainConfig()
	cfg.Epochs = 1
	m := New(DefaultLayers(), 1)
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Train(context.Background(), x, y, n, cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	// Forward, weight gradient and input gradient of all but the first layer.
	flops := 2 * float64(m.FLOPsPerSample())
	l := m.Layers()
	for i := 1; i+1 < len(l); i++ {
		flops += 2 * float64(l[i]*l[i+1])
	}
	reportGFLOPs(b, flops*n)
}
