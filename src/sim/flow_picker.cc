#include "sim/flow_picker.h"

#include <algorithm>
#include <cmath>

namespace nfpark::sim {

FlowPicker::FlowPicker(uint32_t flows, uint32_t slf, double zipf, uint64_t seed)
    : flows_(std::max<uint32_t>(flows, 1)), slf_(std::max<uint32_t>(slf, 1)), rng_(seed) {
  if (zipf > 0) {
    cdf_.resize(flows_);
    double s = 0;
    for (uint32_t r = 0; r < flows_; ++r) cdf_[r] = s += std::pow(double(r + 1), -zipf);
    for (double& x : cdf_) x /= s;
  } else {
    perm_.resize(flows_);
    for (uint32_t f = 0; f < flows_; ++f) perm_[f] = f;
    perm_pos_ = flows_;  // shuffle on first use
  }
}

uint32_t FlowPicker::draw() {
  if (!cdf_.empty()) {
    for (int tries = 0;; ++tries) {
      const double u = rng_.uniform();
      uint32_t r = uint32_t(std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
      if (r >= flows_) r = flows_ - 1;
      if (flows_ == 1 || int64_t(r) != prev_ || tries == 16) return r;
    }
  }
  if (perm_pos_ == flows_) {  // a new round: Fisher-Yates
    for (uint32_t i = flows_ - 1; i > 0; --i) std::swap(perm_[i], perm_[rng_.below(i + 1)]);
    if (flows_ > 1 && int64_t(perm_[0]) == prev_) std::swap(perm_[0], perm_[1]);
    perm_pos_ = 0;
  }
  return perm_[perm_pos_++];
}

uint32_t FlowPicker::next() {
  if (left_ == 0) {
    cur_ = draw();
    prev_ = cur_;
    left_ = slf_;
  }
  --left_;
  return cur_;
}

}  // namespace nfpark::sim
