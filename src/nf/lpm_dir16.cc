#include "nf/lpm_dir16.h"

namespace nfpark::nf {

void LpmDir16::reset(size_t entries) {
  clear();
  root_.populate(true), t_.populate(true);  // written whole, right away
  root_.resize(size_t(1) << 16, 0);         // fresh pages, each entry written by build()
  t_.resize(kLeaves + entries, 0);          // the groups: each entry written by build()'s writer
  for (uint32_t v = 0; v < kNone; ++v) t_[v] = uint16_t(v);  // leaf slots: t_[v] = v
  t_[kNone] = 0xFFFF;
}

}  // namespace nfpark::nf
