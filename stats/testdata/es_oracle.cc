// es_oracle.cc is an independent C++14 re-statement of the early-stopping
// arithmetic of MLPerf LoadGen (loadgen/early_stopping.cc and the
// PerformanceSummary::EarlyStopping part of loadgen/results.cc), written from
// a reading of those files and of the LoadGen behaviour reference, §9
// (indexed in docs/requirements.md).
// It exists only to produce golden data for package aimeter/stats; it is
// compiled with the same kind of toolchain LoadGen is (GCC, libstdc++, glibc
// libm, no FMA contraction), so the Go port can be compared bit-for-bit.
// As a check, a scratch build (not kept) in which the Finder below delegated
// to LoadGen's own MinPassingQueriesFinder printed byte-identical output
// (GCC 12.2, glibc 2.36, -O2 and -O3).
//
// Regenerate (from stats/testdata):
//
//	g++ -std=c++14 -O2 -ffp-contract=off -o /tmp/es_oracle es_oracle.cc &&
//	    /tmp/es_oracle > earlystop_golden.txt
//
// Output: one record per line, space-separated; '#' lines are comments.
//
//	seq    P D C T0 T1 h(T0)..h(T1)  one finder, queried t = T0, T0+1, .., T1
//	seqsum P D C T0 T1 FNV LAST       as seq, but only an FNV-1a 64 hash of
//	                                  the h values (LE int64) and the last one
//	                                  (for long runs), plus sampled points:
//	seqpt  P T H                      h(T) in the "seqsum P 0 .99 1 ..." run
//	cold   P T H                      a fresh finder per query (Server)
//	desc   P T1 T0 h(T1)..h(T0)       one finder, t = T1, T1-1, .., T0
//	rand   P SEED K R t1:h1 .. tK:hK  one finder, K queries t in [0,R) drawn
//	                                  by the LCG below
//	ss     P N SAT X T                SingleStream/MultiStream target step on
//	                                  N queries (fresh finder): X = h(1)+1,
//	                                  T = t (0 when not satisfied)
//	text   KIND P N ARG | line | line ...   full result text, lines split on
//	                                  '\n', with latencies[i] = 1000000+37*i
//	                                  (KIND ss, ms: ARG unused; server: ARG =
//	                                  number of over-latency queries)
//
// LCG (shared with the Go test): x = x*6364136223846793005 +
// 1442695040888963407 (mod 2^64); draw = (x >> 33) % R.
#include <cmath>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

// ln B(a, b) from three log-gamma values, integer arguments widened to double.
double LogBeta(int64_t a, int64_t b) {
  double ga = std::lgamma(static_cast<double>(a));
  double gb = std::lgamma(static_cast<double>(b));
  double gab = std::lgamma(static_cast<double>(a + b));
  return ga + gb - gab;
}

// 2F1(1, bb; cc; z) by its power series: the running term is multiplied by
// (bb+k)*z/(cc+k), then added; the loop stops once the term just added is no
// larger than 2^-33 in magnitude (the check precedes each multiplication).
double Hyp2F1One(int64_t bb, int64_t cc, double z) {
  const double eps = 1.0 / static_cast<double>(int64_t{1} << 33);
  double sum = 1.0;
  double term = 1.0;
  int64_t k = 0;
  while (std::fabs(term) > eps) {
    double num = static_cast<double>(bb + k) * z;
    double factor = num / static_cast<double>(cc + k);
    term = term * factor;
    sum = sum + term;
    ++k;
  }
  return sum;
}

// I_x(a, b) via DLMF 15.8.1 with a = 1 in the hypergeometric function.
double RegBeta(double x, int64_t a, int64_t b) {
  double e1 = static_cast<double>(a) * std::log(x);
  double e2 = static_cast<double>(b - 1) * std::log(1.0 - x);
  double expo = (e1 + e2) - LogBeta(a, b);
  double front = std::exp(expo) / static_cast<double>(a);
  return front * Hyp2F1One(1 - b, 1 + a, x / (x - 1.0));
}

double Odds(int64_t h, int64_t t, double p, double d) {
  return RegBeta(p - d, h, t + 1);
}

// First h in [lo, hi) with Odds < 1-c (lower-bound style bisection); hi if
// none does (hi itself is never evaluated).
int64_t Bisect(int64_t lo, int64_t hi, int64_t t, double p, double d,
               double c) {
  int64_t n = hi - lo;
  while (n > 0) {
    int64_t half = n / 2;
    int64_t mid = lo + half;
    if (Odds(mid, t, p, d) < 1.0 - c) {
      n = half;
    } else {
      lo = mid + 1;
      n = n - (half + 1);
    }
  }
  return lo;
}

class Finder {
 public:
  int64_t MinPassing(int64_t t, double p, double d, double c) {
    std::map<int64_t, int64_t>& known = memo_[std::make_tuple(p, d, c)];
    auto pos = known.lower_bound(t);
    if (pos != known.end() && pos->first == t) return pos->second;
    // Bracket from the (up to) two largest memoised t below the query.
    int64_t ta = -1, ha = 0;  // older point
    int64_t tb = 0;           // newer point
    int64_t hb = static_cast<int64_t>(std::ceil(std::log(1.0 - c) /
                                                std::log(p - d)));
    if (pos != known.begin()) {
      --pos;
      tb = pos->first;
      hb = pos->second;
      if (pos != known.begin()) {
        --pos;
        ta = pos->first;
        ha = pos->second;
      }
    }
    double shallow = (p - d) / ((1.0 - p) + d);
    double steep = static_cast<double>((hb - ha) * (tb - ta));  // a product
    double dt = static_cast<double>(t - tb);
    double lo_d = dt * shallow;
    lo_d = lo_d + static_cast<double>(hb);
    double hi_d = dt * steep;
    hi_d = hi_d + static_cast<double>(hb);
    hi_d = hi_d + 1.0;
    int64_t h = Bisect(static_cast<int64_t>(lo_d), static_cast<int64_t>(hi_d),
                       t, p, d, c);
    known[t] = h;
    return h;
  }

 private:
  std::map<std::tuple<double, double, double>, std::map<int64_t, int64_t>>
      memo_;
};

const double kConf = 0.99;
const double kTol = 0.0;

std::string Pct1(double p) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << p * 100;
  return os.str();
}

// SingleStream / MultiStream target step. Returns satisfied; sets x and t.
bool SsStep(Finder& f, int64_t n, double p, int64_t* x, int64_t* t) {
  *x = f.MinPassing(1, p, kTol, kConf) + 1;
  *t = 0;
  if (n < *x) return false;
  *t = 1;
  for (int64_t i = 2; i <= n; ++i) {
    if (n < f.MinPassing(i, p, kTol, kConf) + i) {
      *t = i - 1;
      break;
    }
  }
  return true;
}

std::string SsText(const std::vector<int64_t>& lat, double p, bool single) {
  Finder f;
  int64_t n = static_cast<int64_t>(lat.size());
  int64_t x, t;
  std::string s;
  if (!SsStep(f, n, p, &x, &t)) {
    s = " * Only processed " + std::to_string(n) +
        " queries.\n * Need to process at least " + std::to_string(x) +
        " queries for early stopping.";
    return s;
  }
  s = " * Processed at least " + std::to_string(x) + " queries (" +
      std::to_string(n) + ").\n * Would discard " + std::to_string(t - 1) +
      " highest latency queries.\n * Early stopping " + Pct1(p) +
      "th percentile estimate: " + std::to_string(lat[n - t]);
  if (!single) return s;
  int64_t x99, t99;
  if (!SsStep(f, n, 0.99, &x99, &t99)) {
    s += "\n * Not enough queries processed for " + Pct1(0.99) +
         "th percentile\n early stopping estimate (would need to process "
         "at\n least " +
         std::to_string(x99) + " total queries).";
  } else {
    s += "\n * Early stopping " + Pct1(0.99) + "th percentile estimate: " +
         std::to_string(lat[n - t99]);
  }
  return s;
}

std::string ServerText(int64_t n, int64_t over, double p) {
  Finder f;
  int64_t h = f.MinPassing(over, p, kTol, kConf);
  if (n >= h + over) return " * Run successful.";
  return " * Run unsuccessful.\n * Processed " + std::to_string(n) +
         " queries.\n * Would need to run at least " +
         std::to_string(h + over - n) +
         " more queries,\n with the run being successful if every "
         "additional\n query were under latency.";
}

void PrintText(const char* kind, double p, int64_t n, int64_t arg,
               const std::string& s) {
  std::printf("text %s %.17g %" PRId64 " %" PRId64 " |", kind, p, n, arg);
  std::string line;
  for (char ch : s) {
    if (ch == '\n') {
      std::printf(" %s |", line.c_str());
      line.clear();
    } else {
      line += ch;
    }
  }
  std::printf(" %s\n", line.c_str());
}

uint64_t Fnv(uint64_t h, int64_t v) {
  uint64_t u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) {
    h ^= (u >> (8 * i)) & 0xff;
    h *= 1099511628211ULL;
  }
  return h;
}

std::vector<int64_t> Latencies(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 1000000 + 37 * i;
  return v;
}

}  // namespace

int main() {
  std::printf("# Generated by es_oracle.cc with GCC %d.%d.%d; see that file for "
              "the format.\n",
              __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
  const double ps[] = {0.5, 0.9, 0.95, 0.97, 0.99, 0.999};

  // Ascending runs from t = 0 and from t = 1 (the SS/MS order).
  for (double p : ps) {
    for (int64_t t0 = 0; t0 <= 1; ++t0) {
      Finder f;
      int64_t t1 = 1500;
      std::printf("seq %.17g %.17g %.17g %" PRId64 " %" PRId64, p, kTol, kConf,
                  t0, t1);
      for (int64_t t = t0; t <= t1; ++t)
        std::printf(" %" PRId64, f.MinPassing(t, p, kTol, kConf));
      std::printf("\n");
    }
  }
  // Other confidence / tolerance values.
  {
    const double cds[][3] = {{0.9, 0.01, 0.99}, {0.99, 0.0, 0.95},
                             {0.95, 0.02, 0.999}, {0.999, 0.0005, 0.9}};
    for (const auto& q : cds) {
      Finder f;
      std::printf("seq %.17g %.17g %.17g 0 300", q[0], q[1], q[2]);
      for (int64_t t = 0; t <= 300; ++t)
        std::printf(" %" PRId64, f.MinPassing(t, q[0], q[1], q[2]));
      std::printf("\n");
    }
  }
  // Long ascending runs from t = 1, summarised.
  for (double p : ps) {
    Finder f;
    int64_t t1 = (p == 0.999) ? 3000 : (p >= 0.99 ? 20000 : 100000);
    uint64_t hash = 14695981039346656037ULL;  // FNV-1a 64 offset basis
    int64_t last = 0;
    std::vector<std::pair<int64_t, int64_t>> pts;
    for (int64_t t = 1; t <= t1; ++t) {
      last = f.MinPassing(t, p, kTol, kConf);
      hash = Fnv(hash, last);
      if (t % 997 == 0 || t == 2583 || t == 2584 || t == 80 || t == 81)
        pts.emplace_back(t, last);
    }
    std::printf("seqsum %.17g %.17g %.17g 1 %" PRId64 " %016" PRIx64
                " %" PRId64 "\n",
                p, kTol, kConf, t1, hash, last);
    for (const auto& pt : pts)
      std::printf("seqpt %.17g %" PRId64 " %" PRId64 "\n", p, pt.first,
                  pt.second);
  }
  // Cold queries (a fresh finder each), as in the Server scenario.
  for (double p : ps) {
    std::vector<int64_t> ts;
    for (int64_t t = 0; t <= 200; ++t) ts.push_back(t);
    for (int64_t t : {250, 400, 500, 1000, 2583, 5000, 12345, 40000})
      ts.push_back(t);
    for (int64_t t : ts) {
      Finder f;
      std::printf("cold %.17g %" PRId64 " %" PRId64 "\n", p, t,
                  f.MinPassing(t, p, kTol, kConf));
    }
  }
  // Descending runs.
  for (double p : ps) {
    Finder f;
    std::printf("desc %.17g 300 0", p);
    for (int64_t t = 300; t >= 0; --t)
      std::printf(" %" PRId64, f.MinPassing(t, p, kTol, kConf));
    std::printf("\n");
  }
  // Pseudo-random orders.
  for (double p : ps) {
    for (uint64_t seed : {1ULL, 42ULL, 20240601ULL}) {
      Finder f;
      uint64_t x = seed;
      const int64_t k = 400, r = 3000;
      std::printf("rand %.17g %" PRIu64 " %" PRId64 " %" PRId64, p, seed, k, r);
      for (int64_t i = 0; i < k; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int64_t t = static_cast<int64_t>((x >> 33) % static_cast<uint64_t>(r));
        std::printf(" %" PRId64 ":%" PRId64, t, f.MinPassing(t, p, kTol, kConf));
      }
      std::printf("\n");
    }
  }
  // SingleStream / MultiStream target step for many N, fresh finder each.
  for (double p : {0.9, 0.99, 0.999}) {
    std::vector<int64_t> ns;
    for (int64_t n = 0; n <= 2000; ++n) ns.push_back(n);
    for (int64_t n = 2001; n <= 1000000; n = n + n / 7 + 13) ns.push_back(n);
    for (int64_t n : {1024, 4096, 6635, 6636, 10000, 24576, 100000, 270336,
                      270337, 600000, 1000000})
      ns.push_back(n);
    for (int64_t n : ns) {
      if (p == 0.9 && n > 300000 && n != 1000000) continue;  // keep it quick
      Finder f;
      int64_t x, t;
      bool sat = SsStep(f, n, p, &x, &t);
      std::printf("ss %.17g %" PRId64 " %d %" PRId64 " %" PRId64 "\n", p, n,
                  sat ? 1 : 0, x, t);
    }
  }
  // Full texts.
  for (double p : {0.9, 0.95, 0.99, 0.999}) {
    for (int64_t n : {0, 1, 63, 64, 65, 100, 661, 662, 663, 1000, 1024, 6635,
                      6636, 7000}) {
      std::vector<int64_t> lat = Latencies(n);
      PrintText("ss", p, n, 0, SsText(lat, p, true));
      PrintText("ms", p, n, 0, SsText(lat, p, false));
    }
  }
  for (double p : {0.9, 0.99, 0.999}) {
    for (int64_t n : {0, 1, 44, 45, 459, 460, 1000, 10000, 100000}) {
      for (int64_t over : {0, 1, 2, 10, 100, 400, 1000}) {
        PrintText("server", p, n, over, ServerText(n, over, p));
      }
    }
  }
  return 0;
}
