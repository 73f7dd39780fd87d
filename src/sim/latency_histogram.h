// LatencyHistogram: counts of picosecond values in log-linear buckets — exact below 128 ps,
// then 128 buckets per power of two (relative error < 0.8%) — so a run of any length reports
// average (exact), p50 and p99 in constant memory and constant time per value.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace nfpark::sim {

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 7;
  LatencyHistogram() : counts_(size_t(64 - kSubBits + 1) << kSubBits, 0) {}
  void add(Picos v) {
    if (v < 0) v = 0;
    ++counts_[bucket(uint64_t(v))];
    ++n_;
    sum_ += double(v);
  }
  uint64_t count() const { return n_; }
  double mean() const { return n_ ? sum_ / double(n_) : 0; }
  // The q-quantile (0..1): the midpoint of the bucket holding the value of rank ceil(q * n).
  Picos quantile(double q) const;
  void clear();
  void merge(const LatencyHistogram& o);

  static size_t bucket(uint64_t v) {
    if (v < (1u << kSubBits)) return size_t(v);
    const int e = 63 - __builtin_clzll(v);  // >= kSubBits
    return (size_t(e - kSubBits + 1) << kSubBits) | size_t((v >> (e - kSubBits)) & 127);
  }
  static Picos midpoint(size_t b);  // the representative value of bucket b

 private:
  std::vector<uint64_t> counts_;
  uint64_t n_ = 0;
  double sum_ = 0;
};

}  // namespace nfpark::sim
