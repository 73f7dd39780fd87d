#include "sim/latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace nfpark::sim {

Picos LatencyHistogram::midpoint(size_t b) {
  if (b < (1u << kSubBits)) return Picos(b);
  const int e = int(b >> kSubBits) + kSubBits - 1;
  const uint64_t low = (uint64_t(1) << e) | (uint64_t(b & 127) << (e - kSubBits));
  const uint64_t width = uint64_t(1) << (e - kSubBits);
  return Picos(low + width / 2);
}

Picos LatencyHistogram::quantile(double q) const {
  if (n_ == 0) return 0;
  const uint64_t rank = std::max<uint64_t>(1, uint64_t(std::ceil(q * double(n_))));
  uint64_t seen = 0;
  for (size_t b = 0; b < counts_.size(); ++b) {
    seen += counts_[b];
    if (seen >= rank) return midpoint(b);
  }
  return midpoint(counts_.size() - 1);
}

void LatencyHistogram::clear() {
  if (n_ == 0) return;
  std::fill(counts_.begin(), counts_.end(), 0);
  n_ = 0;
  sum_ = 0;
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
  for (size_t b = 0; b < counts_.size(); ++b) counts_[b] += o.counts_[b];
  n_ += o.n_;
  sum_ += o.sum_;
}

}  // namespace nfpark::sim
