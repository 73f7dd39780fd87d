// The circular log and its index: what is found is what was last put, FIFO eviction is counted
// exactly, the lossy index drops its oldest entry, and re-appending keeps read items alive
// without ever overwriting a value a reply still copies from.
#include "kvs/item_store.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "core/flow_key.h"

namespace nfpark::kvs {
namespace {

struct Lost final : ItemStore::Listener {
  void lost(uint32_t slot) override { slots.push_back(slot); }
  std::vector<uint32_t> slots;
};

uint64_t H(const std::string& k) {
  return hash_bytes(k.data(), k.size());
}
std::string value(const ItemStore& s, uint32_t pos) {
  return {reinterpret_cast<const char*>(s.data(pos)), s.header(pos).nbytes};
}
uint32_t put(ItemStore& s, const std::string& k, const std::string& v, uint64_t cas = 1) {
  return s.put(k, H(k), 3, 0, cas, reinterpret_cast<const uint8_t*>(v.data()), uint32_t(v.size()));
}

TEST(ItemStore, PutFindOverwriteErase) {
  ItemStore s(1 << 16, 1024, nullptr);
  const uint32_t p = put(s, "a", "one\r\n");
  EXPECT_EQ(s.find("a", H("a")), p);
  EXPECT_EQ(value(s, p), "one\r\n");
  EXPECT_EQ(s.header(p).flags, 3u);
  EXPECT_EQ(put(s, "a", "two!\r\n", 2), p) << "an overwrite keeps the entry";
  EXPECT_EQ(value(s, p), "two!\r\n");
  EXPECT_EQ(s.header(p).cas, 2u);
  EXPECT_EQ(s.items(), 1u);
  s.erase(p);
  EXPECT_EQ(s.find("a", H("a")), ItemStore::kNotFound);
  EXPECT_EQ(s.items(), 0u);
}

TEST(ItemStore, FifoEvictionCountsEveryLiveItemOverwritten) {
  Lost lost;
  ItemStore s(4096, 1024, &lost);
  const std::string v(100 - 2, 'v');
  const uint64_t rec = ItemStore::record_size(2, 100);
  int n = 0;
  for (; n < 200; ++n) put(s, "k" + std::to_string(n % 100), v + "\r\n");
  // Exactly the items that fit in the log are left; every other one was evicted once.
  const uint64_t fit = 4096 / rec;
  uint64_t found = 0;
  for (int i = 0; i < 100; ++i)
    found += s.find("k" + std::to_string(i), H("k" + std::to_string(i))) != ItemStore::kNotFound;
  EXPECT_LE(found, fit);
  EXPECT_GE(found, fit - 1);
  EXPECT_EQ(s.items(), found);
  EXPECT_LE(s.live_bytes(), s.capacity());
  // Every put past the first `fit` wrote over the oldest live record: a distinct key each time.
  EXPECT_EQ(s.counters().evictions, 200 - found);
}

TEST(ItemStore, HotEntriesLostOnEvictionAreReported) {
  Lost lost;
  ItemStore s(2048, 1024, &lost);
  const uint32_t p = put(s, "hot", "x\r\n");
  s.set_hot(p, 5);
  for (int i = 0; i < 100; ++i) put(s, "c" + std::to_string(i), std::string(60, 'c') + "\r\n");
  EXPECT_EQ(s.find("hot", H("hot")), ItemStore::kNotFound);
  EXPECT_EQ(lost.slots, std::vector<uint32_t>{5});
}

TEST(ItemStore, FullBucketDropsItsOldestEntry) {
  Lost lost;
  ItemStore s(1 << 20, 8, &lost);  // one bucket of 8 ways
  for (int i = 0; i < 9; ++i) put(s, "k" + std::to_string(i), "v\r\n");
  EXPECT_EQ(s.counters().index_evictions, 1u);
  EXPECT_EQ(s.find("k0", H("k0")), ItemStore::kNotFound);
  EXPECT_NE(s.find("k8", H("k8")), ItemStore::kNotFound);
  EXPECT_EQ(s.items(), 8u);
}

TEST(ItemStore, ReinsertKeepsReadItemsButNeverOverwritesAKeptValue) {
  ItemStore s(8192, 1024, nullptr);
  const std::string f(50, 'f');
  for (int i = 0; i < 300; ++i) put(s, "w" + std::to_string(i), f + "\r\n");  // wrapped: full
  const uint32_t p = put(s, "keep", std::string(30, 'k') + "\r\n");
  const uint64_t off = s.offset(p);
  int i = 0;
  while (i < 1000) {
    // Fill until "keep" is in the oldest quarter of a full log, one record from eviction.
    const uint64_t head = s.offset(put(s, "g" + std::to_string(i++), f + "\r\n"));
    if (head - off > 8192 - 2 * ItemStore::record_size(4, 52)) break;
  }
  ASSERT_NE(s.find("keep", H("keep")), ItemStore::kNotFound);
  s.maybe_reinsert(p, off);  // a reply copies from this record: moving it would evict it
  EXPECT_EQ(s.offset(p), off);
  EXPECT_EQ(s.counters().reinserts, 0u);
  s.maybe_reinsert(p, ~0ull);
  EXPECT_GT(s.offset(p), off);
  EXPECT_EQ(s.counters().reinserts, 1u);
  EXPECT_EQ(value(s, p), std::string(30, 'k') + "\r\n") << "copied before its old bytes went";
  for (int j = 0; j < 60; ++j) put(s, "h" + std::to_string(j), f + "\r\n");
  EXPECT_NE(s.find("keep", H("keep")), ItemStore::kNotFound) << "moved ahead of the fill";
}

TEST(ItemStore, RandomOpsMatchAModelOfWhatSurvives) {
  Lost lost;
  ItemStore s(64 << 10, 4096, &lost);
  std::mt19937_64 rng(11);
  std::map<std::string, std::string> model;
  for (int it = 0; it < 50000; ++it) {
    const std::string k = "key" + std::to_string(rng() % 300);
    const uint32_t op = uint32_t(rng() % 10);
    const uint32_t pos = s.find(k, H(k));
    if (op < 6) {
      std::string v(rng() % 700, char('a' + rng() % 26));
      v += "\r\n";
      put(s, k, v);
      model[k] = v;
    } else if (op < 8) {
      if (pos != ItemStore::kNotFound) {
        ASSERT_TRUE(model.count(k)) << "found an item never put: " << k;
        ASSERT_EQ(value(s, pos), model[k]) << "a stale or torn value for " << k;
        s.maybe_reinsert(pos, ~0ull);
        ASSERT_EQ(value(s, pos), model[k]);
      }
    } else if (pos != ItemStore::kNotFound) {
      s.erase(pos);
      model.erase(k);
    }
  }
  uint64_t found = 0;
  for (auto& [k, v] : model) {
    const uint32_t pos = s.find(k, H(k));
    if (pos == ItemStore::kNotFound) continue;  // evicted: allowed
    ++found;
    EXPECT_EQ(value(s, pos), v);
  }
  EXPECT_EQ(found, s.items());
  EXPECT_GT(s.counters().evictions, 0u);
}

}  // namespace
}  // namespace nfpark::kvs
