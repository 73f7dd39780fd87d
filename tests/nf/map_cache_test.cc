// MapCache: a kept mapping comes back reading zero (only the pages written were backed and
// zeroed), of the same kind and a fitting size; the bound holds (oldest evicted first, a mapping
// larger than the bound unmapped at once); two threads taking and putting at once; HugeArray
// built again reuses its predecessor's mapping and still reads zero where it never wrote.
#include "nf/map_cache.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "nf/huge_array.h"

namespace nfpark::nf {
namespace {

constexpr size_t kPage = 4096, kMiB = size_t(1) << 20;

uint8_t* map(size_t len) {
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  return static_cast<uint8_t*>(p);
}

bool all_zero(const uint8_t* p, size_t len) {
  for (size_t i = 0; i < len; ++i)
    if (p[i]) return false;
  return true;
}

size_t resident_pages(uint8_t* p, size_t len) {
  std::vector<unsigned char> v(len / kPage);
  EXPECT_EQ(mincore(p, len, v.data()), 0);
  size_t n = 0;
  for (unsigned char c : v) n += c & 1;
  return n;
}

TEST(MapCache, ReuseReturnsTheMappingZeroed) {
  MapCache c(8 * kMiB);
  uint8_t* p = map(kMiB);
  std::memset(p, 0xA5, kMiB);
  c.put(p, kMiB, false, kMiB);
  EXPECT_EQ(c.bytes(), kMiB);
  EXPECT_EQ(c.count(), 1u);
  EXPECT_EQ(c.take(kMiB, true), nullptr);           // another kind
  EXPECT_EQ(c.take(kMiB + kPage, false), nullptr);  // too small
  uint8_t* q = static_cast<uint8_t*>(c.take(kMiB / 2, false));
  ASSERT_EQ(q, p);
  EXPECT_EQ(c.bytes(), kMiB / 2);  // the rest stays kept
  EXPECT_EQ(c.count(), 1u);
  EXPECT_FALSE(c.take_at(q + kPage, kPage, false));                // not where a kept one starts
  EXPECT_FALSE(c.take_at(q + kMiB / 2, kMiB / 2 + kPage, false));  // too long
  EXPECT_TRUE(c.take_at(q + kMiB / 2, kMiB / 2, false));           // growing in place
  EXPECT_EQ(c.bytes(), 0u);
  EXPECT_EQ(c.count(), 0u);
  EXPECT_TRUE(all_zero(q, kMiB));
  EXPECT_EQ(resident_pages(q, kMiB), kMiB / kPage);  // still backed: no fault on reuse
  munmap(q, kMiB);
}

// Past `written` nothing is zeroed; below it only resident pages are, so a sparse array's
// untouched pages stay unbacked.
TEST(MapCache, ZeroesOnlyWhatWasWrittenAndLeavesUnbackedPagesAlone) {
  MapCache c(8 * kMiB);
  uint8_t* p = map(64 * kPage);
  p[3 * kPage + 5] = 1;
  p[40 * kPage] = 2;
  (void)*static_cast<volatile uint8_t*>(p + 20 * kPage);  // read only: the kernel's zero page
  c.put(p, 64 * kPage, false, 64 * kPage);
  const size_t len = 64 * kPage;
  uint8_t* q = static_cast<uint8_t*>(c.take(len, false));
  ASSERT_EQ(q, p);
  EXPECT_LE(resident_pages(q, len), 3u);  // pages 3, 40 (and 20, the zero page)
  EXPECT_TRUE(all_zero(q, len));
  munmap(q, len);
}

TEST(MapCache, BestFitAndBoundRespectedOldestEvictedFirst) {
  MapCache c(4 * kMiB);
  uint8_t *a = map(2 * kMiB), *b = map(kMiB), *d = map(kMiB);
  c.put(a, 2 * kMiB, false, 0);
  c.put(b, kMiB, false, 0);
  c.put(d, kMiB, false, 0);
  EXPECT_EQ(c.bytes(), 4 * kMiB);
  // Past the bound: the oldest (`a`) would go, but it is larger, so the new one is unmapped.
  uint8_t* e = map(kMiB);
  c.put(e, kMiB, false, kMiB);
  EXPECT_EQ(c.bytes(), 4 * kMiB);
  EXPECT_EQ(c.count(), 3u);
  unsigned char v = 0;
  EXPECT_NE(mincore(e, kPage, &v), 0);  // ENOMEM: no longer mapped
  // Best fit: the smallest mapping that holds what is asked.
  uint8_t* g = static_cast<uint8_t*>(c.take(kMiB, false));
  EXPECT_TRUE(g == b || g == d);
  munmap(g, kMiB);
  EXPECT_EQ(c.take(2 * kMiB, false), a);  // 1 MiB kept now
  // Three mappings again, then one past the bound that evicts the oldest (no larger than it).
  uint8_t *f = map(2 * kMiB), *h = map(kMiB);
  uint8_t* left = g == b ? d : b;
  c.put(a, 2 * kMiB, false, 0);  // kept: `left` 1 MiB (oldest), a 2 MiB
  c.put(f, 2 * kMiB, false, 0);  // 5 MiB: `left` goes
  EXPECT_EQ(c.bytes(), 4 * kMiB);
  EXPECT_EQ(c.count(), 2u);
  EXPECT_NE(mincore(left, kPage, &v), 0);
  c.put(h, kMiB, false, 0);  // would evict `a` (2 MiB): unmapped instead
  EXPECT_EQ(c.count(), 2u);
  EXPECT_EQ(c.bytes(), 4 * kMiB);
  EXPECT_NE(mincore(h, kPage, &v), 0);
}

TEST(MapCache, AMappingLargerThanTheBoundIsUnmapped) {
  MapCache c(kMiB);
  uint8_t* p = map(2 * kMiB);
  p[0] = 1;
  c.put(p, 2 * kMiB, false, 2 * kMiB);
  EXPECT_EQ(c.bytes(), 0u);
  EXPECT_EQ(c.count(), 0u);
  unsigned char v = 0;
  EXPECT_NE(mincore(p, kPage, &v), 0);  // ENOMEM: no longer mapped
  MapCache off(0);                      // bound 0: nothing kept
  uint8_t* q = map(kPage);
  off.put(q, kPage, false, kPage);
  EXPECT_EQ(off.count(), 0u);
}

TEST(MapCache, TwoThreadsTakeAndPutAtOnce) {
  MapCache c(2 * kMiB);
  std::atomic<int> dirty{0};
  auto work = [&](uint8_t tag) {
    for (int i = 0; i < 300; ++i) {
      const size_t want = kPage * size_t(1 + (i * 7 + tag) % 64);
      auto* p = static_cast<uint8_t*>(c.take(want, false));
      if (!p) p = map(want);
      if (!all_zero(p, want)) ++dirty;
      std::memset(p, tag, want);
      c.put(p, want, false, want);
    }
  };
  std::thread t1(work, uint8_t(1)), t2(work, uint8_t(2));
  t1.join(), t2.join();
  EXPECT_EQ(dirty.load(), 0);
  EXPECT_LE(c.bytes(), c.bound());
  EXPECT_LE(c.count(), MapCache::kMaxKept);
}

// A HugeArray freed and made again (a table rebuilt) lands in the same mapping, reading zero
// where it never wrote and the fill where it grows with one.
TEST(MapCache, HugeArrayRebuiltReusesTheMapping) {
  if (HugeArray<uint32_t>::kHeap || MapCache::global().bound() < 8 * kMiB)
    GTEST_SKIP() << "heap arrays (ASan) or the cache is off";
  MapCache::global().drain();
  const uint32_t* p = nullptr;
  {
    HugeArray<uint32_t> a;
    a.resize(size_t(1) << 19, 0);  // 2 MiB: one huge mapping
    for (size_t i = 0; i < a.size(); ++i) a[i] = 0xDEADBEEF;
    p = a.data();
  }
  HugeArray<uint32_t> b;
  b.resize(size_t(1) << 18, 0);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.mapped_bytes(), 2 * kMiB);
  for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i], 0u) << i;
  b.resize(size_t(1) << 19, 7);
  for (size_t i = size_t(1) << 18; i < b.size(); ++i) ASSERT_EQ(b[i], 7u) << i;
  // Growth into a kept mapping: the pages move over its start, its tail reads zero.
  {
    HugeArray<uint32_t> big;
    big.resize(size_t(1) << 20, 0);  // 4 MiB
    for (size_t i = 0; i < big.size(); i += 1000) big[i] = 1;
  }
  b.resize(size_t(1) << 20, 0);  // 2 -> 4 MiB
  EXPECT_EQ(b[0], 0u);
  EXPECT_EQ(b[(size_t(1) << 19) - 1], 7u);
  for (size_t i = size_t(1) << 19; i < b.size(); ++i) ASSERT_EQ(b[i], 0u) << i;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % (2 * kMiB), 0u);
}

// A rebuild that grows as the previous build did (an IPv6 trie's groups: 2 MiB reserved, then
// 4 MiB) takes the first part of the kept mapping and grows in place over the rest.
TEST(MapCache, HugeArrayGrowsInPlaceOverTheRestOfItsKeptMapping) {
  if (HugeArray<uint32_t>::kHeap || MapCache::global().bound() < 8 * kMiB)
    GTEST_SKIP() << "heap arrays (ASan) or the cache is off";
  MapCache::global().drain();
  const uint32_t* p = nullptr;
  {
    HugeArray<uint32_t> a;
    a.resize(size_t(1) << 20, 5);  // 4 MiB, all written
    p = a.data();
  }
  HugeArray<uint32_t> b;
  b.reserve_for(size_t(1) << 16);  // 2 MiB of the kept 4
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.mapped_bytes(), 2 * kMiB);  // what a fresh mapping would hold
  EXPECT_EQ(MapCache::global().bytes(), 2 * kMiB);
  b.resize(size_t(1) << 19, 1);
  b.resize(size_t(3) << 18, 0);  // 3 MiB: grows in place
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.mapped_bytes(), 4 * kMiB);
  EXPECT_EQ(MapCache::global().bytes(), 0u);
  EXPECT_EQ(b[(size_t(1) << 19) - 1], 1u);
  for (size_t i = size_t(1) << 19; i < b.size(); ++i) ASSERT_EQ(b[i], 0u) << i;
}

}  // namespace
}  // namespace nfpark::nf
