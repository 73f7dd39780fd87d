#include "nf/lpm.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <vector>

#include "nf/lpm_prefix.h"

namespace nfpark::nf {
namespace {

uint32_t look4(const Lpm& t, const char* a) {
  uint8_t b[4];
  inet_pton(AF_INET, a, b);
  return t.lookup(b);
}
uint32_t look6(const Lpm& t, const char* a) {
  uint8_t b[16];
  inet_pton(AF_INET6, a, b);
  return t.lookup(b);
}
void add(Lpm& t, const char* prefix, uint32_t v) {
  IpPrefix p;
  std::string e;
  ASSERT_TRUE(parse_prefix(prefix, p, e)) << e;
  ASSERT_TRUE(t.insert(p.addr.data(), p.len, v));
}

TEST(Lpm, Ipv4LongestPrefixWinsInAnyInsertionOrder) {
  for (int order = 0; order < 2; ++order) {
    Lpm t(4);
    const char* prefixes[] = {"0.0.0.0/0",   "10.0.0.0/8",    "10.1.0.0/16",
                              "10.1.2.0/24", "10.1.2.128/25", "10.1.2.3/32"};
    for (int i = 0; i < 6; ++i) {
      int k = order == 0 ? i : 5 - i;
      add(t, prefixes[k], uint32_t(k));
    }
    EXPECT_EQ(look4(t, "192.168.0.1"), 0u);
    EXPECT_EQ(look4(t, "10.200.0.1"), 1u);
    EXPECT_EQ(look4(t, "10.1.9.9"), 2u);
    EXPECT_EQ(look4(t, "10.1.2.4"), 3u);
    EXPECT_EQ(look4(t, "10.1.2.200"), 4u);
    EXPECT_EQ(look4(t, "10.1.2.3"), 5u);
    EXPECT_EQ(look4(t, "10.1.2.2"), 3u);
  }
}

TEST(Lpm, MissWithoutDefaultAndShortPrefixesAcrossTheRoot) {
  Lpm t(4);
  add(t, "172.16.0.0/12", 7);
  EXPECT_EQ(look4(t, "172.31.255.255"), 7u);
  EXPECT_EQ(look4(t, "172.32.0.0"), Lpm::kNoRoute);
  EXPECT_EQ(look4(t, "172.15.255.255"), Lpm::kNoRoute);
  EXPECT_EQ(t.groups(), 0u);  // /12 expands in the root only
}

// Every lookup against a brute-force longest match, on routes dense enough to build 3-level
// IPv4 walks (a few /8s, lengths 0..32) and keys near them: guards the branch-free IPv4 walk.
TEST(Lpm, Ipv4MatchesBruteForceOnDenseRandomRoutes) {
  uint64_t s = 12345;
  auto rnd = [&] { return s = s * 6364136223846793005ULL + 1442695040888963407ULL, s >> 33; };
  struct R {
    uint32_t addr;
    int len;
    uint32_t v;
  };
  std::vector<R> routes;
  Lpm t(4, 16);  // the 16-8-8 walk (auto mode would widen; lpm_stride_test covers that)
  for (uint32_t i = 0; i < 3000; ++i) {
    const int len = int(rnd() % 33);
    uint32_t a = uint32_t(10 + rnd() % 3) << 24 | uint32_t(rnd() & 0xFFFFFF);
    a = len == 0 ? 0 : a & ~0u << (32 - len);
    const uint8_t b[4] = {uint8_t(a >> 24), uint8_t(a >> 16), uint8_t(a >> 8), uint8_t(a)};
    ASSERT_TRUE(t.insert(b, len, i));
    routes.push_back({a, len, i});
  }
  for (int k = 0; k < 20000; ++k) {
    uint32_t a = uint32_t(rnd()) << 1 ^ uint32_t(rnd());
    if (k % 4) a = (routes[rnd() % routes.size()].addr & 0xFFFFFF00u) | (a & 0xFF);
    uint32_t want = Lpm::kNoRoute;
    int best = -1;
    for (const R& r : routes)  // longest wins; equal prefixes: the last insert
      if ((r.len == 0 || (a ^ r.addr) >> (32 - r.len) == 0) && r.len >= best)
        best = r.len, want = r.v;
    const uint8_t b[4] = {uint8_t(a >> 24), uint8_t(a >> 16), uint8_t(a >> 8), uint8_t(a)};
    ASSERT_EQ(t.lookup(b), want) << "key " << a;
  }
}

TEST(Lpm, Ipv6Prefixes) {
  Lpm t(16);
  add(t, "::/0", 1);
  add(t, "2001:db8::/32", 2);
  add(t, "2001:db8:1::/48", 3);
  add(t, "2001:db8:1::42/128", 4);
  add(t, "2001:db8:1:0:8000::/65", 5);
  EXPECT_EQ(look6(t, "fe80::1"), 1u);
  EXPECT_EQ(look6(t, "2001:db8:ffff::1"), 2u);
  EXPECT_EQ(look6(t, "2001:db8:1::41"), 3u);
  EXPECT_EQ(look6(t, "2001:db8:1::42"), 4u);
  EXPECT_EQ(look6(t, "2001:db8:1:0:8000::9"), 5u);
}

// mask_prefix against a bit-by-bit reference, every length from -1 to past the end, both widths.
TEST(LpmPrefix, MaskKeepsExactlyTheFirstLenBits) {
  for (int bytes : {4, 16}) {
    for (int len = -1; len <= 8 * bytes + 1; ++len) {
      uint8_t a[16], want[16];
      for (int i = 0; i < 16; ++i) a[i] = want[i] = uint8_t(0xA5 ^ (i * 37));
      for (int bit = 0; bit < 8 * bytes; ++bit)
        if (bit >= len) want[bit / 8] &= uint8_t(~(0x80 >> (bit % 8)));
      mask_prefix(a, bytes, len);
      for (int i = 0; i < 16; ++i) ASSERT_EQ(a[i], want[i]) << bytes << " " << len << " " << i;
    }
  }
}

TEST(LpmPrefix, ParsesAndRejects) {
  IpPrefix p;
  std::string e;
  EXPECT_TRUE(parse_prefix("10.1.2.3/8", p, e));
  EXPECT_EQ(p.family, 4);
  EXPECT_EQ(p.addr[1], 0);  // host bits cleared
  EXPECT_TRUE(parse_prefix("any", p, e));
  EXPECT_EQ(p.family, 0);
  EXPECT_FALSE(parse_prefix("10.0.0.0/33", p, e));
  EXPECT_NE(e.find("prefix length"), std::string::npos);
  EXPECT_FALSE(parse_prefix("10.0.0/8", p, e));
  MacAddr m;
  EXPECT_TRUE(parse_mac("02:00:00:00:00:0a", m, e));
  EXPECT_EQ(m[5], 0x0a);
  EXPECT_FALSE(parse_mac("02:00:00:00:00", m, e));
}

}  // namespace
}  // namespace nfpark::nf
