// KeyedPermutation (keyed_perm.h) and the per-run secret (secret.h): bijections on every width in
// use, keyed (another key, another permutation), inverses; hex keys, OS keys, derived keys.
#include "park/keyed_perm.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "park/secret.h"

namespace nfpark::park {
namespace {

Key128 key_of(uint8_t b) {
  Key128 k{};
  k.fill(b);
  return k;
}

TEST(KeyedPermutation, IsABijectionOnSmallWidthsWithItsInverse) {
  for (uint32_t bits : {2u, 3u, 7u, 12u, 13u, 16u}) {
    KeyedPermutation p(bits, key_of(1));
    std::vector<bool> seen(size_t(1) << bits);
    for (uint64_t x = 0; x < (uint64_t(1) << bits); ++x) {
      const uint64_t y = p(x);
      ASSERT_LT(y, uint64_t(1) << bits) << bits;
      EXPECT_FALSE(seen[y]) << "bits " << bits << ": two inputs map to " << y;
      seen[y] = true;
      EXPECT_EQ(p.inverse(y), x);
    }
  }
}

TEST(KeyedPermutation, WideWidthsInvertAndDependOnTheKey) {
  for (uint32_t bits : {32u, 33u, 44u, 56u, 64u}) {
    KeyedPermutation a(bits, key_of(1)), b(bits, key_of(2));
    int same = 0, plus_one = 0;
    for (uint64_t x = 1; x < 2000; ++x) {
      EXPECT_EQ(a.inverse(a(x)), x) << bits;
      same += a(x) == b(x);
      plus_one += a(x + 1) == a(x) + 1;
    }
    EXPECT_EQ(same, 0) << bits << ": another key gives another permutation";
    EXPECT_EQ(plus_one, 0) << bits << ": consecutive counters give unrelated values";
  }
}

TEST(KeyedPermutation, SixteenBitsDifferByKey) {
  KeyedPermutation a(16, key_of(1)), b(16, key_of(2));
  int same = 0;
  for (uint64_t x = 0; x < 65536; ++x) same += a(x) == b(x);
  EXPECT_LT(same, 20);  // ~1 expected by chance
}

TEST(Secret, ParsesHexAndRejectsTheRest) {
  Key128 k{};
  ASSERT_TRUE(parse_key_hex("000102030405060708090a0b0c0d0E0F", k));
  for (int i = 0; i < 16; ++i) EXPECT_EQ(k[size_t(i)], i);
  EXPECT_FALSE(parse_key_hex("00", k));
  EXPECT_FALSE(parse_key_hex("000102030405060708090a0b0c0d0e0g", k));
  EXPECT_FALSE(parse_key_hex("000102030405060708090a0b0c0d0e0f00", k));
}

TEST(Secret, OsKeysDifferAndDerivedKeysAreSeparate) {
  Key128 a{}, b{};
  std::string err;
  ASSERT_TRUE(os_random_key(a, err)) << err;
  ASSERT_TRUE(os_random_key(b, err)) << err;
  EXPECT_NE(a, b);
  EXPECT_NE(a, Key128{});
  const Key128 s = key_of(7);
  EXPECT_EQ(derive_key(s, kLabelParkTag), derive_key(s, kLabelParkTag)) << "deterministic";
  EXPECT_NE(derive_key(s, kLabelParkTag), derive_key(s, kLabelQueueMemTag));
  EXPECT_NE(derive_key(s, kLabelParkTag), derive_key(key_of(8), kLabelParkTag));
  EXPECT_NE(derive_key(s, kLabelParkTag), s);
}

// Pinned values: tests/e2e/forge.py re-implements the derivation (to craft valid-looking tags)
// and checks the same numbers.
TEST(Secret, DerivationIsPinned) {
  Key128 s{};
  ASSERT_TRUE(parse_key_hex("000102030405060708090a0b0c0d0e0f", s));
  const Key128 k = derive_key(s, "nfpark/payloadpark-tag");
  uint64_t lo = 0;
  for (int i = 7; i >= 0; --i) lo = lo << 8 | k[size_t(i)];
  std::vector<uint8_t> msg{'n', 'f', 'p', 'a', 'r', 'k', '/', 'p', 'a', 'y', 'l', 'o',
                           'a', 'd', 'p', 'a', 'r', 'k', '-', 't', 'a', 'g', 0x01};
  EXPECT_EQ(lo, siphash24(s, msg.data(), msg.size()));
}

TEST(SipHash, InlineFormsMatchTheByteForm) {
  const Key128 k = key_of(0x5A);
  const SipKey sk = SipKey::from(k);
  const uint64_t w0 = 0x0123456789ABCDEFull, w1 = 0xFEDCBA9876543210ull;
  uint8_t b[16];
  std::memcpy(b, &w0, 8);
  std::memcpy(b + 8, &w1, 8);
  EXPECT_EQ(sip24_1(sk, w0), siphash24(k, b, 8));
  EXPECT_EQ(sip24_2(sk, w0, w1), siphash24(k, b, 16));
}

}  // namespace
}  // namespace nfpark::park
