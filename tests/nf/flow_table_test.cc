#include "nf/flow_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
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
  EXPECT_EQ(T::bytes_per_slot(), 66u);  // + a 16-bit tag
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
  // 64 slots = 2 buckets of 31 flows: at most 62 live; once they idle out new flows take theirs.
  FlowTable<FlowKey, uint32_t, KeyHash> t(8, 10);
  ASSERT_EQ(t.slots(), 64u);
  bool ins;
  uint32_t live = 0;
  for (uint32_t i = 0; i < 186; ++i)
    live += t.find_or_insert(key_of(i), t.hash(key_of(i)), 0, ins) != t.kNone;
  EXPECT_EQ(live, 62u);
  EXPECT_EQ(t.insert_failed(), 124u);
  uint32_t later = 0;
  for (uint32_t i = 200; i < 386; ++i)
    later += t.find_or_insert(key_of(i), t.hash(key_of(i)), 50, ins) != t.kNone;
  EXPECT_EQ(later, 62u);
  EXPECT_EQ(t.expired_count(), 62u);
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

namespace nfpark::nf {
namespace {

// Keys that carry their own hash, so tests choose buckets and 15-bit tags.
struct HKey {
  uint64_t h = 0;
  uint32_t id = 0;
  uint32_t pad = 0;
  bool operator==(const HKey&) const = default;
};
struct OwnHash {
  uint64_t operator()(const HKey& k) const { return k.h; }
};
using HTable = FlowTable<HKey, uint32_t, OwnHash>;
// Hash of first bucket b with tag t (bits 49-63).
uint64_t hash_of(uint32_t b, uint32_t t) {
  return uint64_t(t) << 49 | b;
}

TEST(FlowTableTags, EqualShortTagsInOneBucketAreToldApartByTheirKeys) {
  HTable t(1000, 0);  // 2048 slots = 64 buckets
  const uint64_t h = hash_of(5, 0x1234);
  bool ins;
  for (uint32_t i = 0; i < 62; ++i) {  // 31 in the first bucket, 31 spill into the second
    const uint32_t s = t.find_or_insert(HKey{h, i}, h, 0, ins);
    ASSERT_NE(s, t.kNone) << i;
    ASSERT_TRUE(ins);
    t.at(s).value = i + 100;
  }
  EXPECT_EQ(t.overflow_of(5 * HTable::kWays), 31u);
  EXPECT_EQ(t.find_or_insert(HKey{h, 62}, h, 0, ins), t.kNone);  // both candidates full
  EXPECT_EQ(t.insert_failed(), 1u);
  for (uint32_t i = 0; i < 62; ++i) {
    const uint32_t s = t.find(HKey{h, i}, h, 0);
    ASSERT_NE(s, t.kNone) << i;
    EXPECT_EQ(t.at(s).value, i + 100);
  }
  EXPECT_EQ(t.find(HKey{h, 999}, h, 0), t.kNone);
  // A key of another first bucket with the same tag shares neither bucket's answers.
  const uint64_t h2 = hash_of(6, 0x1234);
  EXPECT_EQ(t.find(HKey{h, 3}, h2, 0), t.kNone);
}

TEST(FlowTableTags, TagZeroIsNeverStoredAndHashesDifferingOnlyInLowTagBitsWork) {
  HTable t(100, 0);
  bool ins;
  // Tag bits 0 (mapped to 1) and 1 collide on purpose: both keys must be found.
  const uint64_t h0 = hash_of(1, 0), h1 = hash_of(1, 1);
  const uint32_t s0 = t.find_or_insert(HKey{h0, 1}, h0, 0, ins);
  const uint32_t s1 = t.find_or_insert(HKey{h1, 2}, h1, 0, ins);
  ASSERT_NE(s0, t.kNone);
  ASSERT_NE(s1, t.kNone);
  EXPECT_NE(s0, s1);
  EXPECT_TRUE(t.occupied(s0));
  EXPECT_EQ(t.find(HKey{h0, 1}, h0, 0), s0);
  EXPECT_EQ(t.find(HKey{h1, 2}, h1, 0), s1);
  EXPECT_EQ(t.size(), 2u);
  for (uint32_t s = 0; s < t.slots(); s += HTable::kWays) EXPECT_FALSE(t.occupied(s));
}

TEST(FlowTableTags, DeletesAndExpiryReturnTheOverflowCount) {
  HTable t(1000, 10);
  const uint64_t h = hash_of(9, 0x0abc);
  bool ins;
  std::vector<uint32_t> slots;
  for (uint32_t i = 0; i < 40; ++i) slots.push_back(t.find_or_insert(HKey{h, i}, h, 0, ins));
  uint32_t spilled = 0;
  for (uint32_t s : slots) spilled += s / HTable::kWays != 9;
  EXPECT_GT(spilled, 0u);
  EXPECT_EQ(t.overflow_of(9 * HTable::kWays), spilled);
  // Erase the spilled half of them, let the rest expire: the count follows, down to 0.
  uint32_t erased = 0;
  for (uint32_t i = 0; i < 40; i += 2)
    if (slots[i] / HTable::kWays != 9) t.erase(slots[i]), ++erased;
  EXPECT_EQ(t.overflow_of(9 * HTable::kWays), spilled - erased);
  for (uint32_t i = 0; i < 40; ++i) {
    const bool gone = i % 2 == 0 && slots[i] / HTable::kWays != 9;
    EXPECT_EQ(t.find(HKey{h, i}, h, 5, false) != t.kNone, !gone) << i;
  }
  t.sweep(100, t.slots());
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.overflow_of(9 * HTable::kWays), 0u);
  // With no overflow left, the first bucket takes new keys again.
  EXPECT_EQ(t.find_or_insert(HKey{h, 77}, h, 100, ins) / HTable::kWays, 9u);
}

TEST(FlowTableTags, RandomOperationsMatchAMapOnACrowdedTable) {
  // Hashes drawn from 8 first buckets x 4 tags: constant collisions, overflow, full buckets.
  HTable t(200, 0);                              // 256 slots = 8 buckets
  std::vector<std::pair<HKey, uint32_t>> model;  // key, slot
  uint64_t rng = 42;
  auto next = [&] { return rng = rng * 6364136223846793005ULL + 1442695040888963407ULL; };
  bool ins;
  for (int op = 0; op < 20000; ++op) {
    const uint64_t r = next() >> 20;
    const HKey k{hash_of(uint32_t(r % 8), uint32_t(r / 8 % 4) + 1), uint32_t(r / 32 % 64)};
    auto it = std::find_if(model.begin(), model.end(), [&](auto& p) { return p.first == k; });
    if (r / 4096 % 3 == 0 && it != model.end()) {
      t.erase(it->second);
      model.erase(it);
    } else {
      const uint32_t s = t.find_or_insert(k, k.h, 0, ins);
      if (it != model.end()) {
        ASSERT_EQ(s, it->second);
        ASSERT_FALSE(ins);
      } else if (s != t.kNone) {
        ASSERT_TRUE(ins);
        model.emplace_back(k, s);
      }
    }
    ASSERT_EQ(t.size(), model.size());
  }
  for (auto& [k, s] : model) ASSERT_EQ(t.find(k, k.h, 0), s);
  uint32_t overflow = 0;
  for (uint32_t b = 0; b < 8; ++b) overflow += t.overflow_of(b * HTable::kWays);
  uint32_t second = 0;
  for (auto& [k, s] : model) second += s / HTable::kWays != (k.h & 7);
  EXPECT_EQ(overflow, second);
}

}  // namespace
}  // namespace nfpark::nf
