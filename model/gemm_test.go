package model

import (
	"fmt"
	"math"
	"runtime"
	"testing"
)

// randMat returns n uniform values in [-1, 1) from seed.
func randMat(seed uint64, n int) []float32 {
	r := newRNG(seed)
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.uniform(1))
	}
	return v
}

// naiveGEMM returns A·B in float64 for row-major A (m×k) and B (k×n).
func naiveGEMM(a, b []float32, m, n, k int) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for kk := 0; kk < k; kk++ {
				s += float64(a[i*k+kk]) * float64(b[kk*n+j])
			}
			c[i*n+j] = s
		}
	}
	return c
}

func transpose(a []float32, rows, cols int) []float32 {
	t := make([]float32, len(a))
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			t[j*rows+i] = a[i*cols+j]
		}
	}
	return t
}

func closeTo(got float32, want float64, k int) bool {
	return math.Abs(float64(got)-want) <= 1e-5*float64(k)+1e-6
}

// TestGEMMMatchesNaive checks every operand layout against a float64
// reference, over shapes that exercise panel remainders, k blocks, the
// transposed-A row blocks and both parallel splits.
func TestGEMMMatchesNaive(t *testing.T) {
	shapes := [][3]int{{1, 1, 1}, {1, 8, 1}, {3, 5, 7}, {2, 17, 300}, {70, 9, 513}, {130, 33, 64}, {5, 100, 800}, {64, 64, 0}}
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		a := randMat(1, m*k)
		b := randMat(2, k*n)
		want := naiveGEMM(a, b, m, n, k)
		for _, transA := range []bool{false, true} {
			for _, transB := range []bool{false, true} {
				for _, cPacked := range []bool{false, true} {
					name := fmt.Sprintf("%dx%dx%d/tA=%v/tB=%v/cP=%v", m, n, k, transA, transB, cPacked)
					bp := make([]float32, packedLen(k, n))
					if transB {
						packB(bp, transpose(b, k, n), k, k, n, true, 0, panels(n))
					} else {
						packB(bp, b, n, k, n, false, 0, panels(n))
					}
					g := gemmOp{m: m, n: n, k: k, a: a, lda: k, bp: bp, ldc: n, cPacked: cPacked}
					if transA {
						g.a, g.lda, g.transA = transpose(a, m, k), m, true
					}
					if cPacked {
						g.c = make([]float32, packedLen(m, n))
					} else {
						g.c = make([]float32, m*n)
					}
					for i := range g.c {
						g.c[i] = 99 // must be overwritten, not accumulated
					}
					g.run()
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							var got float32
							if cPacked {
								got = g.c[wIndex(m, i, j)]
							} else {
								got = g.c[i*n+j]
							}
							if !closeTo(got, want[i*n+j], k) {
								t.Fatalf("%s: C[%d][%d] = %v, want %v", name, i, j, got, want[i*n+j])
							}
						}
					}
				}
			}
		}
	}
}

// TestGEMMAccumulate checks C += A·B.
func TestGEMMAccumulate(t *testing.T) {
	m, n, k := 9, 13, 600
	a, b := randMat(3, m*k), randMat(4, k*n)
	bp := make([]float32, packedLen(k, n))
	packB(bp, b, n, k, n, false, 0, panels(n))
	c := make([]float32, m*n)
	for i := range c {
		c[i] = float32(i)
	}
	g := gemmOp{m: m, n: n, k: k, a: a, lda: k, bp: bp, c: c, ldc: n, accumulate: true}
	g.run()
	want := naiveGEMM(a, b, m, n, k)
	for i := range c {
		if !closeTo(c[i], want[i]+float64(i), k) {
			t.Fatalf("C[%d] = %v, want %v", i, c[i], want[i]+float64(i))
		}
	}
}

// TestPackWT checks the tile transpose of a packed weight matrix.
func TestPackWT(t *testing.T) {
	for _, s := range [][2]int{{1, 1}, {8, 8}, {13, 21}, {784, 10}, {9, 64}} {
		in, out := s[0], s[1]
		m := New([]int{in, out}, 5)
		w, _ := m.Weights(0)
		wt := make([]float32, packedLen(out, in))
		for i := range wt {
			wt[i] = 7
		}
		packWT(wt, m.w[0], in, out, 0, panels(in))
		want := make([]float32, packedLen(out, in))
		packB(want, w, out, out, in, true, 0, panels(in))
		for i := range want {
			if wt[i] != want[i] {
				t.Fatalf("%dx%d: packed Wᵀ[%d] = %v, want %v", in, out, i, wt[i], want[i])
			}
		}
	}
}

// TestGEMMDeterministicAcrossProcs checks bit-identical results for
// GOMAXPROCS 1 and 2 on a product large enough to be split.
func TestGEMMDeterministicAcrossProcs(t *testing.T) {
	m, n, k := 100, 70, 900
	a, b := randMat(6, m*k), randMat(7, k*n)
	bp := make([]float32, packedLen(k, n))
	packB(bp, b, n, k, n, false, 0, panels(n))
	run := func(procs int, transA bool) []float32 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		g := gemmOp{m: m, n: n, k: k, a: a, lda: k, bp: bp, c: make([]float32, m*n), ldc: n}
		if transA {
			g.a, g.lda, g.transA = transpose(a, m, k), m, true
		}
		g.run()
		return g.c
	}
	for _, transA := range []bool{false, true} {
		c1, c2, c3 := run(1, transA), run(2, transA), run(3, transA)
		for i := range c1 {
			if math.Float32bits(c1[i]) != math.Float32bits(c2[i]) || math.Float32bits(c1[i]) != math.Float32bits(c3[i]) {
				t.Fatalf("transA=%v: C[%d] differs: %v / %v / %v", transA, i, c1[i], c2[i], c3[i])
			}
		}
	}
}

// TestSetThreadsKeepsResults checks that limiting an Inferencer to one
// goroutine gives bit-identical logits on a batch large enough to split.
func TestSetThreadsKeepsResults(t *testing.T) {
	m := New([]int{784, 128, 10}, 3)
	const batch = 64
	x := make([]float32, batch*784)
	for i := range x {
		x[i] = float32(i%255) / 255
	}
	all, one := make([]float32, batch*10), make([]float32, batch*10)
	m.NewInferencer(batch).Infer(all, x, batch)
	inf := m.NewInferencer(batch)
	inf.SetThreads(1)
	inf.Infer(one, x, batch)
	for i := range all {
		if math.Float32bits(all[i]) != math.Float32bits(one[i]) {
			t.Fatalf("logit %d: %v with all threads, %v with one", i, all[i], one[i])
		}
	}
}
