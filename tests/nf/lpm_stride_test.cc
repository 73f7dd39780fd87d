// Lpm's first strides (16, 24, auto-widening) and its burst lookup against a brute-force longest
// match on random prefixes: every stride must give the same answers, one by one and in bursts.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <vector>

#include "nf/lpm.h"
#include "nf/lpm_prefix.h"

namespace nfpark::nf {
namespace {

struct Route {
  std::array<uint8_t, 16> addr{};
  int len = 0;
  uint32_t v = 0;
};

struct Rng {
  uint64_t s;
  uint64_t operator()() { return s = s * 6364136223846793005ULL + 1442695040888963407ULL, s >> 17; }
};

bool covers(const Route& r, const uint8_t* key) {
  const int full = r.len / 8, rest = r.len % 8;
  if (std::memcmp(key, r.addr.data(), size_t(full)) != 0) return false;
  return rest == 0 || ((key[full] ^ r.addr[size_t(full)]) & uint8_t(0xFF00 >> rest)) == 0;
}

// Longest match; equal prefixes: the last insert wins.
uint32_t reference(const std::vector<Route>& routes, const uint8_t* key) {
  uint32_t want = Lpm::kNoRoute;
  int best = -1;
  for (const Route& r : routes)
    if (r.len >= best && covers(r, key)) best = r.len, want = r.v;
  return want;
}

// `n` random routes of `bytes`-byte keys, lengths spread over 0..8*bytes with a BGP-like bias to
// /16-/24 (IPv4) and clustered in a few top bytes so that prefixes nest; some duplicates.
std::vector<Route> make_routes(Rng& rnd, size_t n, int bytes) {
  std::vector<Route> out(1);  // a default route, as a router has
  for (size_t i = 1; i < n; ++i) {
    Route r;
    const uint64_t pick = rnd() % 50;  // few short prefixes: each fills up to 2^24 entries
    const int max = 8 * bytes;
    r.len = pick < 20   ? 16 + int(rnd() % 9)
            : pick < 22 ? 4 + int(rnd() % 12)
                        : 8 + int(rnd() % (max - 7));
    for (auto& b : r.addr) b = uint8_t(rnd());
    r.addr[0] = uint8_t(10 + rnd() % 3);                    // nest: three top bytes only
    if (i % 7 == 6) r.addr = out[rnd() % out.size()].addr;  // same address, other length
    mask_prefix(r.addr.data(), bytes, r.len);
    r.v = uint32_t(i);
    out.push_back(r);
  }
  return out;
}

std::vector<std::array<uint8_t, 16>> make_keys(Rng& rnd, const std::vector<Route>& routes,
                                               size_t n) {
  std::vector<std::array<uint8_t, 16>> keys(n);
  for (auto& k : keys) {
    for (auto& b : k) b = uint8_t(rnd());
    if (rnd() % 5 == 0) continue;  // random key (mostly a miss or the short prefixes)
    const Route& r = routes[rnd() % routes.size()];
    for (int bit = 0; bit < r.len; ++bit) {
      const uint8_t m = uint8_t(0x80 >> (bit % 8));
      k[size_t(bit / 8)] = uint8_t((k[size_t(bit / 8)] & ~m) | (r.addr[size_t(bit / 8)] & m));
    }
  }
  return keys;
}

// `nkeys` keys aimed at `routes` (and random ones) through every lookup path of `t` against the
// brute force.
void verify(const Lpm& t, const std::vector<Route>& routes, Rng& rnd, size_t nkeys) {
  const auto keys = make_keys(rnd, routes, nkeys);
  std::vector<const uint8_t*> ptrs;
  for (const auto& k : keys) ptrs.push_back(k.data());
  std::vector<uint32_t> burst(nkeys + 1, 0xDEAD);
  // An odd count: full bursts of 32 and a partial one; the guard element stays untouched.
  t.lookup_burst(ptrs.data(), burst.data(), nkeys);
  EXPECT_EQ(burst[nkeys], 0xDEADu);
  // IPv4: the same keys as host-order words through lookup_burst_v4 (rte_lpm's bulk shape).
  std::vector<uint32_t> host(nkeys), burst4(nkeys + 1, 0xDEAD);
  for (size_t i = 0; i < nkeys; ++i)
    host[i] = uint32_t(keys[i][0]) << 24 | uint32_t(keys[i][1]) << 16 | uint32_t(keys[i][2]) << 8 |
              keys[i][3];
  if (t.key_bytes() == 4) t.lookup_burst_v4(host.data(), burst4.data(), nkeys);
  EXPECT_EQ(burst4[nkeys], 0xDEADu);
  size_t routed = 0;
  for (size_t i = 0; i < nkeys; ++i) {
    const uint32_t want = reference(routes, keys[i].data());
    ASSERT_EQ(t.lookup(keys[i].data()), want) << "key " << i << " stride " << t.first_stride();
    ASSERT_EQ(burst[i], want) << "burst key " << i << " stride " << t.first_stride();
    if (t.key_bytes() == 4) {
      ASSERT_EQ(burst4[i], want) << "v4 burst key " << i << " stride " << t.first_stride();
    }
    routed += want != Lpm::kNoRoute && want != 0;  // 0: the default route
  }
  EXPECT_GT(routed, nkeys / 2);  // the keys exercise routes, not only the default
}

void check(Lpm& t, const std::vector<Route>& routes, Rng& rnd, size_t nkeys) {
  for (const Route& r : routes) ASSERT_TRUE(t.insert(r.addr.data(), r.len, r.v));
  verify(t, routes, rnd, nkeys);
}

TEST(LpmStride, Ipv4EveryStrideMatchesBruteForceOneByOneAndInBursts) {
  for (int stride : {16, 24}) {
    Rng rnd{uint64_t(stride)};
    const auto routes = make_routes(rnd, 1500, 4);
    Lpm t(4, stride);
    check(t, routes, rnd, 4001);
    EXPECT_EQ(t.first_stride(), stride);
  }
}

TEST(LpmStride, Ipv4AutoWidensPastTheGroupThresholdAndKeepsEveryAnswer) {
  Rng rnd{77};
  // /17-/24 routes spread over the whole space: each makes its own child group under a 16-bit
  // root, so the table crosses kWidenAfterGroups; make_routes' many /25-/32s in distinct /16s
  // would make its LpmDir16 image pass 32 MiB, so it rebuilds itself with a 24-bit root.
  std::vector<Route> routes = make_routes(rnd, 600, 4);
  for (size_t i = 0; i < Lpm::kWidenAfterGroups + 500; ++i) {
    Route r;
    const uint32_t a = uint32_t(rnd());
    std::memcpy(r.addr.data(), &a, 4);
    r.len = 17 + int(rnd() % 8);
    mask_prefix(r.addr.data(), 4, r.len);
    r.v = uint32_t(routes.size());
    routes.push_back(r);
  }
  routes.push_back(routes[5]);  // an equal prefix after the rebuild: the last insert still wins
  routes.back().v = 999999;
  Lpm t(4);
  EXPECT_EQ(t.first_stride(), 16);
  check(t, routes, rnd, 3001);
  EXPECT_EQ(t.first_stride(), 24);
  EXPECT_LT(t.groups(), 700u);  // only prefixes longer than /24 keep child groups
  // Compiled: the LpmRuns image (smaller than the DIR-24-8 trie), the same answers.
  EXPECT_TRUE(t.compile());
  EXPECT_TRUE(t.runs());
  verify(t, routes, rnd, 3001);
}

TEST(LpmStride, Ipv6BurstMatchesBruteForce) {
  Rng rnd{6};
  const auto routes = make_routes(rnd, 800, 16);
  Lpm t(16);
  check(t, routes, rnd, 2001);
  EXPECT_EQ(t.first_stride(), 16);
}

// IPv6 prefixes nested around a few /32s (most child groups shared), every length from /0 to
// /128, against the brute force.
TEST(LpmStride, Ipv6NestedPrefixes) {
  Rng rnd{7};
  std::vector<std::array<uint8_t, 16>> bases(6);
  for (auto& b : bases) {
    for (auto& x : b) x = uint8_t(rnd());
    b[0] = 0x20, b[1] = 0x01, b[2] = uint8_t(rnd() % 2);  // two /24s, six /32s
  }
  std::vector<Route> routes;
  for (uint32_t i = 0; i < 1500; ++i) {
    Route r;
    r.addr = bases[rnd() % bases.size()];
    const uint64_t pick = rnd() % 10;
    r.len = pick < 6 ? 24 + int(rnd() % 49) : int(rnd() % 129);  // mostly /24-/72
    for (int k = 0; k < 3; ++k) {  // near the base: a few bits past /32 differ
      const int bit = 32 + int(rnd() % 96);
      r.addr[size_t(bit / 8)] ^= uint8_t(0x80 >> (bit % 8));
    }
    mask_prefix(r.addr.data(), 16, r.len);
    r.v = i;
    routes.push_back(r);
  }
  Lpm t(16);
  check(t, routes, rnd, 4001);
}

TEST(LpmStride, EmptyTableAndEmptyBurst) {
  Lpm t(4, 24);
  const uint8_t k[4] = {1, 2, 3, 4};
  const uint8_t* p = k;
  uint32_t out = 0;
  t.lookup_burst(&p, &out, 1);
  EXPECT_EQ(out, Lpm::kNoRoute);
  t.lookup_burst(&p, &out, 0);
  EXPECT_EQ(out, Lpm::kNoRoute);
  const uint32_t a = 0x01020304;
  out = 7;
  t.lookup_burst_v4(&a, &out, 1);
  EXPECT_EQ(out, Lpm::kNoRoute);
}

}  // namespace
}  // namespace nfpark::nf
