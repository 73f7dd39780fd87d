// bench_stats: clocks and summaries shared by the ratio benchmarks (switch_bench, nicmode_bench,
// reframe_chain_bench). Every benchmark reports a variant against a baseline measured in the same
// run, interleaved (baseline, variant, baseline, variant, ...), N repetitions each:
//   - the headline ratio uses the minimum time of each side over the N repetitions (the run
//     least disturbed by the other jobs on this shared machine);
//   - the spread is the range of the per-repetition ratios (baseline and variant measured back
//     to back in repetition i), so a noisy run shows up as a wide range.
// Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID: what the code cost, whatever else
// held the core) and wall time (what a wire would see; inflated when the machine is busy).
#pragma once
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace nfpark::bench {

inline double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

inline double wall_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// CPU and wall seconds of one timed section.
struct Stopwatch {
  double cpu0 = thread_cpu_s(), wall0 = wall_s();
  double cpu() const { return thread_cpu_s() - cpu0; }
  double wall() const { return wall_s() - wall0; }
};

// Values of one quantity over the repetitions.
struct Series {
  std::vector<double> v;
  void add(double x) { v.push_back(x); }
  bool empty() const { return v.empty(); }
  size_t n() const { return v.size(); }
  double min() const { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
  double max() const { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }
  double median() const {
    if (v.empty()) return 0;
    std::vector<double> s = v;
    std::sort(s.begin(), s.end());
    return s.size() % 2 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
  }
};

// A ratio between two timed sides: min-based value plus the per-repetition range.
// ratio = base_time / variant_time, i.e. the variant's throughput relative to the baseline's.
struct Ratio {
  Series base, variant;  // seconds per unit of work, one entry per repetition
  double value() const { return variant.min() > 0 ? base.min() / variant.min() : 0; }
  Series per_rep() const {
    Series r;
    for (size_t i = 0; i < std::min(base.n(), variant.n()); ++i)
      if (variant.v[i] > 0) r.add(base.v[i] / variant.v[i]);
    return r;
  }
  // "0.93x [0.88-0.97, N=5]"
  std::string text() const {
    Series r = per_rep();
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.2fx [%.2f-%.2f, N=%zu]", value(), r.min(), r.max(), r.n());
    return buf;
  }
};

// Reads "--quick" (and rejects anything else) for the benches' common command line.
inline bool parse_quick(int argc, char** argv, const char* usage) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else {
      std::fprintf(stderr, "%s", usage);
      std::exit(a == "--help" || a == "-h" ? 0 : 2);
    }
  }
  return quick;
}

}  // namespace nfpark::bench
