package model

import "sync"

// Matrix kernels.
//
// All products go through one register-blocked micro-kernel, kernel1x8,
// which multiplies one row of A (contiguous over k) by one packed panel of
// B (k rows of nr=8 consecutive columns, stored contiguously) and keeps the
// eight running sums in eight scalar locals the compiler holds in
// registers. Measured on the development machine this 1×8 shape, unrolled
// four times in k, is the fastest plain-Go shape: wider tiles (4×4, 4×8)
// exceed the 15 usable SSE registers and spill, while the 1×8 tile leaves
// room for the multiplicand and reads B through memory operands.
//
// B is always packed: panel p holds columns [8p, 8p+8) for every k, so the
// k-block [k0, k1) of a panel is the contiguous slice [k0*8, k1*8), the
// kernel streams it linearly, and the last panel is zero-padded. Model
// weights are kept in exactly this layout (see MLP), so inference never
// packs anything. A row-major A is used in place; a transposed A is packed
// row by row into per-goroutine scratch.
//
// The driver walks k in blocks of kc so the active panel block (kc×8
// floats, 8 KiB) stays in L1 while rows of A stream past it. Work is split
// across goroutines by rows of C, or by panels of C when there are fewer
// rows than panels; every element of C is computed by one goroutine with
// the same k order whatever the split, so results are bit-identical for
// any GOMAXPROCS.

const (
	nr = 8   // panel width: columns of B per packed panel
	kc = 256 // k block
	mc = 64  // rows of a transposed A packed at a time

	// parMinMACs is the smallest multiply-accumulate count worth splitting
	// across goroutines; below it the hand-off costs more than it saves.
	parMinMACs = 1 << 19
)

// panels returns the number of nr-wide panels covering n columns.
func panels(n int) int { return (n + nr - 1) / nr }

// packedLen returns the length of a packed k×n matrix.
func packedLen(k, n int) int { return panels(n) * k * nr }

// kernel1x8 computes c[j] (+)= sum_k a[k]*b[k*8+j] for j in 0..7, over
// k = 0..len(a)-1 in increasing order. When load is false the sums start
// from zero, otherwise from c.
func kernel1x8(a, b []float32, c *[nr]float32, load bool) {
	var c0, c1, c2, c3, c4, c5, c6, c7 float32
	if load {
		c0, c1, c2, c3, c4, c5, c6, c7 = c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
	}
	b = b[:len(a)*nr]
	for len(a) >= 4 && len(b) >= 32 {
		a0 := a[0]
		c0 += a0 * b[0]
		c1 += a0 * b[1]
		c2 += a0 * b[2]
		c3 += a0 * b[3]
		c4 += a0 * b[4]
		c5 += a0 * b[5]
		c6 += a0 * b[6]
		c7 += a0 * b[7]
		a1 := a[1]
		c0 += a1 * b[8]
		c1 += a1 * b[9]
		c2 += a1 * b[10]
		c3 += a1 * b[11]
		c4 += a1 * b[12]
		c5 += a1 * b[13]
		c6 += a1 * b[14]
		c7 += a1 * b[15]
		a2 := a[2]
		c0 += a2 * b[16]
		c1 += a2 * b[17]
		c2 += a2 * b[18]
		c3 += a2 * b[19]
		c4 += a2 * b[20]
		c5 += a2 * b[21]
		c6 += a2 * b[22]
		c7 += a2 * b[23]
		a3 := a[3]
		c0 += a3 * b[24]
		c1 += a3 * b[25]
		c2 += a3 * b[26]
		c3 += a3 * b[27]
		c4 += a3 * b[28]
		c5 += a3 * b[29]
		c6 += a3 * b[30]
		c7 += a3 * b[31]
		a = a[4:]
		b = b[32:]
	}
	for len(a) >= 1 && len(b) >= 8 {
		a0 := a[0]
		c0 += a0 * b[0]
		c1 += a0 * b[1]
		c2 += a0 * b[2]
		c3 += a0 * b[3]
		c4 += a0 * b[4]
		c5 += a0 * b[5]
		c6 += a0 * b[6]
		c7 += a0 * b[7]
		a = a[1:]
		b = b[8:]
	}
	c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7] = c0, c1, c2, c3, c4, c5, c6, c7
}

// packB packs panels [p0, p1) of the logical k×n matrix B into dst (length
// packedLen(k, n)). B is row-major with leading dimension ld, or, if
// trans, B is stored as its n×k transpose (element (kk, j) at j*ld+kk).
// Columns past n are zero.
func packB(dst, b []float32, ld, k, n int, trans bool, p0, p1 int) {
	for p := p0; p < p1; p++ {
		j0 := p * nr
		w := min(nr, n-j0)
		panel := dst[p*k*nr : (p+1)*k*nr]
		if !trans {
			for kk := 0; kk < k; kk++ {
				d := (*[nr]float32)(panel[kk*nr : kk*nr+nr])
				if w == nr {
					*d = [nr]float32(b[kk*ld+j0 : kk*ld+j0+nr])
					continue
				}
				*d = [nr]float32{}
				copy(d[:w], b[kk*ld+j0:kk*ld+j0+w])
			}
			continue
		}
		if w < nr {
			clear(panel)
		}
		for j := 0; j < w; j++ {
			src := b[(j0+j)*ld : (j0+j)*ld+k]
			for kk, v := range src {
				panel[kk*nr+j] = v
			}
		}
	}
}

// packWT packs panels [q0, q1) of the transpose of a weight matrix held in
// packed form: w is the packed in×out matrix W (packedLen(in, out)), and
// dst receives the packed out×in matrix Wᵀ (packedLen(out, in)). Because
// both layouts use 8-wide panels, this is a transpose of 8×8 tiles.
func packWT(dst, w []float32, in, out int, q0, q1 int) {
	for q := q0; q < q1; q++ {
		i0 := q * nr
		iw := min(nr, in-i0)
		panel := dst[q*out*nr : (q+1)*out*nr]
		if iw < nr {
			clear(panel)
		}
		for p := 0; p < panels(out); p++ {
			// Tile: rows i0..i0+iw of W's panel p, i.e. W[i][8p+jj].
			src := w[p*in*nr+i0*nr : p*in*nr+(i0+iw)*nr]
			kw := min(nr, out-p*nr)
			for ii := 0; ii < iw; ii++ {
				row := (*[nr]float32)(src[ii*nr : ii*nr+nr])
				for jj := 0; jj < kw; jj++ {
					// Wᵀ[8p+jj][i0+ii] = W[i0+ii][8p+jj]
					panel[(p*nr+jj)*nr+ii] = row[jj]
				}
			}
		}
	}
}

// gemmOp is one C (+)= A·B product, reusable across calls without
// allocation. A is m×k (row-major with leading dimension lda, or stored
// transposed as k×m when transA); B is packed (packedLen(k, n)); C is
// row-major m×n with leading dimension ldc, or, when cPacked, itself in
// packed panel layout (packedLen(m, n)), which is how weight gradients are
// produced.
type gemmOp struct {
	m, n, k    int
	a          []float32
	lda        int
	transA     bool
	bp         []float32
	c          []float32
	ldc        int
	cPacked    bool
	accumulate bool

	byRows  bool
	scratch [][]float32 // per chunk, mc*kc floats, for a transposed A
	wg      sync.WaitGroup
	threads int // at most this many chunks when > 0
}

// run performs the product, in parallel when it is large enough.
func (g *gemmOp) run() {
	np := panels(g.n)
	chunks := 1
	if g.m*g.n*g.k >= parMinMACs {
		chunks = maxProcs()
		if g.threads > 0 {
			chunks = min(chunks, g.threads)
		}
	}
	g.byRows = g.m >= np
	if g.byRows {
		chunks = min(chunks, g.m)
	} else {
		chunks = min(chunks, np)
	}
	if g.transA {
		for len(g.scratch) < chunks {
			g.scratch = append(g.scratch, make([]float32, mc*kc))
		}
	}
	parallelFor(g, chunks, &g.wg)
}

func (g *gemmOp) runChunk(idx, total int) {
	r0, r1, p0, p1 := 0, g.m, 0, panels(g.n)
	if g.byRows {
		r0, r1 = split(g.m, idx, total)
	} else {
		p0, p1 = split(p1, idx, total)
	}
	if r0 >= r1 || p0 >= p1 {
		return
	}
	var scratch []float32
	if g.transA {
		scratch = g.scratch[idx]
	}
	g.compute(r0, r1, p0, p1, scratch)
}

// compute does rows [r0, r1) and panels [p0, p1) of C.
func (g *gemmOp) compute(r0, r1, p0, p1 int, scratch []float32) {
	k, n := g.k, g.n
	if k == 0 {
		if !g.accumulate {
			g.zero(r0, r1, p0, p1)
		}
		return
	}
	rowStep := r1 - r0
	if g.transA {
		rowStep = mc
	}
	for k0 := 0; k0 < k; k0 += kc {
		kb := min(kc, k-k0)
		load := g.accumulate || k0 > 0
		for i0 := r0; i0 < r1; i0 += rowStep {
			i1 := min(i0+rowStep, r1)
			// a rows for this block: either in place or packed.
			abuf, ald, aoff := g.a, g.lda, k0
			if g.transA {
				for i := i0; i < i1; i++ {
					row := scratch[(i-i0)*kb : (i-i0+1)*kb]
					for kk := range row {
						row[kk] = g.a[(k0+kk)*g.lda+i]
					}
				}
				abuf, ald, aoff = scratch, kb, -i0*kb
			}
			for p := p0; p < p1; p++ {
				bpan := g.bp[p*k*nr+k0*nr : p*k*nr+(k0+kb)*nr]
				j0 := p * nr
				full := j0+nr <= n
				for i := i0; i < i1; i++ {
					arow := abuf[i*ald+aoff : i*ald+aoff+kb]
					if g.cPacked {
						off := p*g.m*nr + i*nr
						kernel1x8(arow, bpan, (*[nr]float32)(g.c[off:off+nr]), load)
						continue
					}
					off := i*g.ldc + j0
					if full {
						kernel1x8(arow, bpan, (*[nr]float32)(g.c[off:off+nr]), load)
						continue
					}
					var tmp [nr]float32
					w := n - j0
					copy(tmp[:w], g.c[off:off+w])
					kernel1x8(arow, bpan, &tmp, load)
					copy(g.c[off:off+w], tmp[:w])
				}
			}
		}
	}
}

// zero clears the part of C a chunk owns (used only when k == 0).
func (g *gemmOp) zero(r0, r1, p0, p1 int) {
	for p := p0; p < p1; p++ {
		for i := r0; i < r1; i++ {
			if g.cPacked {
				clear(g.c[p*g.m*nr+i*nr : p*g.m*nr+i*nr+nr])
				continue
			}
			j0 := p * nr
			clear(g.c[i*g.ldc+j0 : i*g.ldc+min(j0+nr, g.n)])
		}
	}
}

// packOp packs a matrix into panel layout, in parallel when it is large.
type packOp struct {
	dst, src []float32
	ld, k, n int
	trans    bool
	wT       bool // src is a packed in×out weight matrix; pack its transpose (k=out, n=in)
	wg       sync.WaitGroup
}

func (o *packOp) run() {
	np := panels(o.n)
	chunks := 1
	if o.k*o.n >= 1<<17 {
		chunks = min(maxProcs(), np)
	}
	parallelFor(o, chunks, &o.wg)
}

func (o *packOp) runChunk(idx, total int) {
	p0, p1 := split(panels(o.n), idx, total)
	if o.wT {
		packWT(o.dst, o.src, o.n, o.k, p0, p1)
		return
	}
	packB(o.dst, o.src, o.ld, o.k, o.n, o.trans, p0, p1)
}
