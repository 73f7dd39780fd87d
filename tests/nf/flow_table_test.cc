#include "nf/flow_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <unordered_map>
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
  EXPECT_EQ(t.slots(), 192u);  // 125 flows / 31 a bucket -> 5 buckets, even -> 6
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
  EXPECT_EQ(T::kBucketBytes, 2048u);  // a tag line + 31 entries (none for lane 0)
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
  for (size_t cap : {1000u, 104857u, 1000000u}) {  // 77%, 80%, 80% load
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
// Hash of first bucket b of `t` with tag g (bits 49-63): the smallest low word that
// multiply-shift maps to b.
uint64_t hash_of(const HTable& t, uint32_t b, uint32_t g) {
  const uint64_t n = t.slots() / HTable::kWays;
  return uint64_t(g) << 49 | ((uint64_t(b) << 32) + n - 1) / n;
}
uint32_t first_bucket(const HTable& t, uint64_t h) {
  return uint32_t(uint64_t(uint32_t(h)) * (t.slots() / HTable::kWays) >> 32);
}

TEST(FlowTableTags, EqualShortTagsInOneBucketAreToldApartByTheirKeys) {
  HTable t(1000, 0);  // 1250 flows / 31 -> 41 buckets, even -> 42
  const uint64_t h = hash_of(t, 5, 0x1234);
  bool ins;
  for (uint32_t i = 0; i < 62; ++i) {  // 31 in the first bucket, 31 spill into the second
    const uint32_t s = t.find_or_insert(HKey{h, i}, h, 0, ins);
    ASSERT_NE(s, t.kNone) << i;
    ASSERT_TRUE(ins);
    t.at(s).value = i + 100;
  }
  // 31 keys of one tag class spilled: that class's 4-bit count saturated at 15 (and stays).
  EXPECT_EQ(t.overflow_of(5 * HTable::kWays), 15u);
  EXPECT_EQ(t.find_or_insert(HKey{h, 62}, h, 0, ins), t.kNone);  // both candidates full
  EXPECT_EQ(t.insert_failed(), 1u);
  for (uint32_t i = 0; i < 62; ++i) {
    const uint32_t s = t.find(HKey{h, i}, h, 0);
    ASSERT_NE(s, t.kNone) << i;
    EXPECT_EQ(t.at(s).value, i + 100);
  }
  EXPECT_EQ(t.find(HKey{h, 999}, h, 0), t.kNone);
  // A key of another first bucket with the same tag shares neither bucket's answers.
  const uint64_t h2 = hash_of(t, 6, 0x1234);
  EXPECT_EQ(t.find(HKey{h, 3}, h2, 0), t.kNone);
}

TEST(FlowTableTags, TagZeroIsNeverStoredAndHashesDifferingOnlyInLowTagBitsWork) {
  HTable t(100, 0);
  bool ins;
  // Tag bits 0 (mapped to 1) and 1 collide on purpose: both keys must be found.
  const uint64_t h0 = hash_of(t, 1, 0), h1 = hash_of(t, 1, 1);
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
  const uint64_t h = hash_of(t, 9, 0x0abc);
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
  // Hashes drawn from 10 first buckets x 4 tags (one per overflow class) x 8 keys: constant
  // collisions, overflow, full buckets; a class spills at most 8 keys (its count never saturates).
  HTable t(200, 0);                              // 250 flows / 31 -> 9 buckets, even -> 10
  std::vector<std::pair<HKey, uint32_t>> model;  // key, slot
  uint64_t rng = 42;
  auto next = [&] { return rng = rng * 6364136223846793005ULL + 1442695040888963407ULL; };
  bool ins;
  for (int op = 0; op < 20000; ++op) {
    const uint64_t r = next() >> 20;
    const HKey k{hash_of(t, uint32_t(r % 10), uint32_t(r / 10 % 4) + 1), uint32_t(r / 40 % 8)};
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
  for (uint32_t b = 0; b < 10; ++b) overflow += t.overflow_of(b * HTable::kWays);
  uint32_t second = 0;
  for (auto& [k, s] : model) second += s / HTable::kWays != first_bucket(t, k.h);
  EXPECT_GT(second, 0u);
  EXPECT_EQ(overflow, second);
}

}  // namespace
}  // namespace nfpark::nf

namespace nfpark::nf {
namespace {

using FTable = FlowTable<FlowKey, uint32_t, KeyHash, Recorder>;

uint32_t first_bucket_of(const FTable& t, const FlowKey& k) {
  return uint32_t(uint64_t(uint32_t(t.hash(k))) * (t.slots() / FTable::kWays) >> 32);
}
// Keys living in their second bucket, counted from the slots (what the overflow counts must sum to
// while no class has saturated).
uint32_t spilled(const FTable& t) {
  uint32_t n = 0;
  for (uint32_t s = 0; s < t.slots(); ++s)
    n += t.occupied(s) && s / FTable::kWays != first_bucket_of(t, t.at(s).key);
  return n;
}
uint32_t overflow_total(const FTable& t) {
  uint32_t n = 0;
  for (uint32_t s = 0; s < t.slots(); s += FTable::kWays) n += t.overflow_of(s);
  return n;
}

TEST(FlowTableSizing, HoldsTheCapacityAskedWithoutRoundingToAPowerOfTwo) {
  std::vector<uint32_t> seen;
  for (size_t cap : {1u, 8u, 100u, 5000u, 65536u, 300000u}) {
    FTable t(cap, 0, Recorder{&seen});
    const size_t buckets = t.slots() / FTable::kWays;
    EXPECT_EQ(t.slots(), size_t(FTable::buckets_for(cap)) * FTable::kWays) << cap;
    EXPECT_EQ(buckets % 2, 0u) << cap;
    EXPECT_GE(buckets, 2u) << cap;
    // Room for capacity * 5/4 flows, and at most two buckets more than that.
    EXPECT_GE(buckets * FTable::kFlowWays, cap + cap / 4) << cap;
    EXPECT_LT(buckets * FTable::kFlowWays, cap + cap / 4 + 2 * FTable::kFlowWays + 1) << cap;
    bool ins;
    for (uint32_t i = 0; i < cap; ++i)
      ASSERT_NE(t.find_or_insert(key_of(i), t.hash(key_of(i)), 0, ins), t.kNone) << cap << " " << i;
    EXPECT_EQ(t.insert_failed(), 0u);
    EXPECT_EQ(t.size(), cap);
    for (uint32_t i = 0; i < cap; ++i) {  // no false miss, no false hit
      ASSERT_NE(t.find(key_of(i), t.hash(key_of(i)), 0, false), t.kNone) << cap << " " << i;
      ASSERT_EQ(t.find(key_of(cap + i), t.hash(key_of(cap + i)), 0, false), t.kNone) << cap;
    }
    EXPECT_EQ(overflow_total(t), spilled(t)) << cap;
  }
  // The size: 1M flows in 40,324 buckets of 2 KiB (78.8 MiB; rte_hash's 1.25M entries
  // take 81.2 MiB), where the power-of-two rule took 2^16 buckets of 32 slots of 66 B (132 MiB).
  EXPECT_EQ(FTable::bytes_for(1'000'000), 40324u * 2048u);
  EXPECT_EQ(FTable(1'000'000, 0, Recorder{&seen}).bytes(), 40324u * 2048u);
}

TEST(FlowTableSizing, EraseAndSweepAtFullLoad) {
  std::vector<uint32_t> seen;
  const uint32_t cap = 50000;
  FTable t(cap, 100, Recorder{&seen});
  bool ins;
  for (uint32_t i = 0; i < cap; ++i)
    t.at(t.find_or_insert(key_of(i), t.hash(key_of(i)), 0, ins)).value = i;
  ASSERT_EQ(t.size(), cap);
  EXPECT_GT(spilled(t), 0u);  // at 80% load some keys live in their second bucket
  // Odd keys refreshed at 90; one in two of them erased; the even ones idle out by the sweep.
  for (uint32_t i = 1; i < cap; i += 2) {
    const uint32_t s = t.find(key_of(i), t.hash(key_of(i)), 90);
    ASSERT_NE(s, t.kNone) << i;
    if (i % 4 == 1) t.erase(s);
  }
  EXPECT_EQ(t.sweep(150, t.slots()), cap / 2);
  ASSERT_EQ(seen.size(), cap / 2);
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](uint32_t v) { return v % 2 == 0; }));
  EXPECT_EQ(t.size(), cap / 4);
  for (uint32_t i = 0; i < cap; ++i) {
    const uint32_t s = t.find(key_of(i), t.hash(key_of(i)), 150, false);
    ASSERT_EQ(s != t.kNone, i % 4 == 3) << i;
    if (s != t.kNone) {
      ASSERT_EQ(t.at(s).value, i);
    }
  }
  EXPECT_EQ(overflow_total(t), spilled(t));
  // Full again: the freed slots take the even keys back, without a failure.
  for (uint32_t i = 0; i < cap; i += 2)
    ASSERT_NE(t.find_or_insert(key_of(i), t.hash(key_of(i)), 150, ins), t.kNone) << i;
  EXPECT_EQ(t.insert_failed(), 0u);
  EXPECT_EQ(overflow_total(t), spilled(t));
  // Everything idles out: the sweep empties the table and every overflow count returns to 0.
  EXPECT_EQ(t.sweep(1000, t.slots()), cap / 4 + cap / 2);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(overflow_total(t), 0u);
}

TEST(FlowTableSizing, RandomOperationsMatchAnUnorderedMapAtHighLoad) {
  // Keys drawn from `cap` keys (at most 80% load of live flows, more with idle ones not yet swept),
  // idle timeout about the mean gap between two touches of a key: inserts, lookups, erases,
  // lazy and swept expiry all happen, checked against a model of the live flows.
  std::vector<uint32_t> seen;
  const uint32_t cap = 20000;
  const Nanos timeout = 30000;
  FTable t(cap, timeout, Recorder{&seen});
  struct State {
    uint32_t value;
    Nanos last;
  };
  std::unordered_map<uint32_t, State> model;
  uint64_t rng = 7;
  auto next = [&] { return (rng = rng * 6364136223846793005ULL + 1442695040888963407ULL) >> 24; };
  const auto live = [&](uint32_t i, Nanos now) {
    auto it = model.find(i);
    if (it == model.end()) return false;
    if (now - it->second.last <= timeout) return true;
    model.erase(it);  // idle: the table must not return it either
    return false;
  };
  bool ins;
  Nanos now = 0;
  for (int op = 0; op < 300000; ++op) {
    if (op == 150000) now += 2 * timeout;  // everything idles out at once
    ++now;
    const uint64_t r = next();
    const uint32_t i = uint32_t(r % cap);
    const FlowKey k = key_of(i);
    const uint64_t h = t.hash(k);
    const bool was = live(i, now);
    switch (r / cap % 20) {
      case 0:  // erase
        if (const uint32_t s = t.find(k, h, now, false); s != t.kNone) {
          ASSERT_TRUE(was) << op;
          t.erase(s);
          model.erase(i);
        } else {
          ASSERT_FALSE(was) << op;
        }
        break;
      case 1:
        t.sweep(now, FTable::kSweepPerBurst);
        break;
      case 2:
      case 3:
      case 4: {  // lookup, touching or not
        const bool touch = r % 2;
        const uint32_t s = t.find(k, h, now, touch);
        ASSERT_EQ(s != t.kNone, was) << op;
        if (s == t.kNone) break;
        ASSERT_EQ(t.at(s).value, model[i].value) << op;
        if (touch) model[i].last = now;
        break;
      }
      default: {
        const uint32_t s = t.find_or_insert(k, h, now, ins);
        ASSERT_NE(s, t.kNone) << op << " live " << model.size();
        ASSERT_EQ(ins, !was) << op;
        if (ins) t.at(s).value = uint32_t(r);
        ASSERT_EQ(t.at(s).value, was ? model[i].value : uint32_t(r)) << op;
        model[i] = State{t.at(s).value, now};
      }
    }
    if (op % 10000 == 0) {  // the table holds the live flows (and idle ones not yet removed)
      size_t alive = 0;
      for (uint32_t j = 0; j < cap; ++j) alive += live(j, now);
      ASSERT_GE(t.size(), alive) << op;
      ASSERT_EQ(overflow_total(t), spilled(t)) << op;
    }
  }
  EXPECT_EQ(t.insert_failed(), 0u);
  EXPECT_EQ(seen.size(), t.expired_count());
  EXPECT_GT(t.expired_count(), size_t(cap / 2));  // the jump alone expires thousands
  for (uint32_t j = 0; j < cap; ++j) {
    const bool was = live(j, now);
    ASSERT_EQ(t.find(key_of(j), t.hash(key_of(j)), now, false) != t.kNone, was) << j;
  }
}

}  // namespace
}  // namespace nfpark::nf
