#include "kvs/region.h"

#include <bit>

namespace nfpark::kvs {

Region::Region(uint64_t bytes, uint64_t max_block) {
  const uint64_t units = bytes >> kMinShift;
  if (units == 0 || max_block < kMinBlock) return;  // an empty region: nothing ever fits
  int top = std::bit_width(units) - 1;              // largest power of two that fits
  const int cap = std::bit_width(max_block >> kMinShift) - 1;
  if (top > cap) top = cap;
  top_order_ = top;
  tops_ = uint32_t(units >> top);
  const uint32_t n = tops_ << top;
  state_.assign(n, 0);
  pos_.assign(n, 0);
  free_.resize(size_t(top) + 1);
  for (int k = 0; k <= top; ++k) free_[size_t(k)].reserve(size_t(n >> k) / 2 + tops_);
  for (uint32_t t = 0; t < tops_; ++t) push(t << top, top);
}

int Region::order_for(uint64_t bytes) const {
  if (tops_ == 0) return -1;
  uint64_t units = (bytes + kMinBlock - 1) >> kMinShift;
  if (units == 0) units = 1;
  const int k = std::bit_width(units - 1);  // ceil(log2(units))
  return k > top_order_ ? -1 : k;
}

uint64_t Region::fit(uint64_t bytes) const {
  const int k = order_for(bytes);
  return k < 0 ? 0 : uint64_t(kMinBlock) << k;
}

bool Region::can_alloc(uint64_t bytes) const {
  const int k = order_for(bytes);
  if (k < 0) return false;
  for (int j = k; j <= top_order_; ++j)
    if (!free_[size_t(j)].empty()) return true;
  return false;
}

void Region::push(uint32_t unit, int order) {
  auto& fl = free_[size_t(order)];
  pos_[unit] = uint32_t(fl.size());
  fl.push_back(unit);
  state_[unit] = uint8_t(order + 1) | kFree;
}

void Region::remove(uint32_t unit, int order) {
  auto& fl = free_[size_t(order)];
  const uint32_t i = pos_[unit];
  const uint32_t last = fl.back();
  fl[i] = last;
  pos_[last] = i;
  fl.pop_back();
  state_[unit] = 0;
}

uint64_t Region::alloc(uint64_t bytes) {
  const int k = order_for(bytes);
  if (k < 0) return kNone;
  int j = k;
  while (j <= top_order_ && free_[size_t(j)].empty()) ++j;
  if (j > top_order_) return kNone;
  const uint32_t unit = free_[size_t(j)].back();
  remove(unit, j);
  while (j > k) {  // split: keep the lower half, free the upper one
    --j;
    push(unit + (1u << j), j);
  }
  state_[unit] = uint8_t(k + 1);
  used_ += uint64_t(kMinBlock) << k;
  return uint64_t(unit) << kMinShift;
}

uint64_t Region::block_size(uint64_t offset) const {
  const uint8_t s = state_[offset >> kMinShift];
  return uint64_t(kMinBlock) << ((s & ~kFree) - 1);
}

void Region::free(uint64_t offset) {
  uint32_t unit = uint32_t(offset >> kMinShift);
  int k = (state_[unit] & ~kFree) - 1;
  used_ -= uint64_t(kMinBlock) << k;
  state_[unit] = 0;
  while (k < top_order_) {
    const uint32_t buddy = unit ^ (1u << k);
    if (state_[buddy] != (uint8_t(k + 1) | kFree)) break;
    remove(buddy, k);
    unit = unit < buddy ? unit : buddy;
    ++k;
  }
  push(unit, k);
}

}  // namespace nfpark::kvs
