// gen_golden.cc prints golden vectors for package stdrand from the real
// GCC/libstdc++ implementation of std::mt19937 and the <random>/<algorithm>
// pieces MLPerf LoadGen uses.
//
// Regenerate (from stdrand/testdata):
//
//	g++ -std=c++14 -O2 -o /tmp/gen gen_golden.cc && /tmp/gen > golden.txt
//
// Output format: one record per line, space-separated tokens; lines starting
// with '#' are comments. Every record starts from a freshly seeded engine
// and, where noted, ends with the engine's next raw output ("next") so the
// Go test also checks how many draws each operation consumed.
//
//	raw       SEED N v1..vN
//	discard   SEED K next            (engine.discard(K), then one draw)
//	uint      SEED A B N v1..vN next (uniform_int_distribution<size_t>(A,B))
//	int       SEED A B N v1..vN next (uniform_int_distribution<int>(A,B))
//	shuffle   SEED N full v0..v(N-1) next          (std::shuffle of 0..N-1)
//	shufhash  SEED N FNV K first_K.. last_K.. next (FNV-1a 64 over LE uint64)
//	canonical SEED N bits1..bitsN next  (generate_canonical<double,53>, hex)
//	real      SEED A B N bits1..bitsN next (uniform_real_distribution<double>)
//	exp       SEED LAMBDA N xbits:logbits:ns .. next
//	          (x = exponential_distribution<double>(LAMBDA)(g) as hex bits;
//	          logbits = glibc's log(1 - canonical) for the same draws, which
//	          x must equal -log/LAMBDA; ns =
//	          duration_cast<nanoseconds>(duration<double>(x)).count())
//	mixed     SEED tokens..     (one engine, interleaved ops, see below)
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

typedef unsigned long long u64;

static const u64 kSeeds[] = {
    0ULL,
    5489ULL,
    42ULL,
    4294967295ULL,
    (1ULL << 32) | 7ULL,
    // Seeds used by MLPerf LoadGen configurations (full 64-bit values).
    2085463073848966840ULL,
    2747215439041700203ULL,
    16159082839903944936ULL,
    720381539243781796ULL,
};

// The LoadGen seeds reduced mod 2^32 get a smaller set of records: they must
// reproduce the full seeds' streams exactly (the engine keeps 32 bits).
static const u64 kReducedSeeds[] = {
    2085463073848966840ULL & 0xffffffffULL,
    2747215439041700203ULL & 0xffffffffULL,
    16159082839903944936ULL & 0xffffffffULL,
    720381539243781796ULL & 0xffffffffULL,
};

static u64 bits(double d) {
  u64 b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

static long long to_ns(double x) {
  return (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::duration<double>(x))
      .count();
}

static u64 fnv1a(const std::vector<size_t>& v) {
  u64 h = 14695981039346656037ULL;
  for (size_t x : v) {
    u64 y = x;
    for (int i = 0; i < 8; i++) {
      h ^= (y >> (8 * i)) & 0xff;
      h *= 1099511628211ULL;
    }
  }
  return h;
}

static void raw(u64 seed, int n) {
  std::mt19937 g(seed);
  printf("raw %llu %d", seed, n);
  for (int i = 0; i < n; i++) printf(" %lu", (unsigned long)g());
  printf("\n");
}

static void discard(u64 seed, u64 k) {
  std::mt19937 g(seed);
  g.discard(k);
  printf("discard %llu %llu %lu\n", seed, k, (unsigned long)g());
}

static void uint_range(u64 seed, u64 a, u64 b, int n) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<size_t> d(a, b);
  printf("uint %llu %llu %llu %d", seed, a, b, n);
  for (int i = 0; i < n; i++) printf(" %llu", (u64)d(g));
  printf(" %lu\n", (unsigned long)g());
}

static void int_range(u64 seed, int a, int b, int n) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<> d(a, b);
  printf("int %llu %d %d %d", seed, a, b, n);
  for (int i = 0; i < n; i++) printf(" %d", d(g));
  printf(" %lu\n", (unsigned long)g());
}

static std::vector<size_t> shuffled(std::mt19937& g, size_t n) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; i++) v[i] = i;
  std::shuffle(v.begin(), v.end(), g);
  return v;
}

static void shuffle(u64 seed, size_t n) {
  std::mt19937 g(seed);
  std::vector<size_t> v = shuffled(g, n);
  if (n <= 1024) {
    printf("shuffle %llu %zu full", seed, n);
    for (size_t x : v) printf(" %zu", x);
  } else {
    const size_t k = 50;
    printf("shufhash %llu %zu %016llx %zu", seed, n, fnv1a(v), k);
    for (size_t i = 0; i < k; i++) printf(" %zu", v[i]);
    for (size_t i = n - k; i < n; i++) printf(" %zu", v[i]);
  }
  printf(" %lu\n", (unsigned long)g());
}

static void canonical(u64 seed, int n) {
  std::mt19937 g(seed);
  printf("canonical %llu %d", seed, n);
  for (int i = 0; i < n; i++)
    printf(" %016llx", bits(std::generate_canonical<double, 53>(g)));
  printf(" %lu\n", (unsigned long)g());
}

static void real(u64 seed, double a, double b, int n) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(a, b);
  printf("real %llu %.17g %.17g %d", seed, a, b, n);
  for (int i = 0; i < n; i++) printf(" %016llx", bits(d(g)));
  printf(" %lu\n", (unsigned long)g());
}

static void expo(u64 seed, double lambda, int n) {
  std::mt19937 g(seed);
  std::exponential_distribution<> d(lambda);
  printf("exp %llu %.17g %d", seed, lambda, n);
  for (int i = 0; i < n; i++) {
    std::mt19937 peek = g;
    double l = std::log(1.0 - std::generate_canonical<double, 53>(peek));
    double x = d(g);
    if (bits(x) != bits(-l / lambda)) {
      fprintf(stderr, "exponential_distribution is not -log(1-c)/lambda\n");
      std::exit(1);
    }
    printf(" %016llx:%016llx:%lld", bits(x), bits(l), to_ns(x));
  }
  printf(" %lu\n", (unsigned long)g());
}

// mixed interleaves operations on one engine, the way LoadGen does.
// Tokens: r=raw draw, u=uniform<int>(0,99), s=shuffle of 0..9 (10 values),
// c=canonical bits, e=exponential(1000) xbits:ns.
static void mixed(u64 seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<> u(0, 99);
  std::exponential_distribution<> e(1000.0);
  printf("mixed %llu", seed);
  for (int round = 0; round < 20; round++) {
    printf(" r=%lu", (unsigned long)g());
    printf(" u=%d", u(g));
    std::vector<size_t> v = shuffled(g, 10);
    printf(" s=");
    for (size_t i = 0; i < v.size(); i++) printf(i ? ",%zu" : "%zu", v[i]);
    printf(" c=%016llx", bits(std::generate_canonical<double, 53>(g)));
    double x = e(g);
    printf(" e=%016llx:%lld", bits(x), to_ns(x));
  }
  printf("\n");
}

int main() {
  printf("# Generated by gen_golden.cc with GCC %d.%d.%d (libstdc++ %d).\n",
         __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__, __GLIBCXX__);
  printf("# Do not edit; see gen_golden.cc for format and regeneration.\n");
  {
    std::mt19937 g;  // default seed 5489
    g.discard(9999);
    printf("# default-seeded mt19937: 10000th output %lu\n",
           (unsigned long)g());
  }
  const u64 uranges[][2] = {
      {0, 0},
      {0, 1},
      {0, 9},
      {0, 99},
      {0, 1023},
      {0, 65535},
      {0, 1ULL << 31},
      {0, 4294967294ULL},
      {0, 4294967295ULL},  // exactly the engine range: raw draws
      {5, 17},
      {1000000, 1000000 + 3000000000ULL},
      // Ranges wider than the engine: libstdc++ "upscaling".
      {0, 1ULL << 32},
      {0, (1ULL << 40) - 1},
      {3, (1ULL << 33) + 5},
      {0, ~0ULL},
      {1ULL << 63, ~0ULL},
  };
  const int iranges[][2] = {
      {0, 99},
      {-5, 17},
      {-1000000, -1},
      {-2147483647 - 1, 2147483647},  // full int range: raw draws + a
      {-2147483647 - 1, 0},
      {0, 2147483647},
  };
  const size_t shuffle_sizes[] = {0,    1,     2,     3,     10,    11,   64,
                                  1024, 1025,  65535, 65536, 70000, 100001};
  const double lambdas[] = {1, 100, 1000, 100000, 0.5, 12345.678};

  for (u64 seed : kSeeds) {
    printf("# seed %llu\n", seed);
    raw(seed, 1000);
    for (u64 k : {0ULL, 1ULL, 623ULL, 624ULL, 625ULL, 9999ULL, 100000ULL})
      discard(seed, k);
    for (auto& r : uranges) uint_range(seed, r[0], r[1], 100);
    for (auto& r : iranges) int_range(seed, r[0], r[1], 100);
    for (size_t n : shuffle_sizes) shuffle(seed, n);
    canonical(seed, 200);
    real(seed, 0.0, 1.0, 50);
    real(seed, -3.5, 7.25, 50);
    for (double l : lambdas) expo(seed, l, 100);
    mixed(seed);
  }
  for (u64 seed : kReducedSeeds) {
    printf("# seed %llu (LoadGen seed reduced mod 2^32)\n", seed);
    raw(seed, 1000);
    discard(seed, 9999);
    uint_range(seed, 0, 99, 100);
    shuffle(seed, 1024);
    expo(seed, 1000, 100);
    mixed(seed);
  }
  return 0;
}
