package model

// rng is a xoshiro256** generator seeded through splitmix64. It is small,
// fast, has a 2^256-1 period and, unlike the math/rand global source, its
// sequence is fixed by this package forever, so initialisation and
// shuffling are reproducible across Go releases. It is not safe for
// concurrent use.
type rng struct {
	s [4]uint64
}

// splitmix64 advances *x and returns the next splitmix64 output.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// newRNG returns a generator whose state is expanded from seed with
// splitmix64, as the xoshiro authors recommend.
func newRNG(seed uint64) *rng {
	r := &rng{}
	for i := range r.s {
		r.s[i] = splitmix64(&seed)
	}
	return r
}

func rotl(x uint64, k uint) uint64 { return (x << k) | (x >> (64 - k)) }

// uint64 returns the next 64 random bits.
func (r *rng) uint64() uint64 {
	s := &r.s
	result := rotl(s[1]*5, 7) * 9
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = rotl(s[3], 45)
	return result
}

// float64 returns a uniform deviate in [0, 1) with 53 random bits.
func (r *rng) float64() float64 {
	return float64(r.uint64()>>11) * (1.0 / (1 << 53))
}

// intn returns a uniform integer in [0, n) for n > 0, without modulo bias
// (Lemire's multiply-and-reject method).
func (r *rng) intn(n int) int {
	bound := uint64(n)
	for {
		x := r.uint64()
		hi, lo := mul64(x, bound)
		if lo < bound {
			threshold := -bound % bound
			if lo < threshold {
				continue
			}
		}
		return int(hi)
	}
}

// mul64 returns the 128-bit product of a and b as (hi, lo).
func mul64(a, b uint64) (hi, lo uint64) {
	const mask32 = 1<<32 - 1
	a0, a1 := a&mask32, a>>32
	b0, b1 := b&mask32, b>>32
	w0 := a0 * b0
	t := a1*b0 + w0>>32
	w1 := t&mask32 + a0*b1
	hi = a1*b1 + t>>32 + w1>>32
	lo = a * b
	return
}

// uniform returns a uniform deviate in [-limit, limit).
func (r *rng) uniform(limit float64) float64 {
	return (2*r.float64() - 1) * limit
}

// shuffle permutes p uniformly at random (Fisher-Yates).
func (r *rng) shuffle(p []int32) {
	for i := len(p) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
}
