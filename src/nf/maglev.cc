#include "nf/maglev.h"

#include <algorithm>

#include "core/flow_key.h"

namespace nfpark::nf {

bool MaglevTable::is_prime(uint32_t n) {
  if (n < 2) return false;
  for (uint64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

void MaglevTable::build(std::span<const uint64_t> ids, std::span<const uint32_t> weights) {
  const size_t n = std::min(ids.size(), weights.size());
  std::fill(entries_.begin(), entries_.end(), kNone);
  uint32_t max_w = 0;
  for (size_t i = 0; i < n; ++i) max_w = std::max(max_w, weights[i]);
  if (max_w == 0 || size_ == 0) return;

  std::vector<uint64_t> offset(n), skip(n), next(n, 0), credit(n, 0);
  for (size_t i = 0; i < n; ++i) {
    offset[i] = mix64(ids[i] ^ 0x6d61676c65763131ULL) % size_;
    skip[i] = size_ > 1 ? mix64(ids[i] ^ 0x736b697073656564ULL) % (size_ - 1) + 1 : 1;
  }
  uint32_t filled = 0;
  while (true) {
    for (size_t i = 0; i < n; ++i) {
      if (weights[i] == 0) continue;
      credit[i] += weights[i];
      if (credit[i] < max_w) continue;
      credit[i] -= max_w;
      uint64_t c;
      do {  // next preferred entry of backend i that is still free
        c = (offset[i] + next[i] * skip[i]) % size_;
        ++next[i];
      } while (entries_[c] != kNone);
      entries_[c] = uint32_t(i);
      if (++filled == size_) return;
    }
  }
}

}  // namespace nfpark::nf
