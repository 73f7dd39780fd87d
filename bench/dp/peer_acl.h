// peer_acl: nfpark's AclClassifier (the firewall's) against DPDK's rte_acl on the same rules and
// the same keys: build time, memory, ns per lookup for rte_acl's scalar path and every vector
// path this CPU and DPDK build offer (SSE, AVX2, AVX-512 x16 and x32), and a check that both
// give the same first match for every key.
//
// Rules: the firewall's default rule set (generate_passing_rules, seed 1), 1k/10k/20k rules. The
// IPv4 and family-less rules go into one rte_acl context (5 fields: proto bitmask, src and dst
// masks, sport and dport ranges; priority = first match), as DPDK's l3fwd-acl does; IPv6 rules
// live in nfpark's IPv6 trees and in no rte_acl context, and the keys are IPv4, so both search
// exactly the same rules.
// Keys (IPv4): "gen" = sources in 10/8, what the default firewall sees from generated traffic
// (they miss every rule); "aimed" = half aimed at a random rule's source and destination /16s,
// half random (they walk deep into the rule set). Both classify bursts of 32: nfpark through
// AclClassifier::classify_burst (what Firewall::process calls), rte_acl through
// rte_acl_classify_alg (its API's natural use).
#pragma once
#include <rte_acl.h>

#include <cstring>
#include <map>

#include "nf/acl_classifier.h"
#include "nf/acl_rule.h"
#include "peer_common.h"

namespace nfpark::bench {

namespace acl_peer {

struct Tuple4 {  // rte_acl's input, network byte order
  uint8_t proto;
  uint8_t pad[3];
  uint32_t src, dst;
  uint16_t sport, dport;
};
RTE_ACL_RULE_DEF(Rule4, 5);

inline rte_acl_config config4() {
  rte_acl_config c{};
  c.num_categories = 1;
  c.num_fields = 5;
  c.defs[0] = {RTE_ACL_FIELD_TYPE_BITMASK, 1, 0, 0, offsetof(Tuple4, proto)};
  c.defs[1] = {RTE_ACL_FIELD_TYPE_MASK, 4, 1, 1, offsetof(Tuple4, src)};
  c.defs[2] = {RTE_ACL_FIELD_TYPE_MASK, 4, 2, 2, offsetof(Tuple4, dst)};
  c.defs[3] = {RTE_ACL_FIELD_TYPE_RANGE, 2, 3, 3, offsetof(Tuple4, sport)};
  c.defs[4] = {RTE_ACL_FIELD_TYPE_RANGE, 2, 4, 3, offsetof(Tuple4, dport)};
  return c;
}

inline uint32_t v4(const nf::IpPrefix& p) {
  return uint32_t(p.addr[0]) << 24 | uint32_t(p.addr[1]) << 16 | uint32_t(p.addr[2]) << 8 |
         p.addr[3];
}

// rte_acl context holding the IPv4 (and family-less) rules; userdata = rule index + 1.
inline rte_acl_ctx* build_ctx(const std::vector<nf::AclRule>& rules, const std::string& name,
                              std::string& err) {
  rte_acl_param prm{};
  prm.name = name.c_str();
  prm.socket_id = SOCKET_ID_ANY;
  prm.rule_size = RTE_ACL_RULE_SZ(5);
  prm.max_rule_num = uint32_t(rules.size());
  rte_acl_ctx* ctx = rte_acl_create(&prm);
  if (!ctx) return (err = "rte_acl_create failed"), nullptr;
  std::vector<Rule4> out;
  for (size_t i = 0; i < rules.size(); ++i) {
    const nf::AclRule& r = rules[i];
    if (r.family() == 6) continue;
    Rule4 x{};
    x.data.category_mask = 1;
    x.data.priority = int32_t(RTE_ACL_MAX_PRIORITY - i);  // first match = highest priority
    x.data.userdata = uint32_t(i + 1);
    const bool any_proto = r.proto_lo == 0 && r.proto_hi == 255;
    x.field[0].value.u8 = any_proto ? 0 : r.proto_lo;
    x.field[0].mask_range.u8 = any_proto ? 0 : 0xFF;
    x.field[1].value.u32 = r.src.family ? v4(r.src) : 0;
    x.field[1].mask_range.u32 = r.src.family ? r.src.len : 0;
    x.field[2].value.u32 = r.dst.family ? v4(r.dst) : 0;
    x.field[2].mask_range.u32 = r.dst.family ? r.dst.len : 0;
    x.field[3].value.u16 = r.sport_lo, x.field[3].mask_range.u16 = r.sport_hi;
    x.field[4].value.u16 = r.dport_lo, x.field[4].mask_range.u16 = r.dport_hi;
    out.push_back(x);
  }
  rte_acl_config cfg = config4();
  if (rte_acl_add_rules(ctx, reinterpret_cast<const rte_acl_rule*>(out.data()),
                        uint32_t(out.size())) != 0 ||
      rte_acl_build(ctx, &cfg) != 0) {
    rte_acl_free(ctx);
    return (err = "rte_acl_add_rules/rte_acl_build failed"), nullptr;
  }
  return ctx;
}

inline std::vector<FlowKey> make_keys(const std::vector<nf::AclRule>& rules, size_t n,
                                      uint64_t seed, bool aim) {
  std::vector<FlowKey> keys(n);
  uint64_t s = seed;
  auto rnd = [&] { return mix64(s += 0x9E3779B97F4A7C15ULL); };
  for (FlowKey& k : keys) {
    k.ip_version = 4;
    uint32_t src = uint32_t(rnd()), dst = uint32_t(rnd());
    if (aim && rnd() % 2) {
      const nf::AclRule& r = rules[rnd() % rules.size()];
      if (r.src.family == 4) src = (v4(r.src) & 0xFFFF0000u) | (src & 0xFFFF);
      if (r.dst.family == 4) dst = (v4(r.dst) & 0xFFFF0000u) | (dst & 0xFFFF);
    } else if (!aim) {
      src = 0x0A000000u | (src & 0x00FFFFFF);  // 10/8, as generated traffic
    }
    for (int i = 0; i < 4; ++i) {
      k.src[size_t(12 + i)] = uint8_t(src >> (24 - 8 * i));
      k.dst[size_t(12 + i)] = uint8_t(dst >> (24 - 8 * i));
    }
    k.proto = rnd() % 3 ? 6 : 17;
    k.sport = uint16_t(1024 + rnd() % 60000);
    k.dport = uint16_t(rnd() % 2 ? 80 + rnd() % 1000 : rnd());
    k = nf::acl_key(k);
  }
  return keys;
}

inline Tuple4 tuple_of(const FlowKey& k) {
  Tuple4 t{};
  t.proto = k.proto;
  std::memcpy(&t.src, k.src.data() + 12, 4);
  std::memcpy(&t.dst, k.dst.data() + 12, 4);
  t.sport = uint16_t(k.sport >> 8 | k.sport << 8);
  t.dport = uint16_t(k.dport >> 8 | k.dport << 8);
  return t;
}

struct Alg {
  const char* name;
  enum rte_acl_classify_alg alg;
};
inline constexpr Alg kAlgs[] = {{"scalar", RTE_ACL_CLASSIFY_SCALAR},
                                {"sse", RTE_ACL_CLASSIFY_SSE},
                                {"avx2", RTE_ACL_CLASSIFY_AVX2},
                                {"avx512x16", RTE_ACL_CLASSIFY_AVX512X16},
                                {"avx512x32", RTE_ACL_CLASSIFY_AVX512X32}};

}  // namespace acl_peer

// One rule count: build both, check they agree, time lookups for both key sets.
inline void bench_acl_rules(size_t n, const PeerOpts& o, PeerReport& rep) {
  using namespace acl_peer;
  const std::vector<nf::AclRule> rules = nf::generate_passing_rules(n, 1);
  const std::string label = std::to_string(n / 1000) + "k-rules";
  nf::AclClassifier c;
  Stopwatch sw;
  c.build(rules);
  const double nf_build = sw.cpu();
  std::string err;
  const size_t heap0 = dpdk_heap_bytes();
  sw = Stopwatch();
  rte_acl_ctx* ctx = build_ctx(rules, "peer_acl_" + std::to_string(n), err);
  const double acl_build = sw.cpu();
  if (!ctx) return rep.fail("acl " + label + ": " + err);
  const size_t acl_mem = dpdk_heap_bytes() - heap0;
  std::vector<Alg> algs;
  for (const Alg& a : kAlgs)
    if (rte_acl_set_ctx_classify(ctx, a.alg) == 0) algs.push_back(a);
  std::printf(
      "\nACL %zu rules (firewall default set): build nfpark %.1f ms, rte_acl %.1f ms | memory "
      "nfpark %zu KiB, rte_acl %zu KiB | rte_acl paths here:",
      n, nf_build * 1e3, acl_build * 1e3, c.stats().memory_bytes / 1024, acl_mem / 1024);
  for (const Alg& a : algs) std::printf(" %s", a.name);
  std::printf("\n");
  const size_t nkeys = o.quick ? 65536 : 262144;
  for (bool aim : {false, true}) {
    const char* kname = aim ? "aimed-keys" : "gen-keys";
    const std::vector<FlowKey> keys = make_keys(rules, nkeys, aim ? 42 : 43, aim);
    std::vector<Tuple4> tuples(keys.size());
    std::vector<const uint8_t*> ptrs(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      tuples[i] = tuple_of(keys[i]);
      ptrs[i] = reinterpret_cast<const uint8_t*>(&tuples[i]);
    }
    std::vector<uint32_t> res(keys.size()), mine(keys.size());
    // Agreement first: every key, every path.
    for (size_t i = 0; i < keys.size(); ++i) mine[i] = c.classify(keys[i]);
    std::vector<uint32_t> burst(keys.size());
    c.classify_burst(keys, burst.data());
    if (burst != mine) rep.fail("acl " + label + " " + kname + ": classify_burst != classify");
    for (const Alg& a : algs) {
      rte_acl_classify_alg(ctx, ptrs.data(), res.data(), uint32_t(keys.size()), 1, a.alg);
      size_t bad = 0;
      for (size_t i = 0; i < keys.size(); ++i)
        bad += (res[i] ? res[i] - 1 : nf::AclClassifier::kNoMatch) != mine[i];
      if (bad)
        rep.fail("acl " + label + " " + kname + " " + a.name + ": " + std::to_string(bad) +
                 " keys classified differently from nfpark");
    }
    size_t hits = 0;
    for (uint32_t m : mine) hits += m != nf::AclClassifier::kNoMatch;
    std::map<std::string, Ratio> ratios;
    uint64_t sink = 0;
    for (int r = 0; r < o.reps; ++r) {
      const double t_nf = per_item(keys.size(), [&] {
        for (size_t i = 0; i + 32 <= keys.size(); i += 32)
          c.classify_burst(std::span<const FlowKey>(keys.data() + i, 32), burst.data() + i);
      });
      sink += burst[size_t(r)];
      for (const Alg& a : algs) {
        const double t = per_item(keys.size(), [&] {
          for (size_t i = 0; i + 32 <= keys.size(); i += 32)
            rte_acl_classify_alg(ctx, ptrs.data() + i, res.data() + i, 32, 1, a.alg);
        });
        ratios[a.name].base.add(t);
        ratios[a.name].variant.add(t_nf);
      }
    }
    if (sink == 1) std::printf(" ");
    std::printf("  %-10s (%4.1f%% hit a rule)  nfpark %6.1f ns/lookup |", kname,
                100.0 * double(hits) / double(keys.size()),
                ratios.begin()->second.variant.min() * 1e9);
    for (const Alg& a : algs) std::printf(" %s %.1f", a.name, ratios[a.name].base.min() * 1e9);
    std::printf(" ns\n");
    for (const Alg& a : algs) {
      const bool widest = &a == &algs.back();
      if (std::strcmp(a.name, "scalar") != 0 && !widest) continue;  // RATIO: scalar and widest
      const std::string what = label + " " + kname + " " + a.name;
      std::printf("    nfpark/rte_acl %-30s %s\n", what.c_str(), ratios[a.name].text().c_str());
      rep.ratios.push_back(peer_ratio("dpdk-acl", what, ratios[a.name]));
    }
  }
  rte_acl_free(ctx);
}

// rte_acl's AVX-512 paths run only when EAL allows 512-bit SIMD (its default is 256): main()
// passes --force-max-simd-bitwidth=512.
inline void bench_acl(const PeerOpts& o, PeerReport& rep) {
  for (size_t n : {size_t(1000), size_t(10000), size_t(20000)}) bench_acl_rules(n, o, rep);
}

}  // namespace nfpark::bench
