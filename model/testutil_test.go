package model

// blobs returns n samples of a dim-dimensional, classes-way problem of
// Gaussian-like blobs: each class has a random centre in [0,1]^dim and
// samples add uniform noise of ±0.5 per coordinate, clamped to [0,1] like
// pixels. It is linearly separable with a wide margin in high dimension.
func blobs(n, dim, classes int, seed uint64) ([]float32, []uint8) {
	r := newRNG(seed)
	centres := make([]float32, classes*dim)
	for i := range centres {
		centres[i] = float32(r.float64())
	}
	x := make([]float32, n*dim)
	y := make([]uint8, n)
	for i := 0; i < n; i++ {
		c := r.intn(classes)
		y[i] = uint8(c)
		for j := 0; j < dim; j++ {
			v := centres[c*dim+j] + float32(r.uniform(0.5))
			x[i*dim+j] = min(max(v, 0), 1)
		}
	}
	return x, y
}
