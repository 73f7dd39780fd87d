// Region: a buddy allocator for the "NIC memory" region that holds hot items' stable buffers.
//
// The region itself is never read or written here: nicmem is slow for the CPU to read (the
// paper measures 50-528x), so every piece of bookkeeping lives in host memory — one state byte
// and one free-list position per 64-byte unit (5 bytes per 64: 8% of the region's size).
// Blocks are powers of two from kMinBlock up to the top block (min(max_block, the largest power
// of two that fits)); the region is split into as many top blocks as fit. Allocation takes the
// smallest free block that fits and splits it; freeing merges buddies back. All vectors are
// sized at construction: no allocation after that.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nfpark::kvs {

class Region {
 public:
  static constexpr uint32_t kMinBlock = 64;
  static constexpr uint64_t kNone = ~0ull;

  Region(uint64_t bytes, uint64_t max_block);

  // Offset of a block of at least `bytes`, or kNone when none is free (or it is too large).
  uint64_t alloc(uint64_t bytes);
  void free(uint64_t offset);
  // The size of the block at `offset` (allocated by alloc).
  uint64_t block_size(uint64_t offset) const;
  // The size of the block alloc(bytes) would return (0 when it can never fit).
  uint64_t fit(uint64_t bytes) const;
  // Would alloc(bytes) succeed now?
  bool can_alloc(uint64_t bytes) const;

  uint64_t capacity() const { return uint64_t(tops_) << (top_order_ + kMinShift); }
  uint64_t used() const { return used_; }
  uint64_t max_block() const { return tops_ ? uint64_t(1) << (top_order_ + kMinShift) : 0; }

 private:
  static constexpr uint32_t kMinShift = 6;  // log2(kMinBlock)
  static constexpr uint8_t kFree = 0x80;
  int order_for(uint64_t bytes) const;  // -1 when larger than a top block
  void push(uint32_t unit, int order);
  void remove(uint32_t unit, int order);

  int top_order_ = 0;  // top block = kMinBlock << top_order_
  uint32_t tops_ = 0;
  uint64_t used_ = 0;
  std::vector<uint8_t> state_;  // per unit: 0, or (order + 1) | kFree-if-free for a block start
  std::vector<uint32_t> pos_;   // per free block start: its index in free_[order]
  std::vector<std::vector<uint32_t>> free_;
};

}  // namespace nfpark::kvs
