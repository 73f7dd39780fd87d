// AclClassifier vs the linear-scan reference: random rule sets (overlapping prefixes and port
// ranges, mixed actions, IPv4 and IPv6) and random packets, half of them drawn inside a rule.
#include "nf/acl_classifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "core/parse.h"
#include "nf/acl_rule.h"

namespace nfpark::nf {
namespace {

struct Rng {
  uint64_t s;
  uint64_t next() { return mix64(s += 0x9E3779B97F4A7C15ULL); }
};

// A key inside rule `r` (random where the rule is a wildcard), or a fully random key.
FlowKey random_key(Rng& g, const AclRule* r, bool v6) {
  FlowKey k;
  k.ip_version = v6 ? 6 : 4;
  auto fill_addr = [&](std::array<uint8_t, 16>& a, const IpPrefix* p) {
    for (auto& b : a) b = uint8_t(g.next());
    if (!v6) {
      std::memset(a.data(), 0, 12);
      a[12] = uint8_t(10 + g.next() % 4);  // near the rule generator's pool
    } else {
      a[0] = 0x20, a[1] = 0x01, a[2] = 0x0d, a[3] = 0xb8, a[4] = uint8_t(10 + g.next() % 4);
    }
    if (p && p->family) {
      uint8_t* dst = v6 ? a.data() : a.data() + 12;
      for (int bit = 0; bit < p->len; ++bit) {
        uint8_t m = uint8_t(0x80 >> (bit % 8));
        dst[bit / 8] = uint8_t((dst[bit / 8] & ~m) | (p->addr[size_t(bit / 8)] & m));
      }
    }
  };
  fill_addr(k.src, r ? &r->src : nullptr);
  fill_addr(k.dst, r ? &r->dst : nullptr);
  static constexpr uint8_t kProtos[] = {6, 17, 1, 58, 47};
  k.proto = r && r->proto_lo == r->proto_hi ? r->proto_lo : kProtos[g.next() % 5];
  auto port = [&](uint16_t lo, uint16_t hi) {
    return uint16_t(lo + g.next() % (uint32_t(hi - lo) + 1));
  };
  k.sport = r ? port(r->sport_lo, r->sport_hi) : uint16_t(g.next());
  k.dport = r ? port(r->dport_lo, r->dport_hi) : uint16_t(g.next() % 2048);
  return acl_key(k);
}

// classify_burst() over `keys` cut into bursts of every size from 0 to 70 (a burst is longer
// than the walk's slots, shorter, or empty) gives classify()'s answer for every key.
void check_burst(const AclClassifier& c, const std::vector<FlowKey>& keys) {
  std::vector<uint32_t> out(keys.size() + 1, 12345);
  size_t at = 0;
  for (size_t len = 0; at < keys.size(); len = (len + 1) % 71) {
    const size_t m = std::min(len, keys.size() - at);
    c.classify_burst(std::span<const FlowKey>(keys.data() + at, m), out.data() + at);
    at += m;
  }
  ASSERT_EQ(out.back(), 12345u) << "wrote past the burst";
  for (size_t i = 0; i < keys.size(); ++i)
    ASSERT_EQ(c.classify(keys[i]), out[i]) << "key " << i << " v" << int(keys[i].ip_version);
}

void check_against_linear(const std::vector<AclRule>& rules, uint64_t seed, size_t packets) {
  AclClassifier c;
  c.build(rules);
  Rng g{seed};
  size_t matched = 0;
  std::vector<FlowKey> keys;
  for (size_t i = 0; i < packets; ++i) {
    bool v6 = g.next() % 4 == 0;
    const AclRule* r = nullptr;
    if (!rules.empty() && g.next() % 2) {
      r = &rules[g.next() % rules.size()];
      if (r->family() && r->family() != (v6 ? 6 : 4)) v6 = !v6;
    }
    FlowKey k = random_key(g, r, v6);
    keys.push_back(k);
    size_t want = linear_classify(rules, k);
    uint32_t got = c.classify(k);
    ASSERT_EQ(want == rules.size() ? AclClassifier::kNoMatch : uint32_t(want), got)
        << "packet " << i << " rule " << (want < rules.size() ? rules[want].to_string() : "none");
    matched += want < rules.size();
  }
  EXPECT_GT(matched, packets / 4);  // the test exercises matches, not only misses
  check_burst(c, keys);
}

TEST(AclClassifier, MatchesLinearScanOnRandomIpv4Rules) {
  for (size_t n : {1, 10, 300, 2000})
    check_against_linear(generate_random_rules(n, n, false), 7 + n, 25000);
}

TEST(AclClassifier, MatchesLinearScanOnMixedFamilies) {
  auto rules = generate_random_rules(1500, 3, false);
  auto v6 = generate_random_rules(1500, 4, true);
  for (size_t i = 0; i < v6.size(); ++i) rules.insert(rules.begin() + long(2 * i), v6[i]);
  check_against_linear(rules, 11, 25000);
}

TEST(AclClassifier, MatchesLinearScanOnHeavilyOverlappingRanges) {
  // Few distinct endpoints, many wildcards: deep replication and unsplittable leaves.
  auto rules = generate_random_rules(3000, 5, false);
  for (size_t i = 0; i < rules.size(); ++i) {
    if (i % 3 == 0) rules[i].src = IpPrefix{};
    if (i % 5 == 0) rules[i].sport_lo = 0, rules[i].sport_hi = 65535;
    rules[i].dport_lo = uint16_t(i % 7 * 100), rules[i].dport_hi = uint16_t(1000 + i % 11 * 100);
  }
  check_against_linear(rules, 12, 25000);
}

// The firewall's default rule sets at the peer-bench sizes, keys aimed at the rules (half inside a
// random rule of the key's family, half its neighbourhood), IPv4 and IPv6: the same first match
// as the linear scan, through classify() and classify_burst().
TEST(AclClassifier, MatchesLinearScanOnAimedKeysAtPeerBenchSizes) {
  for (size_t n : {1000, 10000, 20000}) {
    const auto rules = generate_passing_rules(n, 1);
    AclClassifier c;
    c.build(rules);
    Rng g{n};
    std::vector<FlowKey> keys;
    for (size_t i = 0; i < 3000; ++i) {
      const AclRule& r = rules[g.next() % rules.size()];
      const bool v6 = r.family() == 6;
      FlowKey k = random_key(g, &r, v6);
      if (i % 2) {  // beside the rule: same source /16 (/32 for IPv6), other fields random
        const FlowKey o = random_key(g, nullptr, v6);
        k.dst = o.dst, k.sport = o.sport, k.dport = o.dport, k.proto = o.proto;
        k = acl_key(k);
      }
      keys.push_back(k);
    }
    size_t hits = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      const size_t want = linear_classify(rules, keys[i]);
      ASSERT_EQ(want == rules.size() ? AclClassifier::kNoMatch : uint32_t(want),
                c.classify(keys[i]))
          << n << " rules, key " << i;
      hits += want < rules.size();
    }
    EXPECT_GT(hits, keys.size() / 3) << n;
    check_burst(c, keys);
  }
}

// At ~1k rules the root's equal-width cut (HiCuts) takes every IPv4 key to its cell in one hop
// and the trees stay shallow enough for the staged burst; without cuts (the old layout) the same
// rules need ~6 split hops per tree for a key inside them. Both layouts give the same answers.
TEST(AclClassifier, EqualCutsKeepSmallRuleSetsShallow) {
  const auto rules = generate_passing_rules(1000, 1);
  AclClassifier cut, plain;
  cut.build(rules);
  AclClassifier::Options o;
  o.cut_bits = o.root_cut_bits = 0;
  plain.build(rules, o);
  EXPECT_GT(cut.stats().cuts, 0u);
  EXPECT_EQ(plain.stats().cuts, 0u);
  EXPECT_LE(cut.stats().max_depth, AclClassifier::kBurstDepth);
  EXPECT_TRUE(cut.staged_burst());
  EXPECT_FALSE(plain.staged_burst());
  Rng g{5};
  uint32_t hops_cut = 0, hops_plain = 0;
  std::vector<FlowKey> keys;
  for (int i = 0; i < 2000; ++i) {
    const AclRule& r = rules[g.next() % rules.size()];
    const FlowKey k = random_key(g, &r, r.family() == 6);
    keys.push_back(k);
    ASSERT_EQ(cut.classify(k), plain.classify(k)) << i;
    uint32_t t, h, s;
    cut.lookup_work(k, t, h, s), hops_cut += h;
    plain.lookup_work(k, t, h, s), hops_plain += h;
  }
  EXPECT_LT(hops_cut * 2, hops_plain);
  check_burst(cut, keys);
  check_burst(plain, keys);
}

// Rules whose source is narrow share one tree whatever their destination (the firewall's rules:
// every source a prefix of 240/4, destinations any or a prefix): a key walks one IPv4 tree and
// compares one leaf, not one per destination group.
TEST(AclClassifier, NarrowSourceRulesShareOneTree) {
  const auto rules = generate_passing_rules(1000, 1);
  AclClassifier c;
  c.build(rules);
  Rng g{9};
  for (int i = 0; i < 2000; ++i) {
    const AclRule& r = rules[g.next() % rules.size()];
    const FlowKey k = random_key(g, i % 2 ? &r : nullptr, false);
    uint32_t trees, hops, scanned;
    c.lookup_work(k, trees, hops, scanned);
    ASSERT_EQ(trees, 1u) << i;
  }
}

// The shared narrow-source tree is built only while it costs at most merge_space x the memory of
// the two trees it replaces. Here one group is cut by destination (every source 10/8) and the
// other by source (destination any): one tree would copy one group into every cell of the
// other's cuts, so the two trees stay, and the answers are the linear scan's either way.
TEST(AclClassifier, SharedTreeNotBuiltWhenItCopiesTooMuch) {
  Rng g{21};
  std::vector<AclRule> rules;
  for (int i = 0; i < 700; ++i) {
    AclRule r;
    const uint32_t a = 0x0A000000u | uint32_t(g.next() & 0x00FFFF00u);
    std::array<uint8_t, 16> b{};
    b[0] = uint8_t(a >> 24), b[1] = uint8_t(a >> 16), b[2] = uint8_t(a >> 8);
    if (i % 2) {
      r.src = IpPrefix{4, 24, b};
    } else {
      r.src = IpPrefix{4, 8, {10}};
      b[0] = uint8_t(20 + g.next() % 200);
      r.dst = IpPrefix{4, 24, b};
    }
    rules.push_back(r);
  }
  AclClassifier def, separate, shared;
  AclClassifier::Options o;
  def.build(rules);
  o.merge_space = 0;
  separate.build(rules, o);
  o.merge_space = 1000;
  shared.build(rules, o);
  EXPECT_EQ(separate.stats().trees, 2u);
  EXPECT_EQ(shared.stats().trees, 1u);
  EXPECT_GT(shared.stats().memory_bytes, 3 * separate.stats().memory_bytes)
      << shared.stats().memory_bytes << " vs " << separate.stats().memory_bytes;
  EXPECT_EQ(def.stats().trees, 2u);
  EXPECT_EQ(def.stats().memory_bytes, separate.stats().memory_bytes);
  std::vector<FlowKey> keys;
  for (int i = 0; i < 4000; ++i) {
    const AclRule& r = rules[g.next() % rules.size()];
    keys.push_back(random_key(g, i % 4 ? &r : nullptr, false));
    const size_t want = linear_classify(rules, keys.back());
    const uint32_t w = want == rules.size() ? AclClassifier::kNoMatch : uint32_t(want);
    ASSERT_EQ(w, def.classify(keys.back())) << i;
    ASSERT_EQ(w, shared.classify(keys.back())) << i;
  }
  check_burst(def, keys);
}

// The 16-lane block's vector compares (AVX-512 and AVX2 as built) and its scalar fallback agree,
// lane by lane, on random ranges (edges included: keys equal to lo or hi, full and empty ranges).
TEST(AclLeaf4, VectorMatchEqualsScalar) {
  Rng g{99};
  for (int it = 0; it < 20000; ++it) {
    AclLeaf4 b;
    b.clear();
    const int used = int(g.next() % (AclLeaf4::kLanes + 1));
    uint32_t x[AclLeaf4::kFields];
    for (int f = 0; f < AclLeaf4::kFields; ++f)
      x[f] = uint32_t(g.next() % 4 ? g.next() % 16 : g.next());
    for (int j = 0; j < used; ++j) {
      b.id[j] = uint32_t(j);
      for (int f = 0; f < AclLeaf4::kFields; ++f) {
        uint32_t a = uint32_t(g.next() % 3 ? g.next() % 16 : g.next()), c = uint32_t(g.next() % 16);
        if (g.next() % 5 == 0) a = 0, c = ~0u;
        b.lo[f][j] = std::min(a, c), b.hi[f][j] = std::max(a, c);
        if (g.next() % 7 == 0) b.lo[f][j] = b.hi[f][j] = x[f];
      }
    }
    const uint32_t m = b.match_scalar(x);
    ASSERT_EQ(m, b.match(x)) << it;
#if defined(__AVX2__)
    ASSERT_EQ(m, b.match_avx2(x)) << it;
#endif
    ASSERT_EQ(m >> used, 0u) << "an unused lane matched";
    for (int j = 0; j < used; ++j) {
      bool in = true;
      for (int f = 0; f < AclLeaf4::kFields; ++f)
        in = in && x[f] >= b.lo[f][j] && x[f] <= b.hi[f][j];
      ASSERT_EQ(in, bool(m >> j & 1)) << it << " lane " << j;
    }
  }
}

// The 4-lane small leaf's 256-bit compare and its scalar fallback agree lane by lane.
TEST(AclLeaf4Small, VectorMatchEqualsScalar) {
  Rng g{98};
  for (int it = 0; it < 20000; ++it) {
    AclLeaf4Small b;
    b.clear();
    const int used = int(g.next() % (AclLeaf4Small::kLanes + 1));
    uint32_t x[AclLeaf4::kFields];
    for (uint32_t& v : x) v = uint32_t(g.next() % 4 ? g.next() % 16 : g.next());
    for (int j = 0; j < used; ++j) {
      b.id[j] = uint32_t(j);
      for (int f = 0; f < AclLeaf4::kFields; ++f) {
        uint32_t a = uint32_t(g.next() % 3 ? g.next() % 16 : g.next()), c = uint32_t(g.next() % 16);
        if (g.next() % 5 == 0) a = 0, c = ~0u;
        b.lohi[f][j] = std::min(a, c), b.lohi[f][AclLeaf4Small::kLanes + j] = std::max(a, c);
        if (g.next() % 7 == 0) b.lohi[f][j] = b.lohi[f][AclLeaf4Small::kLanes + j] = x[f];
      }
    }
    const uint32_t m = b.match_scalar(x);
    ASSERT_EQ(m, b.match(x)) << it;
    ASSERT_EQ(m >> used, 0u) << "an unused lane matched";
    for (int j = 0; j < used; ++j) {
      bool in = true;
      for (int f = 0; f < AclLeaf4::kFields; ++f)
        in = in && x[f] >= b.lohi[f][j] && x[f] <= b.lohi[f][AclLeaf4Small::kLanes + j];
      ASSERT_EQ(in, bool(m >> j & 1)) << it << " lane " << j;
    }
  }
}

// Stats::memory_bytes counts every block a leaf uses: one IPv4 rule is one leaf of one 4-lane
// block, so the classifier holds at least that block and the rule's index.
TEST(AclClassifier, MemoryCountsSmallLeafBlocks) {
  AclClassifier c;
  c.build(generate_passing_rules(1, 3));
  ASSERT_EQ(c.stats().leaves, 1u);
  EXPECT_GE(c.stats().memory_bytes, sizeof(AclLeaf4Small) + sizeof(uint32_t));
}

TEST(AclClassifier, EmptyRuleSetMatchesNothing) {
  AclClassifier c;
  c.build({});
  FlowKey k;
  k.ip_version = 4;
  EXPECT_EQ(c.classify(k), AclClassifier::kNoMatch);
  uint32_t out[2] = {1, 2};
  const FlowKey ks[2] = {k, k};
  c.classify_burst(ks, out);
  EXPECT_EQ(out[0], AclClassifier::kNoMatch);
  EXPECT_EQ(out[1], AclClassifier::kNoMatch);
}

// Only IPv6 rules: IPv4 keys have no tree to walk and match nothing, in bursts too.
TEST(AclClassifier, BurstWithoutIpv4TreesMatchesNothingForIpv4) {
  AclClassifier c;
  c.build(generate_random_rules(200, 8, true));
  Rng g{8};
  std::vector<FlowKey> keys;
  for (int i = 0; i < 500; ++i) keys.push_back(random_key(g, nullptr, i % 3 == 0));
  check_burst(c, keys);
}

}  // namespace
}  // namespace nfpark::nf
