// Lpm6's run and dense nodes against a plain longest match: run nodes that overflow into dense
// ones, short prefixes inserted over longer ones (through both node kinds), random prefixes of
// every length 0-128 in two insertion orders, and peers_lib_bench's route shapes.
#include "nf/lpm6.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "nf/lpm_prefix.h"

namespace nfpark::nf {
namespace {

using Addr = std::array<uint8_t, 16>;

struct Route {
  Addr addr{};
  int len = 0;
  uint32_t v = 0;
};

struct Rng {
  uint64_t s;
  uint64_t operator()() { return s = s * 6364136223846793005ULL + 1442695040888963407ULL, s >> 17; }
};

bool covers(const Route& r, const Addr& key) {
  const int full = r.len / 8, rest = r.len % 8;
  if (std::memcmp(key.data(), r.addr.data(), size_t(full)) != 0) return false;
  return rest == 0 || ((key[size_t(full)] ^ r.addr[size_t(full)]) & uint8_t(0xFF00 >> rest)) == 0;
}

// Longest match; equal prefixes: the last insert wins.
uint32_t reference(const std::vector<Route>& routes, const Addr& key) {
  uint32_t want = Lpm6::kNoRoute;
  int best = -1;
  for (const Route& r : routes)
    if (r.len >= best && covers(r, key)) best = r.len, want = r.v;
  return want;
}

Addr parse6(const char* text) {
  IpPrefix p;
  std::string e;
  EXPECT_TRUE(parse_prefix(text, p, e)) << e;
  return p.addr;
}

Route route(const char* text, uint32_t v) {
  IpPrefix p;
  std::string e;
  EXPECT_TRUE(parse_prefix(text, p, e)) << e;
  return {p.addr, p.len, v};
}

void insert_all(Lpm6& t, const std::vector<Route>& routes) {
  for (const Route& r : routes) ASSERT_TRUE(t.insert(r.addr.data(), r.len, r.v));
}

// Keys around every route (its first and last address, one past each end, random ones inside)
// and random keys, one by one and in bursts of every size up to 32, against the reference.
void verify(const Lpm6& t, const std::vector<Route>& routes, Rng& rnd, size_t extra = 500) {
  std::vector<Addr> keys;
  for (const Route& r : routes) {
    Addr lo = r.addr, hi = r.addr, in = r.addr;
    for (int bit = r.len; bit < 128; ++bit) {
      const uint8_t m = uint8_t(0x80 >> (bit % 8));
      hi[size_t(bit / 8)] |= m;
      if (rnd() & 1) in[size_t(bit / 8)] |= m;
    }
    Addr below = lo, above = hi;
    for (int i = 15; i >= 0 && below[size_t(i)]-- == 0; --i) {
    }
    for (int i = 15; i >= 0 && ++above[size_t(i)] == 0; --i) {
    }
    keys.insert(keys.end(), {lo, hi, in, below, above});
  }
  for (size_t i = 0; i < extra; ++i) {
    Addr k;
    for (auto& b : k) b = uint8_t(rnd());
    keys.push_back(k);
  }
  std::vector<const uint8_t*> ptrs;
  for (const Addr& k : keys) ptrs.push_back(k.data());
  std::vector<uint32_t> burst(keys.size());
  for (size_t i = 0, n = 1; i < keys.size(); i += n, n = n % 32 + 1)
    t.lookup_burst(ptrs.data() + i, burst.data() + i, std::min(n, keys.size() - i));
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint32_t want = reference(routes, keys[i]);
    ASSERT_EQ(t.lookup(keys[i].data()), want) << "key " << i;
    ASSERT_EQ(burst[i], want) << "key " << i << " (burst)";
  }
}

TEST(Lpm6, RunNodeOverflowsIntoADenseNode) {
  Lpm6 t;
  t.init();
  std::vector<Route> routes = {route("2001:db8::/32", 1)};
  insert_all(t, routes);
  EXPECT_EQ(t.run_nodes(), 0u);  // under the root: nodes for bytes 2 and 3, dense from the start
  EXPECT_EQ(t.dense_nodes(), 2u);
  Rng rnd{1};
  // /40s under the /32: each splits a run in three (the /32, the /40, the /32). The node under
  // the /32 is one of bytes 4-5 (8 runs at most): the fourth /40 rebuilds it as a node of byte 4
  // (/40s cover whole values of it); the fifth makes 11 runs there, the sixth 13: dense.
  const char* more[] = {"2001:db8:1000::/40", "2001:db8:3000::/40", "2001:db8:5000::/40",
                        "2001:db8:7000::/40", "2001:db8:9000::/40"};
  for (uint32_t i = 0; i < 5; ++i) {
    routes.push_back(route(more[i], 10 + i));
    insert_all(t, {routes.back()});
  }
  EXPECT_EQ(t.run_nodes(), 1u);  // the node of byte 4: 11 runs, still one line
  EXPECT_EQ(t.wide_nodes(), 0u);
  EXPECT_EQ(t.dense_nodes(), 2u);
  verify(t, routes, rnd);
  routes.push_back(route("2001:db8:b000::/40", 20));
  insert_all(t, {routes.back()});
  EXPECT_EQ(t.dense_nodes(), 3u);
  EXPECT_EQ(t.run_nodes(), 0u);
  verify(t, routes, rnd);
  // The freed line is reused by the next run node.
  const size_t bytes = t.node_bytes();
  routes.push_back(route("2001:db8:1100::/48", 21));
  insert_all(t, {routes.back()});
  EXPECT_EQ(t.run_nodes(), 1u);
  EXPECT_EQ(t.node_bytes(), bytes);
  verify(t, routes, rnd);
}

// A node of two key bytes holds up to 8 runs; the fourth /48 under a /32 would make 9, so the
// node is rebuilt as a node of its first byte over nodes of its second, and the insert goes on.
TEST(Lpm6, WideNodeSplitsIntoNodesOfOneByte) {
  Lpm6 t;
  t.init();
  std::vector<Route> routes = {route("2001:db8::/32", 1), route("2001:db8:a0b::/48", 2),
                               route("2001:db8:1000::/48", 3), route("2001:db8:2000::/48", 4)};
  insert_all(t, routes);
  EXPECT_EQ(t.wide_nodes(), 1u);  // bytes 4-5 under the /32: 7 runs
  EXPECT_EQ(t.run_nodes(), 1u);
  Rng rnd{5};
  verify(t, routes, rnd);
  routes.push_back(route("2001:db8:3000::/48", 5));
  insert_all(t, {routes.back()});
  // byte 4 (7 runs) over three nodes of byte 5, and a new wide node (bytes 5-6) for 2001:db8:30::
  EXPECT_EQ(t.run_nodes(), 5u);
  EXPECT_EQ(t.wide_nodes(), 1u);
  verify(t, routes, rnd);
  routes.push_back(route("2001:db8:1000:8000::/49", 6));  // under a node of byte 5 now
  routes.push_back(route("2001:db8::/36", 7));            // over all of them
  insert_all(t, {routes[5], routes[6]});
  verify(t, routes, rnd);
  EXPECT_EQ(t.lookup(parse6("2001:db8:a0b::1").data()), 2u);
  EXPECT_EQ(t.lookup(parse6("2001:db8:a0c::1").data()), 7u);
  EXPECT_EQ(t.lookup(parse6("2001:db8:1000:8000::1").data()), 6u);
  EXPECT_EQ(t.lookup(parse6("2001:db8:3001::1").data()), 1u);
}

TEST(Lpm6, ShortPrefixesOverLongerOnes) {
  Lpm6 t;
  t.init();
  std::vector<Route> routes = {route("2001:db8:1:2::/64", 1),
                               route("2001:db8:1:2::7/128", 2),
                               route("2001:db8:1::/48", 3),
                               route("2001:db8::/32", 4),
                               route("2001:db8:1:2::/63", 5),
                               route("2001:db8:1:2:8000::/65", 6),
                               route("2001:db8:1:2::/64", 7),  // equal prefix: the last insert wins
                               route("::/0", 8),
                               route("2000::/3", 9),
                               route("2001:db8:1:2::7/127", 10)};
  for (int i = 0; i < 40; ++i) {  // a dense node under 2001:db8:1::/48 (byte 6)
    Route r = route("2001:db8:1::/56", 100 + uint32_t(i));
    r.addr[6] = uint8_t(6 * i + 1);
    routes.push_back(r);
  }
  routes.push_back(route("2001:db8:1::/52", 200));  // over the dense node's /56s
  routes.push_back(route("2001:d00::/24", 201));    // over everything under 2001:db8::/32
  insert_all(t, routes);
  EXPECT_GE(t.dense_nodes(), 1u);
  Rng rnd{2};
  verify(t, routes, rnd);
  EXPECT_EQ(t.lookup(parse6("2001:db8:1:2::7").data()), 2u);
  EXPECT_EQ(t.lookup(parse6("2001:db8:1:2::6").data()), 10u);
  EXPECT_EQ(t.lookup(parse6("2001:db8:1:2::1").data()), 7u);
  EXPECT_EQ(t.lookup(parse6("2001:db8:1:2:8000::1").data()), 6u);
  EXPECT_EQ(t.lookup(parse6("2001:db8:ffff::1").data()), 4u);
  EXPECT_EQ(t.lookup(parse6("2001:d00::1").data()), 201u);
  EXPECT_EQ(t.lookup(parse6("3000::1").data()), 9u);
  EXPECT_EQ(t.lookup(parse6("fe80::1").data()), 8u);
}

TEST(Lpm6, RejectsBadLengthsAndValues) {
  Lpm6 t;
  t.init();
  const Addr a{};
  EXPECT_FALSE(t.insert(a.data(), 129, 1));
  EXPECT_FALSE(t.insert(a.data(), -1, 1));
  EXPECT_FALSE(t.insert(a.data(), 64, Lpm6::kMaxValue + 1));
  EXPECT_EQ(t.lookup(a.data()), Lpm6::kNoRoute);
  EXPECT_TRUE(t.insert(a.data(), 128, Lpm6::kMaxValue));
  EXPECT_EQ(t.lookup(a.data()), Lpm6::kMaxValue);
}

// Random prefixes of every length, nested under a few /16s and /32s, duplicates included, in
// the order drawn and reversed (the answers do not depend on the order but for equal prefixes:
// the reference follows the order too).
TEST(Lpm6, RandomPrefixesMatchTheReferenceInAnyOrder) {
  Rng rnd{3};
  std::vector<Addr> bases(8);
  for (auto& b : bases) {
    for (auto& x : b) x = uint8_t(rnd());
    b[0] = 0x20, b[1] = uint8_t(rnd() % 2), b[2] = uint8_t(rnd() % 3);
  }
  std::vector<Route> routes;
  for (uint32_t i = 0; i < 2000; ++i) {
    Route r;
    r.addr = bases[rnd() % bases.size()];
    r.len = int(rnd() % 129);
    for (int k = 0; k < 4; ++k) {  // a few bits past the base's first 24 differ
      const int bit = 24 + int(rnd() % 104);
      r.addr[size_t(bit / 8)] ^= uint8_t(0x80 >> (bit % 8));
    }
    if (i % 9 == 8) r.addr = routes[rnd() % routes.size()].addr;  // same address, other length
    mask_prefix(r.addr.data(), 16, r.len);
    r.v = i;
    routes.push_back(r);
  }
  Lpm6 a;
  a.init();
  insert_all(a, routes);
  verify(a, routes, rnd, 3000);
  std::reverse(routes.begin(), routes.end());
  Lpm6 b;
  b.init();
  insert_all(b, routes);
  verify(b, routes, rnd, 3000);
  EXPECT_GT(a.run_nodes(), 0u);
  EXPECT_GT(a.dense_nodes(), 0u);
}

// peers_lib_bench's shape (1k routes under 2001::/16: 50% /48, 30% /32-/47, 15% /49-/64, 5%
// /65-/128): answers, and the nodes a route makes of its own are run nodes.
TEST(Lpm6, BenchRoutesAreMostlyRunNodes) {
  Rng rnd{4};
  std::vector<Route> routes(1000);
  for (uint32_t i = 0; i < routes.size(); ++i) {
    Route& r = routes[i];
    const uint64_t pick = rnd() % 100;
    r.len = pick < 50   ? 48
            : pick < 80 ? 32 + int(rnd() % 16)
            : pick < 95 ? 49 + int(rnd() % 16)
                        : 65 + int(rnd() % 64);
    for (auto& b : r.addr) b = uint8_t(rnd());
    r.addr[0] = 0x20, r.addr[1] = 0x01;
    mask_prefix(r.addr.data(), 16, r.len);
    r.v = i % 1000;
  }
  Lpm6 t;
  t.init();
  insert_all(t, routes);
  verify(t, routes, rnd, 2000);
  // 8-bit groups of 1 KiB made ~2,500 groups here; now the /17-/32 levels are dense (one node
  // under 2001::/16, one per /24 holding a longer route: at most 257) and the rest 64 B, most of
  // them of two key bytes (a /48's own node under its /32).
  EXPECT_GT(t.run_nodes(), 1000u);
  EXPECT_GT(t.wide_nodes(), 700u);
  EXPECT_LE(t.dense_nodes(), 257u + 10u);
}

}  // namespace
}  // namespace nfpark::nf
