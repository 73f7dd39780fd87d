#include "nf/flow_table.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/flow_key.h"

namespace nfpark::nf {
namespace {

struct KeyHash {
  uint64_t operator()(const FlowKey& k) const { return k.hash(); }
};

FlowKey key_of(uint32_t i) {
  FlowKey k;
  k.ip_version = 4;
  k.proto = 17;
  k.src[12] = uint8_t(i >> 24);
  k.src[13] = uint8_t(i >> 16);
  k.src[14] = uint8_t(i >> 8);
  k.src[15] = uint8_t(i);
  k.sport = 1000;
  k.dport = 53;
  return k;
}

struct Recorder {
  std::vector<uint32_t>* seen;
  void operator()(const FlowKey&, uint32_t& v, uint32_t) const { seen->push_back(v); }
};

TEST(FlowTable, InsertFindErase) {
  FlowTable<FlowKey, uint32_t, KeyHash> t(100, 0);
  EXPECT_EQ(t.slots(), 128u);  // next_pow2(100 + 25)
  bool ins = false;
  FlowKey k = key_of(1);
  uint32_t s = t.find_or_insert(k, t.hash(k), 0, ins);
  ASSERT_NE(s, t.kNone);
  EXPECT_TRUE(ins);
  t.at(s).value = 77;
  EXPECT_EQ(t.find_or_insert(k, t.hash(k), 5, ins), s);
  EXPECT_FALSE(ins);
  EXPECT_EQ(t.at(s).value, 77u);
  EXPECT_EQ(t.find(key_of(2), t.hash(key_of(2)), 5), t.kNone);
  EXPECT_EQ(t.size(), 1u);
  t.erase(s);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.find(k, t.hash(k), 5), t.kNone);
}

TEST(FlowTable, EntriesAreOneCacheLineForFlowKeys) {
  using T = FlowTable<FlowKey, uint64_t[2], KeyHash>;
  EXPECT_EQ(sizeof(T::Entry), 64u);
  EXPECT_EQ(T::bytes_per_slot(), 68u);
}

TEST(FlowTable, LazyExpiryCallsHookAndFreesSlot) {
  std::vector<uint32_t> seen;
  FlowTable<FlowKey, uint32_t, KeyHash, Recorder> t(16, 100, Recorder{&seen});
  bool ins;
  FlowKey k = key_of(9);
  uint64_t h = t.hash(k);
  t.at(t.find_or_insert(k, h, 0, ins)).value = 9;
  EXPECT_NE(t.find(k, h, 100), t.kNone);  // idle exactly 100: still live; touch -> last = 100
  EXPECT_NE(t.find(k, h, 200), t.kNone);
  EXPECT_EQ(t.find(k, h, 301), t.kNone);  // idle 101 > 100
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], 9u);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.expired_count(), 1u);
}

TEST(FlowTable, SweepRemovesIdleFlowsIncrementally) {
  std::vector<uint32_t> seen;
  FlowTable<FlowKey, uint32_t, KeyHash, Recorder> t(1000, 10, Recorder{&seen});
  bool ins;
  for (uint32_t i = 0; i < 1000; ++i)
    t.at(t.find_or_insert(key_of(i), t.hash(key_of(i)), 0, ins)).value = i;
  EXPECT_EQ(t.sweep(5, t.slots()), 0u);  // nothing idle yet
  size_t removed = 0;
  for (size_t step = 0; step < t.slots() / 64; ++step) removed += t.sweep(20, 64);
  EXPECT_EQ(removed, 1000u);
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(t.size(), 0u);
}

TEST(FlowTable, FillsToCapacityWithoutFailure) {
  for (size_t cap : {1000u, 104857u, 838860u}) {  // 49%, 80%, 80% load
    FlowTable<FlowKey, uint32_t, KeyHash> t(cap, 0);
    bool ins;
    for (uint32_t i = 0; i < cap; ++i)
      ASSERT_NE(t.find_or_insert(key_of(i), t.hash(key_of(i)), 0, ins), t.kNone) << cap << " " << i;
    EXPECT_EQ(t.size(), cap);
    EXPECT_EQ(t.insert_failed(), 0u);
    for (uint32_t i = 0; i < cap; i += 997)
      EXPECT_NE(t.find(key_of(i), t.hash(key_of(i)), 0), t.kNone);
  }
}

TEST(FlowTable, ExpiredSlotIsReusedWhenBucketsAreFull) {
  // 32 slots = 2 buckets: at most 32 live flows; once they idle out new flows take their slots.
  FlowTable<FlowKey, uint32_t, KeyHash> t(8, 10);
  ASSERT_EQ(t.slots(), 32u);
  bool ins;
  uint32_t live = 0;
  for (uint32_t i = 0; i < 96; ++i)
    live += t.find_or_insert(key_of(i), t.hash(key_of(i)), 0, ins) != t.kNone;
  EXPECT_EQ(live, 32u);
  EXPECT_EQ(t.insert_failed(), 64u);
  uint32_t later = 0;
  for (uint32_t i = 100; i < 196; ++i)
    later += t.find_or_insert(key_of(i), t.hash(key_of(i)), 50, ins) != t.kNone;
  EXPECT_EQ(later, 32u);
  EXPECT_EQ(t.expired_count(), 32u);
}

TEST(FlowTable, PrefetchHelpersAreSafeOnEmptyAndFullTables) {
  FlowTable<FlowKey, uint32_t, KeyHash> t(64, 0);
  bool ins;
  for (uint32_t i = 0; i < 200; ++i) {
    uint64_t h = t.hash(key_of(i));
    t.prefetch_buckets(h);
    t.prefetch_entry(h);
    t.find_or_insert(key_of(i), h, 0, ins);
  }
  EXPECT_LE(t.size(), t.slots());
}

}  // namespace
}  // namespace nfpark::nf
