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
