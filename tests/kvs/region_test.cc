// The buddy allocator of the hot region: blocks never overlap, splits and merges restore the
// whole region, and sizes beyond the top block are refused.
#include "kvs/region.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace nfpark::kvs {
namespace {

TEST(Region, SizesRoundUpToPowersOfTwo) {
  Region r(1 << 20, 1 << 20);
  EXPECT_EQ(r.capacity(), 1u << 20);
  EXPECT_EQ(r.fit(1), 64u);
  EXPECT_EQ(r.fit(64), 64u);
  EXPECT_EQ(r.fit(65), 128u);
  EXPECT_EQ(r.fit(1 << 20), 1u << 20);
  EXPECT_EQ(r.fit((1 << 20) + 1), 0u);
  EXPECT_EQ(r.alloc((1 << 20) + 1), Region::kNone);
  const uint64_t a = r.alloc(100);
  EXPECT_EQ(r.block_size(a), 128u);
  EXPECT_EQ(r.used(), 128u);
}

TEST(Region, TopBlocksBoundedByMaxBlockAndSize) {
  Region r(3 << 20, 1 << 20);  // three top blocks of 1 MiB
  EXPECT_EQ(r.capacity(), 3u << 20);
  EXPECT_EQ(r.max_block(), 1u << 20);
  for (int i = 0; i < 3; ++i) EXPECT_NE(r.alloc(1 << 20), Region::kNone);
  EXPECT_FALSE(r.can_alloc(64));
  EXPECT_EQ(r.alloc(64), Region::kNone);
  Region small(256 << 10, 2 << 20);  // the paper's 256 KiB: one 256 KiB top block
  EXPECT_EQ(small.max_block(), 256u << 10);
  Region empty(0, 1 << 20);
  EXPECT_EQ(empty.alloc(1), Region::kNone);
}

TEST(Region, RandomAllocFreeNeverOverlapsAndMergesBack) {
  Region r(1 << 20, 256 << 10);
  std::mt19937_64 rng(5);
  std::map<uint64_t, uint64_t> live;  // offset -> size
  for (int i = 0; i < 20000; ++i) {
    if (live.empty() || rng() % 3 != 0) {
      const uint64_t want = 1 + rng() % 5000;
      const uint64_t off = r.alloc(want);
      if (off == Region::kNone) {
        EXPECT_FALSE(r.can_alloc(want));
        continue;
      }
      const uint64_t size = r.block_size(off);
      ASSERT_GE(size, want);
      ASSERT_EQ(off % size, 0u) << "blocks are aligned to their size";
      auto next = live.lower_bound(off);
      if (next != live.end()) {
        ASSERT_LE(off + size, next->first);
      }
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second, off);
      }
      live[off] = size;
    } else {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      r.free(it->first);
      live.erase(it);
    }
    uint64_t sum = 0;
    for (auto& [o, s] : live) sum += s;
    ASSERT_EQ(r.used(), sum);
  }
  for (auto& [o, s] : live) r.free(o);
  EXPECT_EQ(r.used(), 0u);
  for (int i = 0; i < 4; ++i) EXPECT_NE(r.alloc(256 << 10), Region::kNone) << "merged back";
}

}  // namespace
}  // namespace nfpark::kvs
