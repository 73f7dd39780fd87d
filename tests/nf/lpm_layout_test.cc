// Every IPv4 layout of Lpm (the LpmDir16 and LpmRuns images, the 16-8-8 staged walk, DIR-24-8,
// auto) against a brute-force longest match on random route sets: every prefix length 0..32,
// nested and duplicate prefixes, routes added in steps with lookups in between (through the trie,
// then through the image compiled), random addresses and addresses aimed at each prefix's first
// and last address and at the addresses just outside it. Also the layout rule: which layout a
// table's shape gets, and LpmRuns alone on hand-made node shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "nf/lpm.h"
#include "nf/lpm_dir16.h"
#include "nf/lpm_runs.h"

namespace nfpark::nf {
namespace {

struct Route {
  uint32_t addr;  // host order, masked
  int len;
  uint32_t v;
};

struct Rng {
  uint64_t s;
  uint32_t operator()() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return uint32_t(s >> 32);
  }
};

uint32_t mask(int len) {
  return len == 0 ? 0 : ~0u << (32 - len);
}

// Longest match; equal prefixes: the last insert wins.
uint32_t reference(const std::vector<Route>& routes, uint32_t a) {
  uint32_t want = Lpm::kNoRoute;
  int best = -1;
  for (const Route& r : routes)
    if (r.len >= best && (a & mask(r.len)) == r.addr) best = r.len, want = r.v;
  return want;
}

// `n` routes: lengths 0..32 (uniform but fewer below /12, plus extra /16-/24), clustered under a
// few /8s and /16s so that they nest; every 9th repeats an earlier prefix (same or another length,
// new value).
std::vector<Route> make_routes(Rng& rnd, size_t n, uint32_t value_base) {
  std::vector<Route> out;
  const uint32_t tops[3] = {0x0A000000u, 0xC0A80000u, 0x64400000u};
  for (size_t i = 0; i < n; ++i) {
    Route r;
    r.len = rnd() % 3 == 0 ? 16 + int(rnd() % 9) : int(rnd() % 33);
    if (r.len < 12 && rnd() % 4 != 0) r.len += 12;  // short prefixes rarer: each fills 2^(24-len)
    r.addr = rnd();
    if (rnd() % 4 != 0) r.addr = tops[rnd() % 3] | (r.addr & (rnd() % 2 ? 0x00FFFFFFu : 0xFFFFu));
    if (i % 9 == 8 && !out.empty()) r.addr = out[rnd() % out.size()].addr;
    r.addr &= mask(r.len);
    r.v = value_base + uint32_t(i);
    out.push_back(r);
  }
  return out;
}

// Random addresses and, for every route, its first and last address and their outer neighbours.
std::vector<uint32_t> make_addrs(Rng& rnd, const std::vector<Route>& routes, size_t random) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < random; ++i) out.push_back(rnd());
  for (const Route& r : routes) {
    const uint32_t last = r.addr | ~mask(r.len);
    for (uint32_t a : {r.addr, last, r.addr - 1, last + 1, r.addr | (rnd() & ~mask(r.len))})
      out.push_back(a);
  }
  return out;
}

std::vector<uint32_t> answers(const std::vector<Route>& routes,
                              const std::vector<uint32_t>& addrs) {
  std::vector<uint32_t> want;
  for (uint32_t a : addrs) want.push_back(reference(routes, a));
  return want;
}

// Every address one by one, through lookup_burst_v4 and through lookup_burst gives `want`.
void expect_all(const Lpm& t, const std::vector<uint32_t>& addrs, const std::vector<uint32_t>& want,
                const char* what) {
  std::vector<uint32_t> burst(addrs.size() + 1, 0xDEAD);
  t.lookup_burst_v4(addrs.data(), burst.data(), addrs.size());
  ASSERT_EQ(burst.back(), 0xDEADu);
  std::vector<std::array<uint8_t, 4>> be(addrs.size());
  std::vector<const uint8_t*> keys(addrs.size());
  for (size_t i = 0; i < addrs.size(); ++i) {
    const uint32_t a = addrs[i];
    be[i] = {uint8_t(a >> 24), uint8_t(a >> 16), uint8_t(a >> 8), uint8_t(a)};
    keys[i] = be[i].data();
  }
  std::vector<uint32_t> ptrs(addrs.size());
  t.lookup_burst(keys.data(), ptrs.data(), keys.size());
  for (size_t i = 0; i < addrs.size(); ++i) {
    ASSERT_EQ(t.lookup(keys[i]), want[i])
        << what << " one by one, address " << std::hex << addrs[i];
    ASSERT_EQ(burst[i], want[i]) << what << " lookup_burst_v4, address " << std::hex << addrs[i];
    ASSERT_EQ(ptrs[i], want[i]) << what << " lookup_burst, address " << std::hex << addrs[i];
  }
}

// Inserts `routes` in steps, checking every address after each step: first through the trie
// (an insert makes the image stale), then after compile() (through the image if it was built).
void grow_and_check(Lpm& t, const std::vector<Route>& routes, Rng& rnd, const char* what) {
  std::vector<Route> in;
  const size_t steps[] = {1, 7, 40, 150, routes.size()};
  for (size_t upto : steps) {
    while (in.size() < std::min(upto, routes.size())) {
      const Route& r = routes[in.size()];
      const uint8_t b[4] = {uint8_t(r.addr >> 24), uint8_t(r.addr >> 16), uint8_t(r.addr >> 8),
                            uint8_t(r.addr)};
      ASSERT_TRUE(t.insert(b, r.len, r.v));
      in.push_back(r);
    }
    ASSERT_FALSE(t.dir16());
    ASSERT_FALSE(t.runs());
    const auto addrs = make_addrs(rnd, in, 500);
    const auto want = answers(in, addrs);
    ASSERT_NO_FATAL_FAILURE(expect_all(t, addrs, want, what));
    t.compile();
    ASSERT_NO_FATAL_FAILURE(expect_all(t, addrs, want, what));
  }
}

TEST(LpmLayout, EveryLayoutMatchesBruteForceWhileRoutesGoIn) {
  for (uint64_t seed : {1, 2}) {
    Rng rnd{seed};
    const auto routes = make_routes(rnd, 300, 1);
    Lpm image(4, 16), wide(4, 24), autom(4);
    ASSERT_NO_FATAL_FAILURE(grow_and_check(image, routes, rnd, "dir16 image"));
    EXPECT_TRUE(image.dir16());
    ASSERT_NO_FATAL_FAILURE(grow_and_check(wide, routes, rnd, "DIR-24-8"));
    EXPECT_FALSE(wide.dir16());
    ASSERT_NO_FATAL_FAILURE(grow_and_check(autom, routes, rnd, "auto"));
    EXPECT_TRUE(autom.dir16());
    // Values past 15 bits: the 16-bit root without the image (the staged 16-8-8 walk).
    const auto big = make_routes(rnd, 300, LpmDir16::kMaxValue);
    Lpm staged(4, 16);
    ASSERT_NO_FATAL_FAILURE(grow_and_check(staged, big, rnd, "16-8-8 staged"));
    EXPECT_FALSE(staged.dir16());
  }
}

void insert(Lpm& t, const Route& r) {
  const uint8_t b[4] = {uint8_t(r.addr >> 24), uint8_t(r.addr >> 16), uint8_t(r.addr >> 8),
                        uint8_t(r.addr)};
  ASSERT_TRUE(t.insert(b, r.len, r.v));
}

TEST(LpmLayout, SmallTablesGetTheImageLargeOnesDir24) {
  Rng rnd{9};
  auto routes = make_routes(rnd, 600, 0);
  Lpm t(4);  // auto
  for (const Route& r : routes) insert(t, r);
  EXPECT_TRUE(t.compile());
  EXPECT_EQ(t.first_stride(), 16);
  EXPECT_GT(t.groups(), Lpm::kWidenAfterGroups);  // would be DIR-24-8 without the image
  // /32s in 300 distinct /16s: a 2^16-entry group each (128 KiB) passes 32 MiB, so the table
  // widens to DIR-24-8 as they go in, keeping every answer.
  for (uint32_t i = 0; i < 300; ++i) {
    routes.push_back({(0x20000000u + (i << 16)) | (rnd() & 0xFFFF), 32, 5000 + i});
    insert(t, routes.back());
  }
  EXPECT_EQ(t.first_stride(), 24);
  const auto addrs = make_addrs(rnd, routes, 500);
  const auto want = answers(routes, addrs);
  expect_all(t, addrs, want, "auto after widening");
  // Compiled past LpmDir16's bound: the LpmRuns image, smaller than the DIR-24-8 trie.
  EXPECT_TRUE(t.compile());
  EXPECT_FALSE(t.dir16());
  EXPECT_TRUE(t.runs());
  EXPECT_LT(t.memory_bytes(), 2 * (size_t(64) << 20));
  expect_all(t, addrs, want, "auto, runs image");
  // A fixed 16-bit root past the bound keeps the staged walk.
  Lpm s(4, 16);
  for (const Route& r : routes) insert(s, r);
  EXPECT_FALSE(s.compile());
  EXPECT_FALSE(s.runs());
  expect_all(s, addrs, want, "16-8-8 past the bound");
  // So does a fixed 24-bit root: DIR-24-8 alone.
  Lpm w(4, 24);
  for (const Route& r : routes) insert(w, r);
  EXPECT_FALSE(w.compile());
  expect_all(w, addrs, want, "DIR-24-8");
}

// Auto tables whose next hops pass LpmDir16's 15 bits get the LpmRuns image once they are
// DIR-24-8; checked while routes go in (the trie between inserts, the image after compile()).
TEST(LpmLayout, RunsImageMatchesBruteForceWhileRoutesGoIn) {
  Rng rnd{5};
  auto routes = make_routes(rnd, 300, LpmDir16::kMaxValue);
  // Child groups enough to widen: /17-/24s over the whole space.
  for (uint32_t i = 0; i < 2 * Lpm::kWidenAfterGroups; ++i) {
    const int len = 17 + int(rnd() % 8);
    routes.push_back({rnd() & mask(len), len, 70000 + i});
  }
  Lpm t(4);
  ASSERT_NO_FATAL_FAILURE(grow_and_check(t, routes, rnd, "auto, runs image"));
  EXPECT_EQ(t.first_stride(), 24);
  EXPECT_TRUE(t.runs());
}

// Answers for LpmRuns::build from a route list: /24 slot c (deeper if a prefix past /24 is in it),
// painted once per route list shortest prefix first (equal prefixes: the last insert wins).
struct RouteSlots {
  std::vector<uint32_t> slot = std::vector<uint32_t>(size_t(1) << 24, Lpm::kNoRoute);
  std::vector<bool> deep = std::vector<bool>(size_t(1) << 24, false);
  explicit RouteSlots(std::vector<Route> routes) {
    std::stable_sort(routes.begin(), routes.end(),
                     [](const Route& a, const Route& b) { return a.len < b.len; });
    for (const Route& r : routes) {
      if (r.len > 24) {
        deep[r.addr >> 8] = true;
        continue;
      }
      const uint32_t first = r.addr >> 8, n = 1u << (24 - r.len);
      std::fill(slot.begin() + first, slot.begin() + first + n, r.v);
    }
  }
  uint32_t operator()(uint32_t c, bool& deeper) const {
    deeper = deep[c];
    return slot[c];
  }
};

// The image alone on hand-made shapes: a /18 whose 64 /24s all differ (a 64-run node), a /24
// whose 256 addresses all differ (a level-3 node of 256 runs, past a cache line), runs of no
// route, the largest value; a value past kMaxValue and a too-small bound refuse to build.
TEST(LpmLayout, RunsImageNodesOnHandMadeShapes) {
  std::vector<Route> routes = {{0, 0, 7}, {0x0A000000, 8, LpmRuns::kMaxValue}};
  for (uint32_t j = 0; j < 64; ++j) routes.push_back({0x0B400000u | j << 8, 24, 100 + j});
  for (uint32_t k = 0; k < 256; k += 2) routes.push_back({0x0C010200u | k, 32, 1000 + k});
  routes.push_back({0x0C010200u, 31, 999});  // under the /32s: answers the odd addresses
  routes.push_back({0x0D800000, 9, 3});
  routes.push_back({0x0D808000, 17, 4});
  LpmRuns img;
  const auto look = [&](uint32_t a) { return reference(routes, a); };
  ASSERT_TRUE(img.build(RouteSlots(routes), look, size_t(64) << 20));
  Rng rnd{3};
  std::vector<uint32_t> addrs;
  for (int i = 0; i < 4000; ++i) addrs.push_back(rnd());
  for (uint32_t j = 0; j < 64 * 256; j += 97) addrs.push_back(0x0B400000u + j);
  for (uint32_t k = 0; k < 256; ++k) addrs.push_back(0x0C010200u | k);
  for (uint32_t a : {0u, ~0u, 0x0A000000u, 0x0AFFFFFFu, 0x0B3FFFFFu, 0x0B7FFFFFu, 0x0C0101FFu,
                     0x0C010300u, 0x0D7FFFFFu, 0x0D800000u, 0x0D807FFFu, 0x0D808000u, 0x0D80FFFFu})
    addrs.push_back(a);
  std::vector<uint32_t> burst(addrs.size());
  img.lookup_burst(addrs.data(), burst.data(), addrs.size());
  for (size_t i = 0; i < addrs.size(); ++i) {
    ASSERT_EQ(img.lookup(addrs[i]), reference(routes, addrs[i])) << std::hex << addrs[i];
    ASSERT_EQ(burst[i], reference(routes, addrs[i])) << std::hex << addrs[i];
  }
  EXPECT_LT(img.memory_bytes(), size_t(4) << 20);
  // Without a default route, the addresses no route covers answer kNoRoute.
  routes.erase(routes.begin());
  ASSERT_TRUE(img.build(RouteSlots(routes), look, size_t(64) << 20));
  EXPECT_EQ(img.lookup(0x01020304u), LpmRuns::kNoRoute);
  EXPECT_EQ(img.lookup(0x0C010201u), 999u);
  EXPECT_EQ(img.lookup(0x0C010202u), 1002u);
  // Refused: a value past 30 bits, or an image that would pass the bound.
  routes.push_back({0x0E000000, 8, LpmRuns::kMaxValue + 1});
  EXPECT_FALSE(img.build(RouteSlots(routes), look, size_t(64) << 20));
  EXPECT_TRUE(img.empty());
  routes.pop_back();
  EXPECT_FALSE(img.build(RouteSlots(routes), look, (size_t(1) << 20) + 512));  // root + 512 B
}

TEST(LpmLayout, ImageGroupsAreAsWideAsTheLongestPrefixOfTheirSlash16) {
  std::vector<Route> routes = {{0x0A010000, 16, 1},
                               {0x0A010200, 24, 2},
                               {0x0A010280, 25, 3},
                               {0, 0, 4},
                               {0x0B0B0000, 20, 5}};
  std::vector<uint8_t> widths(1 << 16, 0);
  widths[0x0A01] = 9;
  widths[0x0B0B] = 4;
  LpmDir16 d;
  // The image's writers, from the reference: a leaf /16's answer, a group's entries.
  const auto leaf = [&](uint32_t c) { return reference(routes, c << 16); };
  const auto group = [&](uint32_t c, int s, uint16_t* out) {
    for (uint32_t j = 0; j < 1u << s; ++j) {
      const uint32_t v = reference(routes, c << 16 | j << (16 - s));
      out[j] = v == LpmDir16::kNoRoute ? 0xFFFF : uint16_t(v);
    }
  };
  ASSERT_TRUE(d.build(widths.data(), leaf, group));
  EXPECT_EQ(d.width(0x0A01), 9);
  EXPECT_EQ(d.width(0x0B0B), 4);
  EXPECT_EQ(d.width(0x0A02), 0);
  for (uint32_t a : {0x0A010203u, 0x0A010280u, 0x0A0102FFu, 0x0A010300u, 0x0A0101FFu, 0x0B000000u,
                     0x0A01FFFFu, 0xFFFFFFFFu, 0u, 0x0B0B0FFFu, 0x0B0B1000u})
    EXPECT_EQ(d.lookup(a), reference(routes, a)) << std::hex << a;
  // A value past 15 bits cannot be held: build says so (a leaf's; Lpm checks group values).
  routes.push_back({0x0C000000, 8, LpmDir16::kMaxValue + 1});
  EXPECT_FALSE(d.build(widths.data(), leaf, group));
}

}  // namespace
}  // namespace nfpark::nf
