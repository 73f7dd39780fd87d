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

void check_against_linear(const std::vector<AclRule>& rules, uint64_t seed, size_t packets) {
  AclClassifier c;
  c.build(rules);
  Rng g{seed};
  size_t matched = 0;
  for (size_t i = 0; i < packets; ++i) {
    bool v6 = g.next() % 4 == 0;
    const AclRule* r = nullptr;
    if (!rules.empty() && g.next() % 2) {
      r = &rules[g.next() % rules.size()];
      if (r->family() && r->family() != (v6 ? 6 : 4)) v6 = !v6;
    }
    FlowKey k = random_key(g, r, v6);
    size_t want = linear_classify(rules, k);
    uint32_t got = c.classify(k);
    ASSERT_EQ(want == rules.size() ? AclClassifier::kNoMatch : uint32_t(want), got)
        << "packet " << i << " rule " << (want < rules.size() ? rules[want].to_string() : "none");
    matched += want < rules.size();
  }
  EXPECT_GT(matched, packets / 4);  // the test exercises matches, not only misses
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
  }
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

TEST(AclClassifier, EmptyRuleSetMatchesNothing) {
  AclClassifier c;
  c.build({});
  FlowKey k;
  k.ip_version = 4;
  EXPECT_EQ(c.classify(k), AclClassifier::kNoMatch);
}

}  // namespace
}  // namespace nfpark::nf
