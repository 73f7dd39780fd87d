#include "nf/lpm_dir16.h"

namespace nfpark::nf {

void LpmDir16::reset() {
  clear();
  root_.resize(size_t(1) << 16, kNone << 5 | 16);
  t_.resize(kLeaves, 0);  // leaf slots: t_[v] = v
  for (uint32_t v = 0; v < kNone; ++v) t_[v] = uint16_t(v);
  t_[kNone] = 0xFFFF;
}

}  // namespace nfpark::nf
