#include "reframe/flow_table.h"

#include <gtest/gtest.h>

namespace nfpark::reframe {
namespace {

TEST(FlowTable, FindsWhatItInserted) {
  FlowTable t(1000);
  auto a = t.find_or_insert(42, 5, kSecond);
  ASSERT_NE(a.slot, kNone);
  EXPECT_TRUE(a.is_new);
  EXPECT_EQ(t.at(a.slot).first_seen, 5);
  auto b = t.find_or_insert(42, 6, kSecond);
  EXPECT_EQ(b.slot, a.slot);
  EXPECT_FALSE(b.is_new);
  EXPECT_EQ(t.size(), 1u);
}

TEST(FlowTable, IdleEntryExpiresLazily) {
  FlowTable t(1000);
  auto a = t.find_or_insert(42, 0, 100);
  t.at(a.slot).packets_seen = 9;
  t.at(a.slot).last_arrival = 0;
  auto b = t.find_or_insert(42, 100, 100);
  EXPECT_TRUE(b.is_new);
  EXPECT_TRUE(b.expired);
  EXPECT_EQ(t.at(b.slot).packets_seen, 0u);
  EXPECT_EQ(t.at(b.slot).first_seen, 100);
  // A busy entry never expires.
  t.at(b.slot).count = 1;
  auto c = t.find_or_insert(42, 10'000, 100);
  EXPECT_FALSE(c.is_new);
}

TEST(FlowTable, FullCandidatesEvictLeastRecentIdleNeverBusy) {
  FlowTable t(16);  // a few buckets of 8: keys sharing both buckets collide quickly
  std::vector<uint32_t> slots;
  uint64_t evictions = 0, refused = 0;
  for (uint64_t k = 1; k <= 5000; ++k) {
    auto r = t.find_or_insert(k, Nanos(k), kSecond);
    if (r.slot == kNone) {
      ++refused;
      continue;
    }
    evictions += r.evicted;
    t.at(r.slot).count = 1;  // make every entry busy
  }
  EXPECT_EQ(evictions, 0u);  // busy entries are never evicted
  EXPECT_GT(refused, 0u);    // so some keys find no room
  EXPECT_LE(t.size(), t.slots());
  // Make every entry idle: new keys now evict, and the evicted one is the least recent.
  for (uint32_t s = 0; s < t.slots(); ++s) t.at(s).count = 0;
  auto r = t.find_or_insert(999'999, 10'000, kSecond);
  ASSERT_NE(r.slot, kNone);
  EXPECT_TRUE(r.evicted);
}

}  // namespace
}  // namespace nfpark::reframe
