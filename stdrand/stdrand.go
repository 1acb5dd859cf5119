// Package stdrand reproduces, bit for bit, the random number generation that
// MLPerf LoadGen performs through the C++ standard library, as implemented by
// GCC 12's libstdc++ on Linux: the std::mt19937 engine, and the
// uniform_int_distribution, std::shuffle, generate_canonical,
// uniform_real_distribution and exponential_distribution algorithms driven
// by it.
//
// Official LoadGen builds are compiled with GCC on Linux, and the query
// traces they issue (which samples are loaded, in which order queries are
// sent, when Server-scenario queries arrive) are fully determined by the
// configured seeds and these algorithms. A Go port must therefore copy the
// libstdc++ algorithms, not just "a Mersenne Twister": the C++ standard fixes
// only the engine, while every distribution and std::shuffle are
// implementation-defined, and libc++ (Clang/macOS) and the MSVC STL produce
// different values from the same engine output. math/rand and math/rand/v2
// cannot be used for the same reason.
//
// The golden vectors in testdata/golden.txt were printed by
// testdata/gen_golden.cc built with g++ 12 and are checked exactly by the
// tests, with one exception: Go's math.Log is not glibc's log and differs
// from it by one ulp for about 6% of arguments, which moves the raw
// exponential double by up to two ulps. The nanosecond truncations LoadGen
// actually uses matched in every golden case; a mismatch needs that tiny
// difference to straddle a nanosecond boundary, with a probability of about
// 3e-8/lambda per draw (lambda in queries per second).
//
// An MT19937 is not safe for concurrent use. Its methods and Shuffle do not
// allocate.
package stdrand

import "math"

// MT19937 parameters (std::mt19937).
const (
	stateSize  = 624
	shiftSize  = 397
	matrixA    = 0x9908b0df
	upperMask  = 0x80000000
	lowerMask  = 0x7fffffff
	initMult   = 1812433253
	temperU    = 11
	temperS    = 7
	temperB    = 0x9d2c5680
	temperT    = 15
	temperC    = 0xefc60000
	temperL    = 18
	engineMax  = math.MaxUint32 // max() - min() of the engine
	engineSpan = 1 << 32        // engineMax + 1
)

// DefaultSeed is std::mersenne_twister_engine::default_seed, the seed of a
// default-constructed std::mt19937.
const DefaultSeed = 5489

// MT19937 is the 32-bit Mersenne Twister engine std::mt19937. The zero value
// is not ready for use; create engines with New or call Seed first.
type MT19937 struct {
	x [stateSize]uint32
	p int
}

// New returns an engine seeded like std::mt19937(seed). Only the low 32 bits
// of seed are used, as libstdc++ reduces the seed mod 2^32; LoadGen passes
// 64-bit seeds through this path.
func New(seed uint64) *MT19937 {
	g := new(MT19937)
	g.Seed(seed)
	return g
}

// Seed re-seeds the engine like std::mt19937::seed(seed), keeping only the
// low 32 bits of seed.
func (g *MT19937) Seed(seed uint64) {
	g.x[0] = uint32(seed)
	for i := 1; i < stateSize; i++ {
		prev := g.x[i-1]
		g.x[i] = initMult*(prev^(prev>>30)) + uint32(i)
	}
	g.p = stateSize
}

// genRand regenerates the whole state block (libstdc++ _M_gen_rand).
func (g *MT19937) genRand() {
	x := &g.x
	for k := 0; k < stateSize-shiftSize; k++ {
		y := (x[k] & upperMask) | (x[k+1] & lowerMask)
		x[k] = x[k+shiftSize] ^ (y >> 1) ^ (-(y & 1) & matrixA)
	}
	for k := stateSize - shiftSize; k < stateSize-1; k++ {
		y := (x[k] & upperMask) | (x[k+1] & lowerMask)
		x[k] = x[k+shiftSize-stateSize] ^ (y >> 1) ^ (-(y & 1) & matrixA)
	}
	y := (x[stateSize-1] & upperMask) | (x[0] & lowerMask)
	x[stateSize-1] = x[shiftSize-1] ^ (y >> 1) ^ (-(y & 1) & matrixA)
	g.p = 0
}

// Uint32 returns the engine's next output, like std::mt19937::operator().
func (g *MT19937) Uint32() uint32 {
	if g.p >= stateSize {
		g.genRand()
	}
	z := g.x[g.p]
	g.p++
	z ^= z >> temperU // tempering_d is 0xffffffff
	z ^= (z << temperS) & temperB
	z ^= (z << temperT) & temperC
	z ^= z >> temperL
	return z
}

// Discard advances the engine by n outputs, like std::mt19937::discard(n).
func (g *MT19937) Discard(n uint64) {
	for n > 0 {
		if g.p >= stateSize {
			g.genRand()
		}
		step := uint64(stateSize - g.p)
		if step > n {
			step = n
		}
		g.p += int(step)
		n -= step
	}
}

// uniform returns a value in [0, urange] exactly as libstdc++'s
// uniform_int_distribution<IntType>::operator() computes __ret for a 32-bit
// engine and a 64-bit __uctype (unsigned long on LP64 Linux).
func (g *MT19937) uniform(urange uint64) uint64 {
	switch {
	case urange < engineMax:
		// Downscaling: Lemire's nearly divisionless method (_S_nd) with
		// 64-bit products.
		r := uint32(urange + 1)
		product := uint64(g.Uint32()) * uint64(r)
		low := uint32(product)
		if low < r {
			threshold := -r % r
			for low < threshold {
				product = uint64(g.Uint32()) * uint64(r)
				low = uint32(product)
			}
		}
		return product >> 32
	case urange == engineMax:
		return uint64(g.Uint32())
	default:
		// Upscaling: high part from a recursive draw, then a raw draw for
		// the low 32 bits; retry on overshoot or wraparound.
		for {
			tmp := engineSpan * g.uniform(urange/engineSpan)
			ret := tmp + uint64(g.Uint32())
			if ret <= urange && ret >= tmp {
				return ret
			}
		}
	}
}

// UniformInt returns a value in [a, b] (requires a <= b) drawn exactly like
// std::uniform_int_distribution<size_t>(a, b)(g) in libstdc++. Any range is
// supported: ranges wider than 2^32 values use libstdc++'s upscaling loop.
//
// It also reproduces uniform_int_distribution<int> (and other signed or
// narrower types): pass the bounds sign-extended, uint64(int64(a)), and
// convert the result back with int64 (or the narrower type), because
// libstdc++ computes in 64-bit unsigned arithmetic for every such type.
func (g *MT19937) UniformInt(a, b uint64) uint64 {
	return g.uniform(b-a) + a
}

// Canonical returns std::generate_canonical<double, 53>(g): two engine
// draws combined as (g1 + g2*2^32) / 2^64, clamped to the largest double
// below 1. The result is in [0, 1).
func (g *MT19937) Canonical() float64 {
	lo := float64(g.Uint32())
	hi := float64(g.Uint32())
	// float64() forbids fusing the multiply-add; the product is exact anyway.
	sum := lo + float64(hi*(1<<32))
	ret := sum / (1 << 64)
	if ret >= 1 {
		ret = math.Nextafter(1, 0)
	}
	return ret
}

// UniformReal returns std::uniform_real_distribution<double>(a, b)(g), that
// is Canonical()*(b-a) + a evaluated in that order without fused
// multiply-add.
func (g *MT19937) UniformReal(a, b float64) float64 {
	return float64(g.Canonical()*(b-a)) + a
}

// Exponential returns std::exponential_distribution<double>(lambda)(g), that
// is -log(1 - Canonical()) / lambda, evaluated in that order. Because Go's
// math.Log may differ from glibc's log by one ulp, the result may differ from
// libstdc++'s by up to two ulps; see the package documentation.
func (g *MT19937) Exponential(lambda float64) float64 {
	return -math.Log(1-g.Canonical()) / lambda
}

// ExponentialNanos returns an Exponential(lambda) draw in seconds converted to
// nanoseconds the way LoadGen schedules Server-scenario queries:
// duration_cast<nanoseconds>(duration<double>(x)).count(), i.e. x*1e9
// truncated toward zero. Results beyond the int64 range (lambda so small
// that x exceeds about 292 years) are undefined in C++ and unspecified here.
func (g *MT19937) ExponentialNanos(lambda float64) int64 {
	return int64(g.Exponential(lambda) * 1e9)
}

// Shuffle permutes v exactly like libstdc++'s std::shuffle(v.begin(),
// v.end(), g). For len(v)^2 <= 2^32-1 (len(v) <= 65535) it draws swap
// positions two at a time from one uniform_int_distribution call
// (__gen_two_uniform_ints); larger slices use the classic Fisher-Yates loop
// with one draw per element.
func Shuffle[T any](g *MT19937, v []T) {
	n := uint64(len(v))
	if n == 0 {
		return
	}
	if engineMax/n >= n {
		i := uint64(1)
		if n%2 == 0 {
			j := g.uniform(1)
			v[i], v[j] = v[j], v[i]
			i++
		}
		for i != n {
			b0 := i + 1 // swap range for position i
			b1 := b0 + 1
			x := g.uniform(b0*b1 - 1)
			j, k := x/b1, x%b1
			v[i], v[j] = v[j], v[i]
			i++
			v[i], v[k] = v[k], v[i]
			i++
		}
		return
	}
	for i := uint64(1); i != n; i++ {
		j := g.uniform(i)
		v[i], v[j] = v[j], v[i]
	}
}

// ShuffleFunc performs the same permutation as Shuffle on a sequence of n
// elements (n >= 0) that it cannot see, calling swap(i, j) for each swap
// std::shuffle would make, including swaps of an element with itself. It is
// for shuffling parallel arrays or containers other than slices.
func (g *MT19937) ShuffleFunc(n int, swap func(i, j int)) {
	if n < 0 {
		panic("stdrand: ShuffleFunc with negative n")
	}
	un := uint64(n)
	if un == 0 {
		return
	}
	if engineMax/un >= un {
		i := uint64(1)
		if un%2 == 0 {
			swap(int(i), int(g.uniform(1)))
			i++
		}
		for i != un {
			b0 := i + 1
			b1 := b0 + 1
			x := g.uniform(b0*b1 - 1)
			swap(int(i), int(x/b1))
			i++
			swap(int(i), int(x%b1))
			i++
		}
		return
	}
	for i := uint64(1); i != un; i++ {
		swap(int(i), int(g.uniform(i)))
	}
}
