// HugeArray: growth keeps contents, new elements get the fill (zero or not), moves transfer
// ownership, and big arrays are 2 MiB-aligned so transparent huge pages can back them.
#include "nf/huge_array.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace nfpark::nf {
namespace {

TEST(HugeArray, GrowthKeepsContentsAndFillsNewElements) {
  HugeArray<uint32_t> a;
  EXPECT_EQ(a.size(), 0u);
  a.resize(100, 7);
  for (size_t i = 0; i < 100; ++i) a[i] = uint32_t(i);
  a.resize(3000, 0);        // grows (new mapping): old contents copied, new ones zero
  a.resize(1 << 20, 0xAB);  // 4 MiB: the huge-page path, non-zero fill
  for (size_t i = 0; i < 100; ++i) ASSERT_EQ(a[i], i);
  for (size_t i = 100; i < 3000; ++i) ASSERT_EQ(a[i], 0u);
  for (size_t i = 3000; i < a.size(); ++i) ASSERT_EQ(a[i], 0xABu);
  EXPECT_GE(a.mapped_bytes(), a.size() * 4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  if (!HugeArray<uint32_t>::kHeap) {  // under ASan the array is a heap copy, 64 B aligned
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % (2u << 20), 0u);
  }
  a.resize(50, 0);  // shrink, then grow within capacity: the fill is written, not assumed
  a.resize(200, 0);
  for (size_t i = 50; i < 200; ++i) ASSERT_EQ(a[i], 0u) << i;
}

// Growth moves the mapping (mremap) rather than copying: every step of small -> small -> huge ->
// huge keeps what was written, the never-written tail reads zero with or without `populate`, and
// a huge array stays 2 MiB-aligned after it moved.
TEST(HugeArray, GrowthByMovingKeepsContentsAtEverySize) {
  for (bool populate : {false, true}) {
    HugeArray<uint32_t> a;
    a.populate(populate);
    size_t written = 0;
    for (size_t n : {size_t(10), size_t(1000), size_t(5000), size_t(300000), size_t(1) << 20,
                     size_t(3) << 20}) {
      a.resize(n, 0);
      for (size_t i = written; i < n; i += 97) ASSERT_EQ(a[i], 0u) << n << " " << i;
      for (size_t i = (written + 6) / 7 * 7; i < n; i += 7) a[i] = uint32_t(i * 2654435761u);
      written = n;
      for (size_t i = 0; i < n; i += 7) ASSERT_EQ(a[i], uint32_t(i * 2654435761u)) << n << " " << i;
      EXPECT_GE(a.mapped_bytes(), n * 4);
      if (!HugeArray<uint32_t>::kHeap && n * 4 >= (256u << 10)) {  // from kHugeFrom
        EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % (2u << 20), 0u) << n;
      }
    }
  }
}

// A zero fill is skipped only over elements never written: elements written, shrunk away and
// grown back over (within the capacity or past it, moving the mapping) read as the fill.
TEST(HugeArray, ZeroFillIsWrittenOverElementsWrittenBefore) {
  HugeArray<uint16_t> a;
  a.resize(3000, 0);
  for (size_t i = 0; i < 3000; ++i) a[i] = 0xBEEF;
  a.resize(10, 0);
  a.resize(2000, 0);  // within the capacity
  for (size_t i = 10; i < 2000; ++i) ASSERT_EQ(a[i], 0u) << i;
  for (size_t i = 0; i < 2000; ++i) a[i] = 0xBEEF;
  a.resize(5, 0);
  a.resize(size_t(2) << 20, 0);  // past it: the old pages move, then the fill
  for (size_t i = 5; i < 3000; ++i) ASSERT_EQ(a[i], 0u) << i;
  for (size_t i = 0; i < 5; ++i) ASSERT_EQ(a[i], 0xBEEFu);
}

// Fresh mappings (the sizes below are not those of a kept mapping MapCache may hand out).
TEST(HugeArray, SmallPagesKeepABigArrayOffTwoMegabyteRounding) {
  MapCache::global().drain();
  HugeArray<uint32_t> big, small;
  small.small_pages(true);
  big.resize(size_t(1) << 18, 0);  // 1 MiB: past kHugeFrom
  small.resize(size_t(1) << 18, 0);
  EXPECT_EQ(big.mapped_bytes(), size_t(2) << 20);  // whole 2 MiB pages
  EXPECT_EQ(small.mapped_bytes(), size_t(1) << 20);
  small[12345] = 7;
  small.resize(size_t(1) << 19, 0);  // grows on 4 KiB pages, keeps what was written
  EXPECT_EQ(small.mapped_bytes(), size_t(2) << 20);
  EXPECT_EQ(small[12345], 7u);
  EXPECT_EQ(small[(size_t(1) << 19) - 1], 0u);
}

TEST(HugeArray, ReserveForMapsWithoutGrowingAndGrowthKeepsTheContents) {
  MapCache::global().drain();  // a fresh mapping
  HugeArray<uint32_t> a;
  a.reserve_for(size_t(1) << 16);  // 256 KiB: one 2 MiB mapping, nothing written
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.mapped_bytes(), size_t(2) << 20);
  const uint32_t* p = a.data();
  a.resize(256, 9);
  a.resize(512, 0);
  EXPECT_EQ(a.data(), p);  // within the reservation: no move
  EXPECT_EQ(a[255], 9u);
  EXPECT_EQ(a[256], 0u);
  a.reserve_for(10);  // below the capacity: nothing changes
  EXPECT_EQ(a.data(), p);
  a.resize(size_t(1) << 20, 3);  // past it: grows, the contents move along
  EXPECT_EQ(a[0], 9u);
  EXPECT_EQ(a[300], 0u);
  EXPECT_EQ(a[(size_t(1) << 20) - 1], 3u);
}

TEST(HugeArray, MoveTransfersOwnership) {
  HugeArray<uint64_t> a;
  a.resize(10, 5);
  const uint64_t* p = a.data();
  HugeArray<uint64_t> b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 10u);
  EXPECT_EQ(b[9], 5u);
  HugeArray<uint64_t> c;
  c.resize(3, 1);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c[0], 5u);
}

}  // namespace
}  // namespace nfpark::nf
