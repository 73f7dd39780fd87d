#include "kvs/hot_policy.h"

#include <algorithm>
#include <bit>

#include "core/flow_key.h"

namespace nfpark::kvs {

HotPolicy::HotPolicy(const HotPolicyConfig& cfg) : cfg_(cfg) {
  const uint32_t w = std::bit_ceil(std::max<uint32_t>(cfg.width, 64));
  mask_ = w - 1;
  if (cfg_.decay_every == 0) cfg_.decay_every = 10 * w;
  counts_.assign(size_t(kRows) * w, 0);
}

uint32_t HotPolicy::index(uint64_t hash, int row) const {
  // Row hashes from one 64-bit key hash: remix with a per-row odd constant.
  const uint64_t h = mix64(hash + 0x9E3779B97F4A7C15ull * uint64_t(row + 1));
  return uint32_t(row) * (mask_ + 1) + (uint32_t(h) & mask_);
}

uint32_t HotPolicy::estimate(uint64_t hash) const {
  uint32_t m = UINT32_MAX;
  for (int r = 0; r < kRows; ++r) m = std::min(m, counts_[index(hash, r)]);
  return m;
}

uint32_t HotPolicy::touch(uint64_t hash) {
  // Conservative update: raise only the counters at the minimum (less overestimation).
  const uint32_t m = estimate(hash);
  for (int r = 0; r < kRows; ++r) {
    uint32_t& c = counts_[index(hash, r)];
    if (c == m && c != UINT32_MAX) ++c;
  }
  if (++since_decay_ >= cfg_.decay_every) {
    for (uint32_t& c : counts_) c >>= 1;
    since_decay_ = 0;
    ++decays_;
  }
  return m == UINT32_MAX ? m : m + 1;
}

uint64_t HotPolicy::next_random() {
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return rng_ * 0x2545F4914F6CDD1Dull;
}

}  // namespace nfpark::kvs
