// gen_trace: an independent C++14 oracle for LoadGen's pre-generated traffic.
//
// It re-implements, from the description in loadgen-reference.md §2.2, §3, §4
// and §5 (not from LoadGen's source), the effective-settings derivation, the
// loadable-set generation and the query generation of MLPerf LoadGen, using
// the REAL libstdc++ std::mt19937, std::uniform_int_distribution<>,
// std::shuffle, std::exponential_distribution<> and std::chrono::duration_cast,
// so that its output is what a GCC build of LoadGen generates.
//
// Input (stdin or argv[1]): one test case per line, whitespace-separated
// key=value pairs; '#' starts a comment. Unset keys take LoadGen's defaults.
// Output (stdout): per case
//   case <name>
//   eff spq=<> min_query_count=<> target_duration_ms=<> psc=<> acc=<> period_ns=<>
//   set <k> end=<distribution end> <idx,idx,...>         (the loaded order)
//   q <scheduled ns> <idx,idx,...>                        (one line per query)
//   gen <generated_query_count> <generated_samples_per_query> <generated_query_duration>
//   end
//
// Build and regenerate (from loadgen/testdata/trace):
//   g++ -std=c++14 -O2 -o /tmp/gen_trace gen_trace.cc && /tmp/gen_trace cases.txt > golden.txt

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

enum Scen { kSingleStream, kMultiStream, kServer, kOffline };

struct Requested {
  std::string name;
  Scen scenario = kSingleStream;
  bool accuracy = false;
  uint64_t qsl_total = 0;
  uint64_t qsl_psc = 0;
  uint64_t psc_override = 0;
  uint64_t acc_override = 0;
  uint64_t min_duration_ms = 10000;
  uint64_t min_query_count = 100;
  uint64_t ss_expected_latency_ns = 1000000;
  uint64_t ms_expected_latency_ns = 8000000;
  uint64_t ms_spq = 8;
  double server_qps = 1;
  double offline_qps = 1;
  uint64_t qsl_seed = 0, sample_seed = 0, schedule_seed = 0;
  bool unique = false, same = false, equal_issue = false;
  uint64_t same_index = 0;
};

// The derived settings the generators read (§2.2).
struct Derived {
  Scen scenario;
  double target_qps = 1;
  uint64_t spq = 1;
  uint64_t min_query_count;
  std::chrono::milliseconds target_duration;
  uint64_t psc;
  uint64_t acc;
  uint64_t qsl_seed, sample_seed, schedule_seed;
  bool unique, same, equal_issue;
  uint64_t same_index;
};

uint64_t ParseU64(const std::string& v) {
  size_t pos = 0;
  unsigned long long x = std::stoull(v, &pos, 0);
  if (pos != v.size()) throw std::runtime_error("bad integer " + v);
  return x;
}

bool ParseBool(const std::string& v) {
  if (v == "1" || v == "true") return true;
  if (v == "0" || v == "false") return false;
  throw std::runtime_error("bad bool " + v);
}

Requested ParseCase(const std::string& line) {
  Requested r;
  std::istringstream in(line);
  std::string tok;
  while (in >> tok) {
    size_t eq = tok.find('=');
    if (eq == std::string::npos) throw std::runtime_error("no '=' in " + tok);
    std::string k = tok.substr(0, eq), v = tok.substr(eq + 1);
    if (k == "name") r.name = v;
    else if (k == "scenario") {
      if (v == "SingleStream") r.scenario = kSingleStream;
      else if (v == "MultiStream") r.scenario = kMultiStream;
      else if (v == "Server") r.scenario = kServer;
      else if (v == "Offline") r.scenario = kOffline;
      else throw std::runtime_error("bad scenario " + v);
    } else if (k == "mode") {
      if (v == "accuracy") r.accuracy = true;
      else if (v == "performance") r.accuracy = false;
      else throw std::runtime_error("bad mode " + v);
    } else if (k == "qsl_total") r.qsl_total = ParseU64(v);
    else if (k == "qsl_psc") r.qsl_psc = ParseU64(v);
    else if (k == "psc_override") r.psc_override = ParseU64(v);
    else if (k == "acc_override") r.acc_override = ParseU64(v);
    else if (k == "min_duration_ms") r.min_duration_ms = ParseU64(v);
    else if (k == "min_query_count") r.min_query_count = ParseU64(v);
    else if (k == "expected_latency_ns") {
      r.ss_expected_latency_ns = ParseU64(v);
      r.ms_expected_latency_ns = ParseU64(v);
    } else if (k == "spq") r.ms_spq = ParseU64(v);
    else if (k == "server_qps") r.server_qps = std::stod(v);
    else if (k == "offline_qps") r.offline_qps = std::stod(v);
    else if (k == "qsl_seed") r.qsl_seed = ParseU64(v);
    else if (k == "sample_seed") r.sample_seed = ParseU64(v);
    else if (k == "schedule_seed") r.schedule_seed = ParseU64(v);
    else if (k == "unique") r.unique = ParseBool(v);
    else if (k == "same") r.same = ParseBool(v);
    else if (k == "same_index") r.same_index = ParseU64(v);
    else if (k == "equal_issue") r.equal_issue = ParseBool(v);
    else throw std::runtime_error("unknown key " + k);
  }
  if (r.name.empty() || r.qsl_total == 0 || r.qsl_psc == 0)
    throw std::runtime_error("case needs name, qsl_total and qsl_psc: " + line);
  return r;
}

double Seconds(std::chrono::milliseconds d) {
  return std::chrono::duration_cast<std::chrono::duration<double>>(d).count();
}

Derived Derive(const Requested& r) {
  Derived d;
  d.scenario = r.scenario;
  d.min_query_count = r.min_query_count;
  d.target_duration = std::chrono::milliseconds(r.min_duration_ms);
  d.qsl_seed = r.qsl_seed;
  d.sample_seed = r.sample_seed;
  d.schedule_seed = r.schedule_seed;
  d.unique = r.unique;
  d.same = r.same;
  d.same_index = r.same_index;
  d.equal_issue = r.equal_issue;
  switch (r.scenario) {
    case kSingleStream:
      d.target_qps = 1e9 / static_cast<double>(r.ss_expected_latency_ns);
      break;
    case kMultiStream:
      d.target_qps = 1e9 / static_cast<double>(r.ms_expected_latency_ns);
      d.spq = r.ms_spq;
      break;
    case kServer:
      d.target_qps = r.server_qps;
      break;
    case kOffline:
      d.target_qps = r.offline_qps;
      break;
  }
  d.psc = r.psc_override != 0 ? r.psc_override : r.qsl_psc;
  d.acc = r.acc_override != 0 ? r.acc_override : r.qsl_total;
  if (r.scenario == kOffline) {
    const double slack = 1.1;
    uint64_t wanted = slack * Seconds(d.target_duration) * d.target_qps;
    d.spq = r.unique ? d.psc : std::max<uint64_t>(d.min_query_count, wanted);
    d.min_query_count = 1;
    d.target_duration = std::chrono::milliseconds(0);
  }
  if (r.scenario == kSingleStream && r.equal_issue) {
    const std::chrono::milliseconds min_duration(r.min_duration_ms);
    uint64_t twice = 2.0 * Seconds(min_duration) * d.target_qps;
    d.min_query_count = std::max<uint64_t>(d.min_query_count, twice);
    d.min_query_count += r.qsl_psc - d.min_query_count % r.qsl_psc;
  }
  return d;
}

struct Set {
  std::vector<size_t> idx;
  size_t dist_end;
};

// §4.
std::vector<Set> LoadableSets(const Derived& d, bool accuracy, uint64_t total) {
  const uint64_t n = std::min<uint64_t>(accuracy ? d.acc : d.psc, total);
  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; i++) all[i] = i;
  std::mt19937 qsl_rng(d.qsl_seed);
  std::shuffle(all.begin(), all.end(), qsl_rng);
  std::vector<Set> sets;
  const size_t pad = d.scenario == kMultiStream ? d.spq - 1 : 0;
  for (size_t b = 0; b < all.size(); b += d.psc) {
    size_t e = std::min<size_t>(b + d.psc, all.size());
    Set s{std::vector<size_t>(all.begin() + b, all.begin() + e), e - b};
    for (size_t i = 0; i < pad; i++) {
      size_t v = s.idx[i];  // reads the growing set: short sets wrap
      s.idx.push_back(v);
    }
    sets.push_back(std::move(s));
  }
  if (!accuracy && sets.size() > 1) sets.resize(1);
  return sets;
}

std::vector<size_t> StridedShuffled(size_t end, size_t stride, std::mt19937& rng) {
  std::vector<size_t> v;
  for (size_t i = 0; i < end; i += stride) v.push_back(i);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

void PrintList(std::ostream& out, const std::vector<size_t>& v) {
  for (size_t i = 0; i < v.size(); i++) {
    if (i) out << ',';
    out << v[i];
  }
}

// §5. Prints the queries of one IssueQueries pass.
void Queries(std::ostream& out, const Derived& d, bool accuracy, const Set& set) {
  using std::chrono::nanoseconds;
  const std::vector<size_t>& L = set.idx;
  const size_t E = set.dist_end;
  const size_t nL = L.size();

  std::chrono::microseconds gen_duration =
      (d.scenario == kServer ? 1 : 2) * std::chrono::duration_cast<std::chrono::microseconds>(d.target_duration);
  size_t min_queries = d.min_query_count;
  size_t spq = d.spq;
  if (accuracy && d.scenario == kOffline) spq = E;
  if (accuracy || d.unique) {
    gen_duration = std::chrono::microseconds(0);
    min_queries = nL / spq;
  }

  std::mt19937 sample_rng(d.sample_seed);
  std::mt19937 schedule_rng(d.schedule_seed);
  const size_t stride = d.scenario == kMultiStream ? spq : 1;

  // (a) main distribution
  std::vector<size_t> main_list;
  size_t main_pos = 0;
  if (accuracy) main_list = StridedShuffled(E, stride, sample_rng);
  std::uniform_int_distribution<> uniform(0, static_cast<int>(E) - 1);
  auto next_main = [&]() -> size_t {
    if (accuracy) return main_list.at(main_pos++);
    return static_cast<size_t>(uniform(sample_rng));
  };
  // (b) unique distribution
  std::vector<size_t> unique_list = StridedShuffled(E, stride, sample_rng);
  size_t unique_pos = 0;
  // (c) equal-issue list
  std::vector<size_t> equal_list;
  {
    std::vector<size_t> perm(nL);
    for (size_t i = 0; i < nL; i++) perm[i] = i;
    for (size_t j = 0; j < min_queries; j += nL) {
      std::shuffle(perm.begin(), perm.end(), sample_rng);
      equal_list.insert(equal_list.end(), perm.begin(), perm.end());
    }
  }
  size_t equal_pos = 0;

  if (!accuracy && d.equal_issue) {
    if (d.scenario == kOffline) {
      if (spq % nL != 0) spq += nL - spq % nL;
    } else if (min_queries % nL != 0) {
      min_queries += nL - min_queries % nL;
    }
  }

  // Schedules.
  const nanoseconds period = std::chrono::duration_cast<nanoseconds>(
      std::chrono::duration<double>(1.0 / d.target_qps));
  std::exponential_distribution<> expo(d.target_qps);
  auto next_gap = [&]() -> nanoseconds {
    if (d.scenario == kServer)
      return std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(expo(schedule_rng)));
    return period;
  };

  nanoseconds t(0), prev(0);
  size_t count = 0;
  std::vector<size_t> q(spq);
  auto emit = [&](nanoseconds at, const std::vector<size_t>& samples) {
    out << "q " << at.count() << ' ';
    PrintList(out, samples);
    out << '\n';
  };
  while (prev < gen_duration || count < min_queries) {
    if (d.scenario == kMultiStream) {
      size_t start = d.unique ? unique_list.at(unique_pos++) : d.same ? d.same_index : next_main();
      for (size_t k = 0; k < spq; k++) q[k] = L.at(start + k);
    } else if (d.scenario == kOffline) {
      if (d.same) {
        for (size_t k = 0; k < spq; k++) q[k] = L.at(d.same_index);
      } else {
        const size_t full = spq / nL, rem = spq % nL;
        for (size_t r = 0; r < full; r++) {
          std::copy(L.begin(), L.end(), q.begin() + r * nL);
          if (d.equal_issue) std::shuffle(q.begin() + r * nL, q.begin() + (r + 1) * nL, sample_rng);
        }
        std::copy(L.begin(), L.begin() + rem, q.begin() + full * nL);
      }
    } else {
      for (size_t k = 0; k < spq; k++) {
        size_t i;
        if (d.unique) i = unique_list.at(unique_pos++);
        else if (d.same) i = d.same_index;
        else if (d.equal_issue) {
          i = equal_list.at(equal_pos % equal_list.size());
          equal_pos++;
        } else i = next_main();
        q[k] = L.at(i);
      }
    }
    emit(t, q);
    count++;
    prev = t;
    t += next_gap();
    if (d.equal_issue && count >= min_queries && prev < gen_duration && d.scenario != kOffline)
      min_queries += nL;
  }
  if (d.scenario == kOffline && accuracy && nL % spq != 0) {
    std::vector<size_t> r(nL % spq);
    for (auto& s : r) s = L.at(next_main());
    emit(t, r);
    count++;
  }
  out << "gen " << count << ' ' << spq << ' ' << t.count() << '\n';
}

void RunCase(std::ostream& out, const Requested& r) {
  const Derived d = Derive(r);
  const auto period = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(1.0 / d.target_qps));
  out << "case " << r.name << '\n';
  out << "eff spq=" << d.spq << " min_query_count=" << d.min_query_count
      << " target_duration_ms=" << d.target_duration.count() << " psc=" << d.psc
      << " acc=" << d.acc << " period_ns=" << (d.scenario == kServer ? 0 : period.count()) << '\n';
  const std::vector<Set> sets = LoadableSets(d, r.accuracy, r.qsl_total);
  for (size_t k = 0; k < sets.size(); k++) {
    out << "set " << k << " end=" << sets[k].dist_end << ' ';
    PrintList(out, sets[k].idx);
    out << '\n';
    Queries(out, d, r.accuracy, sets[k]);
  }
  out << "end\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::ifstream file;
  if (argc > 1) {
    file.open(argv[1]);
    if (!file) {
      std::cerr << "cannot open " << argv[1] << "\n";
      return 1;
    }
  }
  std::istream& in = argc > 1 ? static_cast<std::istream&>(file) : std::cin;
  std::ostringstream out;
  std::string line;
  try {
    while (std::getline(in, line)) {
      size_t hash = line.find('#');
      if (hash != std::string::npos) line.resize(hash);
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      RunCase(out, ParseCase(line));
    }
  } catch (const std::exception& e) {
    std::cerr << "gen_trace: " << e.what() << "\n";
    return 1;
  }
  std::cout << out.str();
  return 0;
}
