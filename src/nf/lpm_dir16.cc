#include "nf/lpm_dir16.h"

namespace nfpark::nf {

void LpmDir16::reset() {
  clear();
  root_.resize(size_t(1) << 16, kNone << 5 | 16);
  t_.resize(kLeaves, 0);
  for (uint32_t v = 0; v < kNone; ++v) t_[v] = uint16_t(v);
  t_[kNone] = 0xFFFF;
}

bool LpmDir16::widen(uint32_t c, int s) {
  const size_t off = t_.size(), n = size_t(1) << s;
  if (root_.size() * sizeof(uint32_t) + (off + n) * sizeof(uint16_t) > kMaxBytes) return false;
  t_.resize(off + n, 0xFFFF);
  root_[c] = uint32_t(off) << 5 | uint32_t(16 - s);
  return true;
}

}  // namespace nfpark::nf
